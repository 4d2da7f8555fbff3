"""Reading failures as one line a person can act on: what a file really is, where a CSV is ragged, which
object in a store could not be read, and a file gone while it was read."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.errors import DataError
from sigmatool.load import remote

if TYPE_CHECKING:
    from sigmatool.load.sources import Source

# Magic numbers of formats a text reader would misread.
MAGIC = {
    b"PAR1": "a parquet file",
    b"\x1f\x8b": "gzip-compressed",
    b"PK\x03\x04": "a zip archive (a torch.save checkpoint?)",
    b"\x80": "a Python pickle",
    b"(\xb5/\xfd": "zstd-compressed",
}


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def read_error(source: Source, exc: BaseException) -> DataError:
    """One line for a file polars cannot read: what the file looks like, else polars' own first line."""
    if isinstance(exc, pl.exceptions.NoDataError):
        return DataError(f"{source.label}: the file is empty")
    if source.remote and remote.is_remote_error(exc):
        return remote.describe_error(exc, source.label)
    if not source.remote:
        looks = looks_like(source)
        if looks:
            return DataError(f"{source.label}: cannot read it as {source.fmt}: the file is {looks}")
        if source.fmt in ("csv", "tsv"):
            ragged = _ragged_row(source)
            if ragged:
                return DataError(f"{source.label}: {ragged}")
    text = first_line(exc)
    if "utf-8" in text.lower():
        text += " (a binary file, or text in another encoding?)"
    if source.fmt == "parquet" and ("PAR1" in text or "out of spec" in text):
        text = "not a parquet file (no PAR1 marker: truncated, or another format?)"
    return DataError(f"{source.label}: cannot read it as {source.fmt}: {text}")


def looks_like(source: Source) -> str | None:
    """What a file that should be text (or parquet) really is, from its first bytes."""
    try:
        with open(source.path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    compressed = source.path.lower().endswith((".gz", ".zst", ".zstd"))
    for magic, what in MAGIC.items():
        expected = (source.fmt == "parquet" and magic == b"PAR1") or (
            compressed and magic in (b"\x1f\x8b", b"(\xb5/\xfd")
        )
        if head.startswith(magic) and not expected:
            return what
    if source.fmt != "parquet" and not compressed:
        if b"\x00" in head:
            return "binary, not text"
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 4:  # not just a character cut by the 4 KB window
                return "not UTF-8 text (binary, or another encoding?)"
    return None


def _ragged_row(source: Source) -> str | None:
    """The first data row whose field count differs from the header's (a second pass, only on failure)."""
    try:
        with open(source.path, newline="", encoding="utf-8", errors="replace") as handle:
            rows = csv.reader(handle, delimiter=source.separator)
            header = next(rows, None)
            if header is None:
                return None
            for number, row in enumerate(rows, start=1):
                if row and len(row) != len(header):
                    return (
                        f"row {number:,} has {len(row)} fields where the header has {len(header)} "
                        "(ragged rows; a wrong --separator?)"
                    )
    except (OSError, csv.Error):
        return None
    return None


def data_error(sources: Sequence[Source], exc: BaseException) -> DataError:
    """One line for a failure during the pass over the data (the files opened fine): a remote error or a
    file gone since names the file; anything else gives polars' first line."""
    text = str(exc)
    named = [s for s in sources if s.path in text]
    culprit = named[0] if named else sources[0] if len(sources) == 1 else None
    remote_ones = [s for s in sources if s.remote]
    if remote_ones and remote.is_remote_error(exc):
        return remote.describe_error(exc, (culprit or remote_ones[0]).label)
    if isinstance(exc, OSError):
        where = culprit.label if culprit else exc.filename or "the input"
        reason = "no such file (removed while it was read?)" if isinstance(exc, FileNotFoundError) else ""
        return DataError(f"{where}: {reason or exc.strerror or first_line(exc)}")
    return DataError(f"cannot read the input: {first_line(exc)}")

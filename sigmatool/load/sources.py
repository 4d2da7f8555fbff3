"""Finding and opening the input: DATA arguments, standard input, globs, formats, separators.

A :class:`Source` is one file (stdin is first copied to a temporary file, which :func:`opened` removes when
the run ends, however it ends) with its format. Reading problems become one :class:`DataError` line that
names the file and, where it can be found, the row and the likely cause: what a file really is (from its
first bytes), where a CSV is ragged, which object in a store could not be read, a file gone while it was
read (:func:`read_error`, :func:`data_error`).
"""

from __future__ import annotations

import contextlib
import csv
import errno
import functools
import glob
import gzip
import io
import json
import os
import shutil
import stat
import sys
import tempfile
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO, Any

import polars as pl

from sigmatool.cleanup import owned
from sigmatool.errors import DataError, UsageError, first_line
from sigmatool.load import remote
from sigmatool.load.objects import ObjectTable, object_in, object_in_text
from sigmatool.options import InputFormat, InputOptions

SAMPLE_NAME = "bigmath_solve_rates.parquet"
SAMPLE_ROWS = 215_608
SAMPLE_LABEL = "<bundled Big-Math sample>"
STDIN_LABEL = "<stdin>"
INFER_ROWS = 10_000
SNIFF_BYTES = 1 << 16
EXTENSIONS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
}
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
SEPARATORS = (",", "\t", ";", "|")


def bundled_sample() -> Path:
    """Path of the Big-Math solve-rate sample shipped inside the package."""
    return Path(str(resources.files("sigmatool") / "data" / SAMPLE_NAME))


@dataclass(frozen=True)
class Source:
    """One input file (or stdin spooled to a file) and how to read it."""

    path: str
    fmt: str
    label: str
    separator: str = ","

    @property
    def remote(self) -> bool:
        return remote.is_remote(self.path)

    @property
    def partitions(self) -> dict[str, int | float | str | None]:
        """The ``name=value`` folders of the path, values typed as polars types Hive partitions."""
        folders = (remote.key(self.path) if self.remote else self.path).replace(os.sep, "/").split("/")[:-1]
        pairs = [folder.split("=", 1) for folder in folders if "=" in folder.strip("=")]
        return {urllib.parse.unquote(name): _partition_value(value) for name, value in pairs}

    @property
    def is_pattern(self) -> bool:
        """A local path is never a pattern; a remote glob is one only when polars could not list it."""
        return self.remote and remote.has_glob(self.path)

    def storage(self) -> dict[str, Any] | None:
        """Options for polars' object-store client: the time limits (see :mod:`sigmatool.load.remote`)."""
        options = remote.options_for(self.path) if self.remote else None
        return dict(options) if options else None

    def scan(self, schema: dict[str, pl.DataType] | None = None) -> pl.LazyFrame:
        """Lazy scan. ``schema`` fixes the dtypes of the named columns (JSON: and reads only those)."""
        try:
            if self.fmt in ("csv", "tsv"):
                return pl.scan_csv(
                    self.path,
                    separator=self.separator,
                    infer_schema_length=INFER_ROWS,
                    schema_overrides=schema or None,
                    glob=self.is_pattern,
                    storage_options=self.storage(),
                )
            if self.fmt == "parquet":
                return pl.scan_parquet(self.path, glob=self.is_pattern, storage_options=self.storage())
            if self.fmt == "jsonl":
                return self._scan_ndjson(schema)
            return self._read_json(schema)
        except pl.exceptions.SchemaError:
            if self.fmt in ("json", "jsonl") and not schema:
                raise  # types polars cannot unify: the caller reads only the needed columns, as text
            raise read_error(self, pl.exceptions.SchemaError("mixed types")) from None
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise read_error(self, exc) from exc

    def _scan_ndjson(self, schema: dict[str, pl.DataType] | None) -> pl.LazyFrame:
        return pl.scan_ndjson(
            self.path, infer_schema_length=INFER_ROWS, schema=schema or None, storage_options=self.storage()
        )

    def shape(self) -> ObjectTable | None:
        """What a JSON file holding one object (not records) stands for (:mod:`sigmatool.load.objects`)."""
        if self.fmt != "json":
            return None
        if self.remote:
            return _remote_json(self.path, self.label)[1]
        return object_in(self.path, self.label)

    def _read_json(self, schema: dict[str, pl.DataType] | None) -> pl.LazyFrame:
        """A JSON array (read whole: polars has no lazy reader for one), one object standing for a table
        (see :mod:`sigmatool.load.objects`), or JSON lines in a .json file."""
        table = self.shape()
        if self.remote:
            text = _remote_json(self.path, self.label)[0]
            head = text[:4096].lstrip()
        else:
            with open(self.path, "rb") as handle:
                head = handle.read(4096).lstrip()
        if not head:
            raise pl.exceptions.NoDataError("empty")
        if table is not None:
            rows = io.BytesIO(table.ndjson())
            return pl.read_ndjson(rows, infer_schema_length=INFER_ROWS, schema=schema or None).lazy()
        if not head.startswith(b"["):
            return self._scan_ndjson(schema)
        source = io.BytesIO(text) if self.remote else self.path
        return pl.read_json(source, infer_schema_length=INFER_ROWS, schema=schema or None).lazy()


@functools.cache
def remote_schema(source: Source) -> pl.Schema:
    """An object's columns, asked of the store once per command (each ask fetches its footer again)."""
    return source.scan().collect_schema()


@functools.lru_cache(maxsize=2)
def _remote_json(url: str, label: str) -> tuple[bytes, ObjectTable | None]:
    """A remote .json file's text, fetched once while its sources are open (:func:`opened`: its shape, its
    schema and its rows each read it, and a JSON array is read whole in any case), and the table it stands
    for when it holds one object."""
    text = remote.read_text(url).encode()
    return text, object_in_text(text, label)


def csv_header(source: Source) -> list[str] | None:
    """The header fields of a local CSV or TSV file as written (duplicates and all); None otherwise."""
    if source.fmt not in ("csv", "tsv") or source.remote:
        return None
    try:
        with _open_text(source.path) as handle:
            line = handle.readline().decode("utf-8", errors="replace")
    except (OSError, EOFError):
        return None
    return next(csv.reader([line], delimiter=source.separator), [])


def _partition_value(text: str) -> int | float | str | None:
    """A partition folder's value: a whole number, else a number, else text (Spark's null marker: null)."""
    value = urllib.parse.unquote(text)
    if value == HIVE_NULL:
        return None
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def format_of(path: str, explicit: str | None) -> str:
    """The input format: explicit, else from the extension (ignoring a compression suffix)."""
    if explicit:
        return explicit
    name = path.lower()
    for suffix in (".gz", ".zst", ".zstd"):
        name = name.removesuffix(suffix)
    for ext, fmt in EXTENSIONS.items():
        if name.endswith(ext):
            return fmt
    raise UsageError(
        f"cannot tell the format of {path!r} from its extension; "
        f"pass --input-format ({'|'.join(InputFormat.__members__)})"
    )


def _open_text(path: str) -> IO[bytes]:
    """The file's bytes, decompressed when its name says gzip; zstd is not sniffed (the usual separator)."""
    lower = path.lower()
    if lower.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if lower.endswith((".zst", ".zstd")):
        return io.BytesIO(b"")
    return open(path, "rb")


def sniff_separator(path: str, fmt: str, explicit: str | None) -> tuple[str, str | None]:
    """(separator, note): explicit, else the one that splits the header line best (a note if not the usual)."""
    usual = "\t" if fmt == "tsv" else ","
    if explicit:
        return explicit, None
    try:
        with _open_text(path) as handle:
            header = handle.read(SNIFF_BYTES).split(b"\n", 1)[0].decode("utf-8", errors="replace")
    except (OSError, EOFError):
        return usual, None
    if usual in header:
        return usual, None
    counts = {sep: header.count(sep) for sep in SEPARATORS}
    best = max(counts, key=lambda sep: counts[sep])
    if counts[best] == 0:
        return usual, None
    shown = "\\t" if best == "\t" else best
    return (
        best,
        f"{os.path.basename(path)}: fields are separated by {shown!r} (detected; --separator sets it)",
    )


def _sniff_stdin_format(first: bytes) -> str:
    head = first.lstrip()
    if first.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"["):
        return "json"
    if head.startswith(b"{"):
        return "json"  # JSON lines, or one object standing for a table: told apart when read
    return "csv"


# --------------------------------------------------------------------------------------------- stdin


def stdin_has_data(stream: IO[str] | None) -> bool:
    """Whether stdin is a data stream (a pipe, a file, a socket) rather than a terminal, /dev/null or closed.

    Decided by the kind of file behind stdin, never by whether it happens to have bytes yet.
    """
    if stream is None:
        return False
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return True  # an in-memory stream (an embedding program, a test runner): it is data
    try:
        if os.isatty(fd):
            return False
        info = os.fstat(fd)
    except OSError as exc:
        if exc.errno == errno.EBADF:
            return False
        raise
    if stat.S_ISCHR(info.st_mode):
        try:
            return info.st_rdev != os.stat(os.devnull).st_rdev
        except OSError:
            return False
    return True


def _spool(stream: IO[bytes], first: bytes, folder: str) -> str:
    """Copy stdin to a file in ``folder`` in chunks, so it can be scanned lazily like any file."""
    fd, path = tempfile.mkstemp(prefix="stdin-", dir=folder)
    with os.fdopen(fd, "wb") as handle:
        handle.write(first)
        shutil.copyfileobj(stream, handle, length=1 << 20)
    return path


def _stdin_bytes() -> IO[bytes]:
    stream = sys.stdin
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        return buffer  # type: ignore[no-any-return]
    return io.BytesIO(stream.read().encode())


def _stdin_source(options: InputOptions, folder: str) -> Source:
    stream = _stdin_bytes()
    first = stream.read(SNIFF_BYTES)
    if not first:
        raise DataError(
            "standard input is empty: nothing to analyse (did the command before the pipe match nothing?). "
            "With no DATA and no pipe, sigmatool reads the bundled Big-Math sample"
        )
    fmt = options.input_format or _sniff_stdin_format(first)
    path = _spool(stream, first, folder)
    separator = options.separator or ("\t" if fmt == "tsv" else ",")
    if fmt in ("csv", "tsv") and options.separator is None:
        separator, _ = sniff_separator(path, fmt, None)
    return Source(path, fmt, STDIN_LABEL, separator)


# --------------------------------------------------------------------------------------------- files


def _check_file(path: str) -> None:
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DataError(f"{path}: a symbolic link loop") from None
        if exc.errno == errno.ENOENT:
            raise DataError(f"{path}: no such file") from None
        raise DataError(f"{path}: cannot open it: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise DataError(f"{path}: is a folder; give the files in it, e.g. '{path}/*.parquet'")
    if not os.access(path, os.R_OK):
        raise DataError(f"{path}: cannot open it: permission denied")


def _remote_sources(arg: str, options: InputOptions) -> list[Source]:
    """One source per object a URL names; the separator is not sniffed (that would be one more request)."""
    sources = []
    for url in remote.expand(arg):
        fmt = format_of(url, options.input_format)
        separator = options.separator or ("\t" if fmt == "tsv" else ",")
        sources.append(Source(url, fmt, url, separator))
    return sources


def _file_sources(arg: str, options: InputOptions) -> tuple[list[Source], list[str]]:
    if remote.is_remote(arg):
        return _remote_sources(arg, options), []
    matches = sorted(glob.glob(arg)) if glob.has_magic(arg) else [arg]
    if not matches:
        raise DataError(f"{arg}: no file matches this pattern")
    sources, notes = [], []
    for match in matches:
        _check_file(match)
        fmt = format_of(match, options.input_format)
        looks = looks_like(Source(match, fmt, match))
        if looks:
            raise DataError(f"{match}: cannot read it as {fmt}: the file is {looks}")
        separator = "\t" if fmt == "tsv" else ","
        if fmt in ("csv", "tsv"):
            separator, note = sniff_separator(match, fmt, options.separator)
            notes += [note] if note else []
        sources.append(Source(match, fmt, match, separator))
    return sources, notes


@contextlib.contextmanager
def opened(options: InputOptions) -> Iterator[tuple[list[Source], list[str]]]:
    """The sources the DATA arguments name, and notes about them; stdin's spooled copy is removed on exit.

    With no DATA, stdin is read when it is a pipe or a file; on a terminal, /dev/null or a closed stdin
    the bundled Big-Math sample is used, and a note says so.
    """
    make = functools.partial(tempfile.mkdtemp, prefix="sigmatool-")
    with owned(make, functools.partial(shutil.rmtree, ignore_errors=True)) as folder:
        notes: list[str] = []
        sources: list[Source] = []
        if options.engine != "polars":
            options.check_engine_paths()
        if options.table is not None:
            from sigmatool.load.engine import table_schema

            path = os.path.join(folder, "table.parquet")
            table_schema(options).write_parquet(path)
            yield [Source(path, "parquet", f"table {options.table}")], []
            return
        if not options.paths:
            if stdin_has_data(sys.stdin):
                sources.append(_stdin_source(options, folder))
            else:
                notes.append(
                    f"no DATA given: reading the bundled Big-Math sample ({SAMPLE_ROWS:,} prompts, "
                    "llama8b_solve_rate); pass a file or pipe one in to analyse your own data"
                )
                sources.append(Source(str(bundled_sample()), "parquet", SAMPLE_LABEL))
        for arg in options.paths:
            if arg == "-":
                sources.append(_stdin_source(options, folder))
                continue
            found, found_notes = _file_sources(arg, options)
            sources += found
            notes += found_notes
        try:
            yield sources, [*notes, *_shape_notes(sources)]
        finally:
            _remote_json.cache_clear()  # a later command reads the object as it is then
            remote_schema.cache_clear()


def _shape_notes(sources: Sequence[Source]) -> list[str]:
    """What each JSON file holding one object was read as (raises when it stands for no table)."""
    notes = []
    for source in sources:
        try:
            shape = source.shape()
        except OSError:
            continue  # named when the file is read
        if shape is not None and shape.note:
            notes.append(shape.note)
    return notes


def sample_options(options: InputOptions | None = None) -> InputOptions:
    """The input options that read the bundled sample (the other options kept)."""
    base = options or InputOptions()
    return InputOptions(**{**base.__dict__, "paths": (str(bundled_sample()),)})


def parquet_rows(sources: Sequence[Source]) -> int | None:
    """Input rows, when the files say so without being read (local parquet metadata); else None."""
    if not all(source.fmt == "parquet" and not source.remote for source in sources):
        return None
    try:
        return sum(int(pl.scan_parquet(s.path).select(pl.len()).collect().item()) for s in sources)
    except pl.exceptions.PolarsError:
        return None


# --------------------------------------------------------------------------------------------- failures

# Magic numbers of formats a text reader would misread.
MAGIC = {
    b"PAR1": "a parquet file",
    b"\x1f\x8b": "gzip-compressed",
    b"PK\x03\x04": "a zip archive (a torch.save checkpoint?)",
    b"\x80": "a Python pickle",
    b"(\xb5/\xfd": "zstd-compressed",
}


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
    if not compressed and len(head) < 4096 and not head.strip():
        return "empty (no rows: a run that wrote nothing yet, or a failed export?)"
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


def source_schema(source: Source) -> tuple[pl.Schema, bool]:
    """The source's columns, and whether they could only be listed (JSON whose types polars cannot unify).

    In that case only the needed columns are read later, as text, so that an unused column mixing lists
    and numbers does no harm.
    """
    try:
        return (remote_schema(source) if source.remote else source.scan().collect_schema()), False
    except pl.exceptions.SchemaError as exc:
        if source.fmt not in ("json", "jsonl") or source.remote:
            # An object is not read twice (once for its keys) to work around a column polars cannot type.
            raise read_error(source, exc) from exc
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise read_error(source, exc) from exc
    return pl.Schema(dict.fromkeys(_json_keys(source.path), pl.String())), True


def _json_keys(path: str) -> list[str]:
    """Keys of the first objects of a JSON-lines file or JSON array, in order of appearance."""
    keys: dict[str, None] = {}
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read(1 << 20)
    stripped = text.lstrip()
    if stripped.startswith("["):
        with open(path, encoding="utf-8") as handle:
            objects = json.load(handle)[:1000]
    else:
        objects = []
        for line in stripped.splitlines()[:1000]:
            try:
                objects.append(json.loads(line))
            except json.JSONDecodeError:
                break
    for obj in objects:
        if isinstance(obj, dict):
            keys.update(dict.fromkeys(obj))
    return list(keys)

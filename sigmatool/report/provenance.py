"""Where a report came from: the sigmatool version, the command line, each input file with its size and
SHA-256, and the time it was made.

The time is the current UTC time, or ``SOURCE_DATE_EPOCH`` (seconds since 1970, the reproducible-builds
convention) when it is set, so that a committed example is the same file on every run.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from sigmatool import __version__

CHUNK = 1 << 20


@dataclass(frozen=True)
class InputFile:
    """One file read: its name as the report shows it, its size in bytes and its SHA-256 (None: remote)."""

    name: str
    size: int | None
    sha256: str | None


@dataclass(frozen=True)
class Provenance:
    """What made a report."""

    version: str
    command: str | None  # the command line, when the report came from one
    inputs: tuple[InputFile, ...]
    made: str  # ISO 8601, UTC

    def rows(self) -> list[tuple[str, str]]:
        """(name, value) pairs for the page, the inputs apart."""
        rows = [("sigmatool", self.version)]
        if self.command is not None:
            rows.append(("command", self.command))
        return [*rows, ("made", self.made)]


def checked(name: str, path: str) -> InputFile:
    """A local file's size and SHA-256, read in chunks; a remote one (``s3://…``) is named only."""
    if "://" in path or not os.path.isfile(path):
        return InputFile(name, None, None)
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return InputFile(name, os.path.getsize(path), digest.hexdigest())


def made_at() -> str:
    """Now in UTC to the second, or the time ``SOURCE_DATE_EPOCH`` gives."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    moment = (
        datetime.fromtimestamp(int(epoch), timezone.utc) if epoch.isdigit() else datetime.now(timezone.utc)
    )
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def provenance(inputs: Sequence[InputFile], command: str | None = None) -> Provenance:
    """The provenance of a report made now from ``inputs`` (each file once, in order)."""
    unique = tuple(dict.fromkeys(inputs))
    return Provenance(__version__, command, unique, made_at())

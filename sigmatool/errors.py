"""Exception types and exit codes. The core raises these; only ``sigmatool.cli.main`` turns them into exits."""

from __future__ import annotations

import errno
import signal
from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes, documented in the README. A signal N ends the run with 128 + N."""

    OK = 0
    DATA = 1
    USAGE = 2
    INTERRUPTED = 130


class SigmaError(Exception):
    """Base class: a problem a person can fix, with a message written for them."""

    exit_code: ExitCode = ExitCode.DATA


class DataError(SigmaError):
    """The input data is unusable as given: missing column, bad value, unreadable file."""

    exit_code = ExitCode.DATA


class OutputError(SigmaError):
    """An output cannot be written: a read-only folder, a full disk, a path that is not a file."""

    exit_code = ExitCode.DATA


class UsageError(SigmaError):
    """An option is impossible on its own or with the others or the data."""

    exit_code = ExitCode.USAGE


class Interrupted(BaseException):
    """A termination signal (SIGTERM, SIGHUP) arrived: unwind, clean up, exit 128 + the signal number.

    A ``BaseException``, like ``KeyboardInterrupt``, so that no ``except Exception`` swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def __str__(self) -> str:
        try:
            return f"interrupted by {signal.Signals(self.signum).name}"
        except ValueError:
            return f"interrupted by signal {self.signum}"


def first_line(exc: BaseException) -> str:
    """An exception's first line of text (its type's name when it has none): what a one-line error quotes."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def is_broken_pipe(exc: BaseException) -> bool:
    """A closed pipe (``| head``): an OSError with EPIPE, or a polars error carrying the OS's text."""
    if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
        return True
    text = str(exc)
    return "Broken pipe" in text or "os error 32" in text

"""Exception types and exit codes. The core raises these; only ``cli.py`` turns them into exits."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes, documented in the README."""

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


class UsageError(SigmaError):
    """An option is impossible on its own or with the others or the data."""

    exit_code = ExitCode.USAGE

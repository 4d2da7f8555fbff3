"""Where output goes: stdout, or a file written atomically with the permissions a user expects.

A file is written to a temporary ``.part`` file beside it and renamed over it only when complete, so a
failed or interrupted run leaves the previous file untouched and no partial file behind. A new file
follows the umask (0644 under umask 022); a replaced file keeps its mode. A symbolic link stays: the file
it names is replaced. A pipe or a character device cannot be replaced: it is written directly.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from sigmatool.cleanup import owned
from sigmatool.errors import OutputError
from sigmatool.options import NOT_WRITABLE, check_folder, written_in_place

_UMASK: list[int] = []


def umask() -> int:
    """The process umask (read once: reading it means setting it)."""
    if not _UMASK:
        mask = os.umask(0o022)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]


def _mode_for(path: str, option: str) -> int | None:
    """The permission bits the written file gets: the existing file's, else 0666 less the umask; None for a
    pipe or a character device (``/dev/null``, a shell's ``>(…)``), written in place."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return 0o666 & ~umask()
    except OSError as exc:
        raise OutputError(f"{option} {path}: {exc.strerror}") from None
    if written_in_place(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(f"{option} {path}: {NOT_WRITABLE}")
    if not os.access(path, os.W_OK):
        raise OutputError(f"{option} {path}: cannot write it: permission denied")
    return stat.S_IMODE(info.st_mode)


@contextlib.contextmanager
def target(output: str | None, binary: bool, option: str = "-o") -> Iterator[IO[Any]]:
    """Yield a handle for the output: stdout, or a temporary file renamed over ``output`` on success."""
    if not output or output == "-":
        if binary:
            sys.stdout.flush()  # what was printed as text goes first
        yield sys.stdout.buffer if binary else sys.stdout
        sys.stdout.flush()
        return
    check_folder(output, option)
    mode = _mode_for(output, option)
    if mode is None:
        with _in_place(output, binary, option) as handle:
            yield handle
        return
    # Through a symbolic link the file it names is replaced, not the link (nor /dev/stdout, which is one).
    real = os.path.realpath(output)
    folder = check_folder(real, option)

    def make() -> tuple[int, str]:
        return tempfile.mkstemp(prefix=".sigmatool-", suffix=".part", dir=folder)

    try:
        with owned(make, _discard) as (fd, tmp):
            os.fchmod(fd, mode)
            handle = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
            with handle:
                yield handle
            os.replace(tmp, real)
    except OSError as exc:
        raise OutputError(f"{option} {output}: cannot write it: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _in_place(output: str, binary: bool, option: str) -> Iterator[IO[Any]]:
    """A pipe or a device cannot be replaced: it is written directly. A reader that left (a closed pipe) is
    not an error here: the command line ends quietly on it, as on ``| head``."""
    try:
        with open(output, "wb") if binary else open(output, "w", encoding="utf-8", newline="") as handle:
            yield handle
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"{option} {output}: cannot write it: {exc.strerror or exc}") from None


def _discard(made: tuple[int, str]) -> None:
    """Remove the temporary file unless it was renamed over the output."""
    with contextlib.suppress(OSError):
        os.unlink(made[1])

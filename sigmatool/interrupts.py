"""Ctrl-C before the command line handles it: the run ends at once, exit code 130, one word, no traceback.

The package's first lines call :func:`quiet` when it is imported as the command line (the console script, or
``python -m sigmatool``), so that importing it, and then typer, polars and rich, is covered; what comes before
is the interpreter's own start-up. :func:`sigmatool.cli.main` then makes a Ctrl-C raise KeyboardInterrupt,
which it maps to exit 130 once a run's temporary files are removed.

Imported first of all: only what start-up has loaded already (``_signal`` is the interpreter's own module
under ``signal``, which would import enum first), and no ``from __future__`` import, which would import a
module of its own.
"""

import _signal  # type: ignore[import-not-found]  # no stub: it is signal's C half
import os
import sys

# The exit code of a run ended by Ctrl-C (sigmatool.errors.ExitCode.INTERRUPTED, not imported: it is heavier).
INTERRUPTED = 130


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C before the command line handles it: nothing is written yet, so the run ends here."""
    os.write(2, b"interrupted\n")
    os._exit(INTERRUPTED)


def quiet() -> None:
    """From now until the command line takes Ctrl-C over, a Ctrl-C ends the run at once (exit code 130)."""
    threading = sys.modules.get("threading")
    if threading is None or threading.current_thread() is threading.main_thread():  # signals: main only
        _signal.signal(_signal.SIGINT, _interrupted)


def as_command_line(argv: list[str]) -> bool:
    """Whether the package is being imported to run the command line: by the console script (its path
    ends in ``sigmatool``), or by ``python -m sigmatool`` while it is located (``-m``).

    >>> as_command_line(["/usr/local/bin/sigmatool", "silent"]), as_command_line(["-m"]), as_command_line([""])
    (True, True, False)
    """
    first = argv[0] if argv else ""
    return first == "-m" or first.replace("\\", "/").rsplit("/", 1)[-1] in ("sigmatool", "sigmatool.exe")

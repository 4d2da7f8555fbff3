"""The ``sigmatool`` console script: as little as possible runs before Ctrl-C is handled."""

# Imported first of all by the command line (sigmatool/__init__.py): only what start-up has loaded already
# (``_signal`` is the interpreter's own module under ``signal``, which would import enum first), and no
# ``from __future__`` import, which would import a module of its own.
import _signal  # type: ignore[import-not-found]  # no stub: it is signal's C half
import gc
import os
import sys
from collections.abc import MutableMapping

# The exit code of a run ended by Ctrl-C (sigmatool.errors.ExitCode.INTERRUPTED, not imported: it is heavier).
INTERRUPTED = 130


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C before the command line handles it: nothing is written yet, so the run ends here."""
    os.write(2, b"interrupted\n")
    os._exit(INTERRUPTED)


def quiet_interrupts() -> None:
    """Until the command line takes Ctrl-C over (:func:`sigmatool.cli.main`), a Ctrl-C ends the run at
    once with exit code 130 and no traceback. Called as the package is imported by the console script or
    ``python -m sigmatool`` (sigmatool/__init__.py), so that importing it, and then typer, polars and rich,
    is covered; what comes before is the interpreter's own start-up."""
    if threading_main():
        _signal.signal(_signal.SIGINT, _interrupted)


def threading_main() -> bool:
    """Whether this is the main thread, the only one that may set a signal handler."""
    threading = sys.modules.get("threading")
    return threading is None or threading.current_thread() is threading.main_thread()


def _version() -> int:
    """``sigmatool --version`` answered before typer, click and rich load (they would triple its time)."""
    from sigmatool import __version__

    try:
        sys.stdout.write(f"sigmatool {__version__}\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # A reader that left early is not an error; devnull keeps the final flush from failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


# The prior's fits and the bounds multiply matrices of a few dozen rows by a few hundred columns, thousands
# of times: OpenBLAS's threads cost more to wake than they save there, and on a busy 2-core machine they made
# `silent --prior npmle` 2 to 3 times slower (3.5 s against 8.5-11 s, CPU 1.0 s against 2.5-3.6 s; bench/README.md).
BLAS_THREADS = "OPENBLAS_NUM_THREADS"


def single_threaded_blas(environ: MutableMapping[str, str] | None = None) -> None:
    """One OpenBLAS thread unless the user chose a number; call it before numpy is imported."""
    env = os.environ if environ is None else environ
    env.setdefault(BLAS_THREADS, "1")


def run() -> None:
    """Import the command line and run it; a Ctrl-C during start-up exits 130 without a traceback."""
    quiet_interrupts()
    if sys.argv[1:] == ["--version"]:
        raise SystemExit(_version())
    from sigmatool import memory

    memory.set_default()  # before polars is imported: it reads its settings once
    single_threaded_blas()  # before numpy is imported, likewise
    # Start-up makes hundreds of thousands of long-lived objects (the modules of polars, numpy, typer);
    # collecting garbage among them costs tens of milliseconds and frees nothing. The collector is off
    # until a command starts its work (sigmatool.cli.run.check), which freezes what exists and resumes it.
    gc.disable()
    from sigmatool.cli import main

    raise SystemExit(main())

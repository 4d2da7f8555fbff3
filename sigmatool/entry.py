"""The ``sigmatool`` console script: as little as possible runs before Ctrl-C is handled."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import MutableMapping

from sigmatool import interrupts


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
    interrupts.quiet()
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

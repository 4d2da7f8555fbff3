"""The ``sigmatool`` console script: as little as possible runs before Ctrl-C is handled."""

from __future__ import annotations

import gc
import os
import sys


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


def run() -> None:
    """Import the command line and run it; a Ctrl-C during start-up exits 130 without a traceback."""
    if sys.argv[1:] == ["--version"]:
        raise SystemExit(_version())
    from sigmatool import memory

    memory.set_default()  # before polars is imported: it reads its settings once
    # Start-up makes hundreds of thousands of long-lived objects (the modules of polars, numpy, typer);
    # collecting garbage among them costs tens of milliseconds and frees nothing. The collector is off
    # until a command starts its work (sigmatool.cli.run.check), which freezes what exists and resumes it.
    gc.disable()
    try:
        from sigmatool.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    raise SystemExit(main())

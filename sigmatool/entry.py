"""The ``sigmatool`` console script: as little as possible runs before Ctrl-C is handled."""

from __future__ import annotations

import sys


def run() -> None:
    """Import the command line and run it; a Ctrl-C during start-up exits 130 without a traceback."""
    try:
        from sigmatool.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    raise SystemExit(main())

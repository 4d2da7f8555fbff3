"""The command line: a typer app whose commands load, compute and render, and the one place errors end.

Each command is a module of this package that registers itself on the app (:mod:`.app`) when imported
(:mod:`.commands`); :func:`main` (:mod:`.exits`) maps every way a run can end to its exit code.
"""

from __future__ import annotations

from sigmatool.cli.app import app
from sigmatool.cli.commands import COMMANDS
from sigmatool.cli.exits import main

__all__ = ["COMMANDS", "app", "main"]

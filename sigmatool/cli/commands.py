"""The commands: each a module of this package that registers itself on the app when imported, and the
click group of the command a run names (:func:`_group`)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import click
import typer

from sigmatool.cli.app import app

# Each command is a module of this package that registers itself on the app when imported.
COMMANDS = (
    "budget",
    "check",
    "curriculum",
    "export",
    "graders",
    "groupsize",
    "plan",
    "preflight",
    "report",
    "silent",
    "simulate",
    "sql",
    "track",
)


def _register(names: Sequence[str]) -> None:
    for name in names:
        importlib.import_module(f"sigmatool.cli.{name}")


def _group(args: Sequence[str]) -> click.Command:
    """The app as a click group; when a command is named first, a group of that command alone: importing
    every command and building its options takes longer than a small run."""
    _register([args[0]] if args and args[0] in COMMANDS else COMMANDS)
    named = [c for c in app.registered_commands if args and c.name == args[0]]
    if not named:
        return typer.main.get_command(app)
    every = app.registered_commands
    app.registered_commands = named
    try:
        return typer.main.get_command(app)
    finally:
        app.registered_commands = every

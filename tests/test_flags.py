"""One glossary of flags: a flag name has one type, range, default and meaning in every command.

Read off the typer app as click builds it, so the test sees what a user sees; a renamed flag's old spelling
is a hidden option that stops with a usage error naming the new one.
"""

from __future__ import annotations

from collections import defaultdict

import click
import pytest
import typer

from sigmatool.cli import COMMANDS, _register, app
from tests.conftest import TOY, invoke

# A flag's meaning, as far as the app can tell: its type (with choices or range), default, arity and help.
Meaning = tuple[str, object, bool, bool, bool, object, object]


def _type(option: click.Option) -> str:
    kind = option.type
    text = type(kind).__name__
    if isinstance(kind, click.Choice):
        text += f"{list(kind.choices)}"
    if isinstance(kind, click.IntRange | click.FloatRange):
        text += f"[{kind.min}, {kind.max}]"
    return text


def _meaning(option: click.Option) -> Meaning:
    default = getattr(option.default, "value", option.default)
    return (
        _type(option),
        default,
        option.multiple,
        option.is_flag,
        option.required,
        option.show_default,
        option.help,
    )


def _commands(command: click.Command, path: str = "") -> list[tuple[str, click.Command]]:
    if isinstance(command, click.Group):
        return [c for name, sub in command.commands.items() for c in _commands(sub, f"{path} {name}".strip())]
    return [(path, command)]


def _glossary() -> dict[str, dict[Meaning, list[str]]]:
    """Each visible flag name → its meanings → the commands that give it that meaning."""
    _register(COMMANDS)
    seen: dict[str, dict[Meaning, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name, command in _commands(typer.main.get_command(app)):
        for option in command.params:
            if isinstance(option, click.Option) and not option.hidden:
                for flag in (*option.opts, *option.secondary_opts):
                    seen[flag][_meaning(option)].append(name)
    return seen


def test_every_flag_has_one_meaning_in_every_command() -> None:
    conflicts = {
        flag: {" ".join(map(str, meaning[:6])): commands for meaning, commands in meanings.items()}
        for flag, meanings in _glossary().items()
        if len(meanings) > 1
    }
    assert {} == conflicts


def test_the_glossary_sees_the_shared_flags() -> None:
    shared = {flag for flag, meanings in _glossary().items() if sum(map(len, meanings.values())) > 1}
    assert {"--G", "--bins", "--fidelity", "--method", "--std", "--seed", "--prior"} <= shared


# (command, the old spelling with a value, the flag that replaces it)
RENAMED = [
    ("groupsize", ["--objective", "drgrpo"], "--method"),
    ("silent", ["--bins", "5"], "--by-bins"),
    ("track", ["--steps", "1..2"], "--export-steps"),
    ("report", ["--format", "md"], "-o"),
    ("report", ["-f", "md"], "-o"),
]


@pytest.mark.parametrize(("command", "old", "new"), RENAMED)
def test_a_renamed_flag_is_a_usage_error(command: str, old: list[str], new: str) -> None:
    assert 2 == invoke(command, TOY, *old).exit_code


@pytest.mark.parametrize(("command", "old", "new"), RENAMED)
def test_a_renamed_flag_names_its_new_spelling(command: str, old: list[str], new: str) -> None:
    assert new in invoke(command, TOY, *old).stderr

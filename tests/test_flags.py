"""One glossary of flags: a flag name has one type, range, default and meaning in every command.

Read off the typer app as click builds it, so the test sees what a user sees; a renamed flag's old spelling
is a hidden option that stops with a usage error naming the new one.
"""

from __future__ import annotations

from collections import defaultdict

import click
import pytest
import typer

from sigmatool.cli import COMMANDS, app
from sigmatool.cli.commands import _register
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


def _visible_options() -> list[tuple[str, click.Option]]:
    _register(COMMANDS)
    return [
        (name, option)
        for name, command in _commands(typer.main.get_command(app))
        for option in command.params
        if isinstance(option, click.Option) and not option.hidden
    ]


def test_only_free_text_is_shown_as_text() -> None:
    # A choice shows its choices ([a|b|c]); a column, a file or a list says so (COL, FILE, SIZES).
    context = click.Context(click.Command("sigmatool"))
    text = {option.opts[0] for _, option in _visible_options() if option.make_metavar(context) == "TEXT"}
    assert {"--title"} == text


def test_a_choice_shows_its_choices_in_brackets() -> None:
    context = click.Context(click.Command("sigmatool"))
    choices = [o for _, o in _visible_options() if isinstance(o.type, click.Choice)]
    shown = {o.opts[0]: o.make_metavar(context) for o in choices}
    assert {o.opts[0]: f"[{'|'.join(map(str, o.type.choices))}]" for o in choices} == shown


def test_a_default_is_given_in_its_brackets_not_in_the_help_text() -> None:
    # One way to show a default: [default: X] (show_default); the help's words never say it again.
    said = {option.opts[0] for _, option in _visible_options() if "default" in (option.help or "").lower()}
    assert set() == said


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

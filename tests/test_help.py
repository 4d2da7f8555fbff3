"""Help that reads at a glance, and hints for the common slips at the command line."""

from __future__ import annotations

import re

import click
import pytest
import typer

from sigmatool.cli import COMMANDS, app
from sigmatool.cli.commands import _register
from sigmatool.errors import ExitCode
from tests.conftest import TOY, invoke, one_error_line


def test_a_mistyped_command_names_the_close_commands_once() -> None:
    assert 1 == invoke("silnt").stderr.count("Did you mean")


def test_a_mistyped_command_names_the_closest_command() -> None:
    assert "'silent'" in one_error_line(invoke("silnt").stderr)


def test_a_mistyped_command_points_to_the_general_help() -> None:
    assert one_error_line(invoke("silnt").stderr).endswith("(see 'sigmatool --help')")


def test_a_mistyped_option_points_to_its_commands_help() -> None:
    assert one_error_line(invoke("silent", "--Gx", "4").stderr).endswith("(see 'sigmatool silent --help')")


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["silent", "--G", "4", "8"], "--G 4,8"),
        (["silent", TOY, "-G", "4", "8", "16"], "-G 4,8,16"),
        (["budget", "--group-size", "8", "inf"], "--group-size 8,inf"),
        (["plan", "--budget", "8", "--sizes", "4", "8"], "--sizes 4,8"),
        (["silent", "--G=4", "8"], "--G 4,8"),
    ],
)
def test_space_separated_sizes_point_to_the_comma_list(args: list[str], hint: str) -> None:
    assert hint in one_error_line(invoke(*args).stderr)


def test_space_separated_sizes_are_a_usage_error() -> None:
    assert int(ExitCode.USAGE) == invoke("silent", "--G", "4", "8").exit_code


# --------------------------------------------------------------------------------------------- the help


@pytest.fixture(scope="module")
def helps() -> dict[tuple[str, str], str]:
    """Each command's --help and --help-all as printed at 80 columns."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "80")
        return {(c, flag): invoke(c, flag).stdout for c in COMMANDS for flag in ("--help", "--help-all")}


def _visible_flags(command: str) -> list[str]:
    _register([command])
    group = typer.main.get_command(app)
    assert isinstance(group, click.Group)
    options = [p for p in group.commands[command].params if isinstance(p, click.Option) and not p.hidden]
    return [flag for option in options for flag in (*option.opts, *option.secondary_opts)]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_help_fits_60_lines_at_80_columns(command: str, helps: dict[tuple[str, str], str]) -> None:
    assert 60 >= len(helps[command, "--help"].splitlines())


@pytest.mark.parametrize("flag", ["--help", "--help-all"])
@pytest.mark.parametrize("command", COMMANDS)
def test_no_help_line_is_wider_than_80_columns(
    command: str, flag: str, helps: dict[tuple[str, str], str]
) -> None:
    assert [] == [line for line in helps[command, flag].splitlines() if len(line) > 80]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_help_points_to_the_whole_help(command: str, helps: dict[tuple[str, str], str]) -> None:
    assert f"sigmatool {command} --help-all" in helps[command, "--help"]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_whole_help_lists_every_flag(command: str, helps: dict[tuple[str, str], str]) -> None:
    words = set(re.findall(r"-[-\w]+", helps[command, "--help-all"]))
    assert [] == [flag for flag in _visible_flags(command) if flag not in words]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_help_leaves_out_the_rarely_used_input_options(
    command: str, helps: dict[tuple[str, str], str]
) -> None:
    assert "--input-format" not in helps[command, "--help"]


def test_the_help_shows_the_shared_input_options() -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "80")
        text = invoke("silent", "--help").stdout
    assert [] == [flag for flag in ("DATA", "--col", "--samples", "--format", "--output") if flag not in text]


def test_plan_help_shows_the_budget_before_the_shared_options(helps: dict[tuple[str, str], str]) -> None:
    text = helps["plan", "--help"]
    assert text.index("--budget") < text.index("--format")


def test_the_help_shows_the_options_the_examples_use(helps: dict[tuple[str, str], str]) -> None:
    assert "--reward-col" in helps["sql", "--help"]


def test_the_whole_help_comes_before_any_option_is_checked() -> None:
    assert 0 == invoke("silent", "--estimator", "nonsense", "--help-all").exit_code


def test_the_whole_help_gives_the_whole_description(helps: dict[tuple[str, str], str]) -> None:
    assert "DAPO's shares equal GRPO's" in " ".join(helps["budget", "--help-all"].split())


def test_a_choice_shows_its_choices_in_brackets(helps: dict[tuple[str, str], str]) -> None:
    assert "--estimator [auto|plugin|unbiased]" in helps["silent", "--help"]


def test_a_default_is_shown_in_brackets(helps: dict[tuple[str, str], str]) -> None:
    assert "[default: 4,8,16,32]" in helps["plan", "--help"]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_help_line_never_breaks_a_word_at_its_hyphen(
    command: str, helps: dict[tuple[str, str], str]
) -> None:
    lines = helps[command, "--help-all"].splitlines()
    assert [] == [line for line in lines if re.search(r"\w-$", line)]

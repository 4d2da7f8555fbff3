"""Help that reads at a glance, and hints for the common slips at the command line."""

from __future__ import annotations

import pytest

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
    ],
)
def test_space_separated_sizes_point_to_the_comma_list(args: list[str], hint: str) -> None:
    assert hint in one_error_line(invoke(*args).stderr)


def test_space_separated_sizes_are_a_usage_error() -> None:
    assert int(ExitCode.USAGE) == invoke("silent", "--G", "4", "8").exit_code

"""Reach: every command that takes ``--estimator`` or ``--prior`` answers differently when it is given.

The commands and their options are read off the app as click builds it: a command that gains either option
must be given a run here (the first test fails until it is), and then each value must move its answer. Two
outputs of one command agreeing would not show this: a command that ignored the option would agree too.
Every run is on Big-Math's 8-of-64 sample (k of n = 8) at group sizes within the 8 samples, where the
default (unbiased), the plug-in and the NPMLE prior's posterior means are three different numbers.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import click
import pytest
import typer

from sigmatool.cli import COMMANDS, _register, app
from tests.conftest import SAMPLE, invoke

EIGHT = (SAMPLE / "bigmath_8_samples.csv", "--k-col", "k", "--n-col", "n", "--weight-col", "count")
VERL = (SAMPLE / "example_run", "--from", "verl")

# Each command's run: its arguments (within the 8 samples) and the output whose numbers must move.
RUNS: dict[str, tuple[object, ...]] = {
    "silent": ("silent", *EIGHT, "--G", "4"),
    "budget": ("budget", *EIGHT, "--G", "4"),
    "groupsize": ("groupsize", *EIGHT),
    "plan": ("plan", *EIGHT, "--budget", "4", "--sizes", "2,4,8"),
    "preflight": ("preflight", *EIGHT, "--n", "8"),
    "curriculum": ("curriculum", *EIGHT, "--G", "4", "--batch-size", "64", "--steps", "3"),
    "track": ("track", *VERL),
    "report": ("report", *EIGHT),
}
# The values each option takes in the runs: every pair of them must give different numbers.
VALUES = {
    "--estimator": ([], ["--estimator", "plugin"]),
    "--prior": ([], ["--prior", "npmle"]),
}
NUMBER = re.compile(r"\d+\.\d+")


def _commands() -> dict[str, click.Command]:
    _register(COMMANDS)
    group = typer.main.get_command(app)
    assert isinstance(group, click.Group)
    return dict(group.commands)


def _takes(command: click.Command, flag: str) -> bool:
    return any(flag in p.opts for p in command.params if isinstance(p, click.Option))


CASES = [(name, flag) for name, command in _commands().items() for flag in VALUES if _takes(command, flag)]


def test_every_command_that_takes_an_estimator_or_prior_has_a_run() -> None:
    assert sorted({name for name, _ in CASES}) == sorted(RUNS)


@cache
def _numbers(run: tuple[object, ...], extra: tuple[str, ...], folder: Path) -> tuple[str, ...]:
    """The numbers a run prints (the report: those of its page, without its provenance)."""
    if run[0] == "report":
        page = folder / f"report{abs(hash(extra))}.md"
        result = invoke(*run, *extra, "-o", page)
        assert 0 == result.exit_code, result.stderr
        return tuple(NUMBER.findall(page.read_text().split("## Provenance")[0]))
    result = invoke(*run, *extra, "--format", "csv")
    assert 0 == result.exit_code, result.stderr
    return tuple(NUMBER.findall(result.stdout))


@pytest.mark.parametrize(("name", "flag"), CASES, ids=[f"{n} {f}" for n, f in CASES])
def test_the_option_moves_the_answer(name: str, flag: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.getbasetemp()
    default, given = (_numbers(RUNS[name], tuple(v), folder) for v in VALUES[flag])
    assert default != given

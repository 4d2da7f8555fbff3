"""Every command's help ends with examples that run on the bundled sample data, as a user would type them."""

from __future__ import annotations

import importlib
import inspect
import re
import shlex
from pathlib import Path

import pytest

from sigmatool.cli import COMMANDS
from tests.conftest import ROOT, invoke

EXAMPLE = re.compile(r"^ {4}(sigmatool [a-z]+ .*)$", re.MULTILINE)
# What a quick run of each example adds: a data format instead of a table, and a short simulation.
QUICK = {"simulate": ("--steps", "2")}


def _examples(command: str) -> list[str]:
    module = importlib.import_module(f"sigmatool.cli.{command}")
    return EXAMPLE.findall(inspect.getdoc(getattr(module, f"{command}_command")) or "")


CASES = [(command, line) for command in COMMANDS for line in _examples(command)]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_an_example(command: str) -> None:
    assert [] != _examples(command)


@pytest.mark.parametrize(("command", "line"), CASES, ids=[line for _, line in CASES])
def test_the_help_example_runs_on_the_sample_data(
    command: str, line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    args = shlex.split(line)[1:]
    as_data = (
        [] if "-o" in args or command in ("sql", "export") else ["--format", "csv"]
    )  # export: trainers' formats
    result = invoke(*args, *as_data, *QUICK.get(command, ()))
    assert 0 == result.exit_code, result.stderr


@pytest.mark.parametrize(("command", "line"), CASES, ids=[line for _, line in CASES])
def test_the_help_example_fits_80_columns(command: str, line: str) -> None:
    assert 76 >= len(line)

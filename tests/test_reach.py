"""Reach: every command that takes ``--estimator`` or ``--prior`` answers differently when it is given.

The commands and their options are read off the app as click builds it: a command that gains either option
must be given a run here (the first test fails until it is), and then each value must move its answer. Two
outputs of one command agreeing would not show this: a command that ignored the option would agree too.
Every run is on Big-Math's 8-of-64 sample (k of n = 8) at group sizes within the 8 samples, where the
default (unbiased), the plug-in and the NPMLE prior's posterior means are three different numbers.

Every warning reaches every format: what an answer says of its numbers' trust (``warnings()`` of its result,
sigmatool.shown) is in the table's headline, and on stderr with CSV and JSON, which have no headline; for
rows written as they are (per-prompt output) on stderr in every format. One run per kind of result that
warns, each with the warning it must carry.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import click
import pytest
import typer

from sigmatool.cli import COMMANDS, app
from sigmatool.cli.commands import _register
from tests.conftest import SAMPLE, headline, invoke

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


# --------------------------------------------------------------------------------------------- warnings

BIASED = "The plug-in p̂ is biased at G > n = 8 samples (it reads a never-solved prompt as impossible)"
PLUGIN = ("--estimator", "plugin")
TOY = SAMPLE / "toy_pass_rates.csv"
BAND = ("curriculum", TOY, "--steps", "20", "--batch-size", "8", "--schedule", "band")
DRY = "A sampler that never repeats a prompt runs out of 0.2-0.8 (10 prompts) at step 1."
# One prompt per step: leave-one-step-out has nothing to compare.
ONE_STEP = "prompt,reward,step\na,1,0\na,0,0\nb,1,1\nb,1,1\nc,0,2\nc,1,2\n"
NOTHING = "Nothing is compared: every prompt appears in one step only (3 prompts)."
# (run, warning, rows: per-prompt rows without a headline); {folder} files are written by _args.
WARNS: dict[str, tuple[tuple[object, ...], str, bool]] = {
    "silent": (("silent", *EIGHT, "--G", "16", *PLUGIN), BIASED, False),
    "silent --bounds": (
        ("silent", *EIGHT, "--G", "16", *PLUGIN, "--bounds"),
        "silent_rate at G = 16 lies outside what the data allow",
        False,
    ),
    "silent --per-prompt": (("silent", *EIGHT, "--G", "16", *PLUGIN, "--per-prompt"), BIASED, True),
    "budget --bounds": (
        ("budget", *EIGHT, "--G", "8", *PLUGIN, "--prior", "none", "--bounds"),
        "grpo_share at G = 8 lies outside what the data allow: the plug-in contradicts the data",
        False,
    ),
    "budget": (("budget", *EIGHT, "--G", "16", *PLUGIN), BIASED, False),
    "groupsize": (("groupsize", *EIGHT, *PLUGIN), BIASED, False),
    "plan": (("plan", *EIGHT, "--budget", "4", "--sizes", "2,4,16", *PLUGIN), BIASED, False),
    "plan --distribution": (
        ("plan", *EIGHT, "--budget", "4", "--sizes", "2,4,16", *PLUGIN, "--distribution"),
        BIASED,
        False,
    ),
    "plan --per-prompt": (
        (
            "plan",
            SAMPLE / "bigmath_solve_rate_counts.csv",
            "--budget",
            "4",
            "--sizes",
            "2,4,128",
            *PLUGIN,
            "--per-prompt",
        ),
        BIASED.replace("n = 8", "n = 64"),
        True,
    ),
    "preflight": (("preflight", *EIGHT, "--n", "16", *PLUGIN), BIASED, False),
    "preflight --col": (
        ("preflight", "{folder}/two.csv", "--col", "a", "--col", "b", "--n", "16", *PLUGIN),
        BIASED,
        False,
    ),
    "curriculum": (BAND, DRY, False),
    "curriculum --per-prompt": ((*BAND, "--per-prompt"), DRY, True),
    "track": (
        (
            "track",
            "--rollouts",
            "{folder}/one_step.csv",
            "--prompt-col",
            "prompt",
            "--reward-col",
            "reward",
            "--step-col",
            "step",
        ),
        NOTHING,
        False,
    ),
}


def _args(run: tuple[object, ...], folder: Path) -> list[object]:
    """The run's arguments, the files it names in ``{folder}`` written there."""
    (folder / "one_step.csv").write_text(ONE_STEP)
    # Two pass-rate columns on a 1/8 grid: read as counts of 8 each.
    (folder / "two.csv").write_text("a,b\n" + "".join(f"{i % 9 / 8},{(i * 5) % 9 / 8}\n" for i in range(90)))
    return [str(a).format(folder=folder) for a in run]


@pytest.mark.parametrize("name", list(WARNS))
def test_a_warning_reaches_the_table(name: str, tmp_path: Path) -> None:
    run, warning, rows = WARNS[name]
    result = invoke(*_args(run, tmp_path), "--format", "table")
    assert 0 == result.exit_code, result.stderr
    assert warning in (result.stderr if rows else headline(result.stdout))


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("name", list(WARNS))
def test_a_warning_reaches_stderr_beside_the_data(name: str, fmt: str, tmp_path: Path) -> None:
    run, warning, _ = WARNS[name]
    result = invoke(*_args(run, tmp_path), "--format", fmt)
    assert 0 == result.exit_code, result.stderr
    assert warning in result.stderr


def test_the_table_says_a_share_outside_what_the_data_allow_once() -> None:
    result = invoke(*WARNS["budget --bounds"][0], "--format", "table")
    lines = result.stdout.splitlines()
    assert 1 == sum(line.startswith("grpo_share at G = 8 lies outside what the data allow") for line in lines)

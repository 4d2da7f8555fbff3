"""Per-prompt files through the CLI: every command × input route × estimator keeps every prompt and adds up.

For each case the per-prompt file (``--per-prompt -f csv``) has a value for every usable input row, and
its aggregate equals the summary the same command prints without ``--per-prompt``: silent's mean
per-prompt silent rate is its silent_rate per G; groupsize's group sizes give its counts and quantiles;
plan's sizes sum to its rollouts used and its kept prompts are its prompts kept. The data are small and
drawn with a fixed seed; pass rates of ``--samples N`` are written as k/N, as a user's file holds them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import click
import numpy as np
import polars as pl
import pytest
import typer
from numpy.typing import NDArray

from sigmatool.cli import COMMANDS, app
from sigmatool.cli.commands import _register
from tests.conftest import SAMPLE, csv_of, invoke

SEED = 20260621
PROMPTS = 300
STREAMED = 20_000  # enough distinct rates for silent and groupsize to stream the rows (load.rows.MIN_ROWS)
SAMPLES = (5, 8, 10, 50, 64)
SILENT_G = "2,4"  # within every route's smallest n, so that the unbiased estimator is defined
VERL = SAMPLE / "example_run"

# The estimators, by the options that choose them ("default": none, the one rule of docs/prior.md).
ESTIMATORS: dict[str, tuple[str, ...]] = {
    "default": (),
    "plugin": ("--estimator", "plugin"),
    "unbiased": ("--estimator", "unbiased"),
    "npmle": ("--prior", "npmle"),
    "beta": ("--prior", "beta"),
}
# Each command that writes per-prompt rows, with the arguments of its run (sizes within every route's n).
COMMAND_ARGS = {
    "silent": ("--G", SILENT_G),
    "groupsize": (),
    "plan": ("--budget", "4", "--sizes", "2,4"),
    "curriculum": ("--schedule", "band", "--band", "0,1", "--G", "2", "--batch-size", "8", "--steps", "2"),
}
# Commands whose per-prompt rows are the input file's own rows (a rollout log's rows are answers: curriculum
# refuses them, plan writes the log's prompts).
ROW_WISE = ("plan", "curriculum")


def _per_prompt_commands() -> dict[str, click.Command]:
    """The app's commands that take --per-prompt, as click builds them."""
    _register(COMMANDS)
    group = typer.main.get_command(app)
    assert isinstance(group, click.Group)
    return {
        name: command
        for name, command in group.commands.items()
        # track's per-prompt rows are a run's story per prompt, not values at G (tests/test_logs.py); graders'
        # compare two graders of one rollout log (tests/test_graders.py)
        if name not in ("track", "graders")
        and any("--per-prompt" in p.opts for p in command.params if isinstance(p, click.Option))
    }


# Estimators a command takes the option of but refuses (tests/test_groupsize.py checks the refusal).
REFUSED = {"groupsize": ("unbiased",)}


def _accepts(name: str, command: click.Command) -> tuple[str, ...]:
    """The estimators whose options the command takes."""
    flags = {flag for p in command.params if isinstance(p, click.Option) for flag in p.opts}
    refused = REFUSED.get(name, ())
    return tuple(e for e, args in ESTIMATORS.items() if set(args[::2]) <= flags and e not in refused)


# Read off the app: a command that gains --per-prompt or an estimator option gains its cases.
ACCEPTS = {name: _accepts(name, command) for name, command in _per_prompt_commands().items()}


def test_every_per_prompt_command_has_a_run() -> None:
    assert sorted(ACCEPTS) == sorted(COMMAND_ARGS)


@dataclass(frozen=True)
class Route:
    """An input route: how to read it, and its prompts."""

    args: tuple[str, ...]
    ids: tuple[str, ...] | None  # the usable prompts' ids (None: the dumps' hashed prompt keys)
    usable: int  # usable prompts
    rows: int  # the rows plan --per-prompt writes: one per input row, or per prompt of a log
    id_col: str = "id"  # the id column of plan --per-prompt


ROUTES = (
    "rates",
    "rates_streamed",
    "counts",
    *[f"samples_{n}" for n in SAMPLES],
    "rollouts",
    "verl",
)
COUNTED = tuple(r for r in ROUTES if not r.startswith("rates"))


def _beta(rng: np.random.Generator, n: int) -> NDArray[np.float64]:
    return rng.beta(0.6, 0.8, size=n)


def _rates_file(folder: Path, rng: np.random.Generator, n: int, name: str) -> Route:
    """Pass rates as floats, a tenth of them exactly 0 or 1, and three rows without a rate (not usable)."""
    p = _beta(rng, n)
    p[rng.choice(n, size=n // 10, replace=False)] = rng.choice([0.0, 1.0], size=n // 10)
    rates: list[float | None] = p.tolist()
    for i in (3, n // 2, n - 1):
        rates[i] = None
    ids = [f"q{i}" for i in range(n)]
    pl.DataFrame({"id": ids, "pass_rate": rates}).write_csv(folder / name)
    usable = tuple(i for i, r in zip(ids, rates, strict=True) if r is not None)
    return Route((str(folder / name), "--col", "pass_rate", "--id-col", "id"), usable, len(usable), n)


def _counts_file(folder: Path, rng: np.random.Generator) -> Route:
    """k of n with n varying by prompt, so that several (k, n) share a pass rate (1/2, 2/4, 4/8, 8/16)."""
    n = rng.choice([4, 8, 16], size=PROMPTS)
    k = rng.binomial(n, _beta(rng, PROMPTS))
    ids = tuple(f"q{i}" for i in range(PROMPTS))
    pl.DataFrame({"id": ids, "k": k, "n": n}).write_csv(folder / "counts.csv")
    args = (str(folder / "counts.csv"), "--k-col", "k", "--n-col", "n", "--id-col", "id")
    return Route(args, ids, PROMPTS, PROMPTS)


def _samples_file(folder: Path, rng: np.random.Generator, samples: int) -> Route:
    """Rates k/N as Python writes them (the correctly rounded quotient), read with --samples N."""
    k = rng.binomial(samples, _beta(rng, PROMPTS))
    path = folder / f"samples_{samples}.csv"
    path.write_text("".join(["id,pass_rate\n", *[f"q{i},{int(j) / samples!r}\n" for i, j in enumerate(k)]]))
    ids = tuple(f"q{i}" for i in range(PROMPTS))
    return Route((str(path), "--samples", str(samples), "--id-col", "id"), ids, PROMPTS, PROMPTS)


def _rollouts_file(folder: Path, rng: np.random.Generator) -> Route:
    """One row per answer, 4 to 6 answers per prompt, shuffled; every 13th prompt's rewards all missing."""
    p, answers = _beta(rng, PROMPTS), rng.integers(4, 7, size=PROMPTS)
    rows = [
        (f"q{i}", None if i % 13 == 0 else int(rng.random() < p[i]))
        for i in range(PROMPTS)
        for _ in range(int(answers[i]))
    ]
    order = rng.permutation(len(rows)).tolist()
    frame = pl.DataFrame(
        [rows[i] for i in order], schema={"prompt": pl.String, "reward": pl.Int64}, orient="row"
    )
    frame.write_csv(folder / "rollouts.csv")
    usable = tuple(f"q{i}" for i in range(PROMPTS) if i % 13)
    args = (str(folder / "rollouts.csv"), "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward")
    return Route(args, usable, len(usable), PROMPTS, id_col="prompt")


def _verl_route() -> Route:
    """The bundled verl run: its prompts are the distinct texts, usable when one of their answers is graded."""
    dumps = pl.concat([pl.read_ndjson(path) for path in sorted(VERL.glob("*.jsonl"))], how="diagonal_relaxed")
    graded = dumps.filter(pl.col("acc").is_not_null())["input"].n_unique()
    return Route((str(VERL), "--from", "verl"), None, graded, dumps["input"].n_unique(), id_col="prompt")


@pytest.fixture(scope="module")
def routes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Route]:
    folder = tmp_path_factory.mktemp("matrix")
    rng = np.random.default_rng(SEED)
    return {
        "rates": _rates_file(folder, rng, PROMPTS, "rates.csv"),
        "rates_streamed": _rates_file(folder, rng, STREAMED, "streamed.csv"),
        "counts": _counts_file(folder, rng),
        **{f"samples_{n}": _samples_file(folder, rng, n) for n in SAMPLES},
        "rollouts": _rollouts_file(folder, rng),
        "verl": _verl_route(),
    }


# A prior fitted to 50 or 64 samples per prompt costs seconds per command: those cases run in `make test-slow`.
HEAVY = {(route, estimator) for route in ("samples_50", "samples_64") for estimator in ("npmle", "beta")}
CASES = [
    pytest.param(
        command,
        route,
        estimator,
        id=f"{command}-{route}-{estimator}",
        marks=[pytest.mark.slow] if (route, estimator) in HEAVY else [],
    )
    for command, estimators in ACCEPTS.items()
    for route in ROUTES
    for estimator in estimators
    if (estimator in ("default", "plugin") or route in COUNTED)
    and not (command == "curriculum" and route in ("rollouts", "verl"))
]


@dataclass(frozen=True)
class Run:
    """One case's per-prompt file, the summary of the same command without --per-prompt, and its route."""

    per_prompt: pl.DataFrame
    summary: pl.DataFrame
    route: Route

    def usable(self, command: str) -> pl.DataFrame:
        """The per-prompt rows of usable prompts (plan writes the others too, without a size)."""
        if command not in ROW_WISE or self.route.ids is None:
            return self.per_prompt
        return self.per_prompt.filter(pl.col(self.route.id_col).is_in(self.route.ids))


@pytest.fixture(scope="module")
def run(routes: dict[str, Route]) -> Callable[[str, str, str], Run]:
    @cache
    def once(command: str, route: str, estimator: str) -> Run:
        r = routes[route]
        args = (command, *r.args, *COMMAND_ARGS[command], *ESTIMATORS[estimator], "-f", "csv")
        return Run(csv_of(invoke(*args, "--per-prompt")), csv_of(invoke(*args)), r)

    return once


VALUES = {
    "silent": ("p_silent", "p_all_right", "p_all_wrong"),  # DAPO's draws are infinite (null) at p = 0 or 1
    "groupsize": ("reachable",),
    "plan": ("group_size", "keep", "p_used"),
    "curriculum": ("weight",),
}
Runner = Callable[[str, str, str], Run]


@pytest.mark.parametrize(("command", "route", "estimator"), CASES)
def test_the_file_has_a_row_per_prompt(command: str, route: str, estimator: str, run: Runner) -> None:
    out = run(command, route, estimator)
    per_prompt = out.route.rows if command in ROW_WISE else out.route.usable
    repeats = len(SILENT_G.split(",")) if command == "silent" else 1
    assert per_prompt * repeats == out.per_prompt.height


@pytest.mark.parametrize(("command", "route", "estimator"), CASES)
def test_every_usable_prompt_has_its_values(command: str, route: str, estimator: str, run: Runner) -> None:
    rows = run(command, route, estimator).usable(command)
    assert dict.fromkeys(VALUES[command], 0) == {c: rows[c].null_count() for c in VALUES[command]}


@pytest.mark.parametrize(("command", "route", "estimator"), CASES)
def test_the_valued_prompts_are_the_usable_ones(
    command: str, route: str, estimator: str, run: Runner
) -> None:
    out = run(command, route, estimator)
    valued = out.per_prompt.drop_nulls(VALUES[command])[out.route.id_col if command in ROW_WISE else "id"]
    assert out.route.usable == valued.n_unique()


@pytest.mark.parametrize(("command", "route", "estimator"), [c for c in CASES if c.values[1] != "verl"])
def test_the_ids_are_the_inputs(command: str, route: str, estimator: str, run: Runner) -> None:
    out = run(command, route, estimator)
    ids = out.usable(command)[out.route.id_col if command in ROW_WISE else "id"].cast(pl.String)
    assert sorted(out.route.ids or ()) == sorted(ids.unique().to_list())


def _of(command: str) -> list[object]:
    return [c for c in CASES if c.values[0] == command]


@pytest.mark.parametrize(("command", "route", "estimator"), _of("silent"))
@pytest.mark.parametrize("G", [int(g) for g in SILENT_G.split(",")])
def test_silent_mean_per_prompt_rate_is_the_silent_rate(
    command: str, route: str, estimator: str, G: int, run: Runner
) -> None:
    out = run(command, route, estimator)
    summary = out.summary.filter(pl.col("G") == G)["silent_rate"].item()
    per_prompt = out.per_prompt.filter(pl.col("G") == G)["p_silent"]
    assert summary == pytest.approx(math.fsum(per_prompt.to_list()) / per_prompt.len(), abs=1e-12)


def _sizes(out: Run) -> list[int]:
    """The reachable prompts' group sizes, ascending."""
    return sorted(out.per_prompt.filter(pl.col("reachable"))["group_size"].to_list())


def _quantile(sizes: list[int], q: float) -> int:
    """The smallest size whose share of prompts at or below it reaches q."""
    return sizes[math.ceil(q * len(sizes)) - 1]


GROUPSIZE_FACTS: dict[str, Callable[[Run], float]] = {
    "prompts": lambda out: out.per_prompt.height,
    "unreachable": lambda out: int((~out.per_prompt["reachable"]).sum()),
    "g_min": lambda out: _sizes(out)[0],
    "g_median": lambda out: _quantile(_sizes(out), 0.5),
    "g_p90": lambda out: _quantile(_sizes(out), 0.9),
    "g_max": lambda out: _sizes(out)[-1],
    "mean_rollouts_schedule": lambda out: math.fsum(_sizes(out)) / len(_sizes(out)),
}


@pytest.mark.parametrize(("command", "route", "estimator"), _of("groupsize"))
@pytest.mark.parametrize("column", list(GROUPSIZE_FACTS))
def test_groupsize_per_prompt_sizes_give_the_summary(
    command: str, route: str, estimator: str, column: str, run: Runner
) -> None:
    out = run(command, route, estimator)
    summary = out.summary.filter(pl.col("segment") == "all")[column].item()
    assert summary == pytest.approx(GROUPSIZE_FACTS[column](out), rel=1e-12)


PLAN_FACTS: dict[str, Callable[[pl.DataFrame], int]] = {
    "rollouts_used": lambda rows: int(rows["group_size"].sum()),
    "prompts_kept": lambda rows: int(rows["keep"].sum()),
    "prompts": lambda rows: rows.drop_nulls("p_used").height,
}


@pytest.mark.parametrize(("command", "route", "estimator"), _of("plan"))
@pytest.mark.parametrize("column", list(PLAN_FACTS))
def test_plan_per_prompt_sizes_give_the_summary(
    command: str, route: str, estimator: str, column: str, run: Runner
) -> None:
    out = run(command, route, estimator)
    summary = out.summary.filter(pl.col("strategy") == "plan")[column].item()
    assert summary == PLAN_FACTS[column](out.per_prompt)


@pytest.mark.parametrize(("command", "route", "estimator"), _of("curriculum"))
def test_curriculum_weights_are_one_draw_s_law(command: str, route: str, estimator: str, run: Runner) -> None:
    # A band over [0, 1] draws every usable prompt alike: each weighs 1 / (usable prompts).
    weights = run(command, route, estimator).per_prompt["weight"].drop_nulls()
    assert weights.to_list() == pytest.approx([1 / weights.len()] * weights.len(), rel=1e-12)


# These few prompts identify no prior beyond their n (the plan's large-group terms): each prompt at its p̂.
PLUGIN = ("--estimator", "plugin")


# The case first reported: 0.7 and 0.94 of 50 samples lost their size (k/50 computed again is not the rate).
def test_plan_of_three_rates_of_50_samples_sizes_every_prompt(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text("id,pass_rate\na,0.7\nb,0.5\nc,0.94\n")
    args = ("plan", tmp_path / "m.csv", "--samples", "50", "--budget", "8", "--id-col", "id", "-f", "csv")
    rows = csv_of(invoke(*args, "--per-prompt", *PLUGIN))
    assert 0 == rows["group_size"].null_count()


def test_plan_of_three_rates_of_50_samples_uses_the_input_rates(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text("id,pass_rate\na,0.7\nb,0.5\nc,0.94\n")
    args = ("plan", tmp_path / "m.csv", "--samples", "50", "--budget", "8", "--id-col", "id", "-f", "csv")
    rows = csv_of(invoke(*args, "--per-prompt", *PLUGIN))
    assert [0.7, 0.5, 0.94] == rows["p_used"].to_list()


@pytest.mark.parametrize("command", ["plan", "groupsize"])
def test_prompts_at_three_fifths_of_5_samples_keep_their_size(command: str, tmp_path: Path) -> None:
    (tmp_path / "five.csv").write_text("".join(["id,pass_rate\n", *[f"q{k},{k / 5!r}\n" for k in range(6)]]))
    args = (command, tmp_path / "five.csv", "--samples", "5", "--id-col", "id", "--per-prompt", "-f", "csv")
    rows = csv_of(invoke(*args, *(("--budget", "8", *PLUGIN) if command == "plan" else ())))
    column = "keep" if command == "plan" else "reachable"
    assert 0 == rows[column].null_count()


@pytest.mark.parametrize("samples", [10, 50])
def test_plan_by_group_of_rates_of_n_samples_sizes_every_prompt(samples: int, tmp_path: Path) -> None:
    lines = [f"q{k}_{g},{g},{k / samples!r}\n" for g in ("a", "b") for k in range(samples + 1)]
    (tmp_path / "by.csv").write_text("".join(["id,group,pass_rate\n", *lines]))
    args = (
        "plan",
        tmp_path / "by.csv",
        "--samples",
        samples,
        "--by",
        "group",
        "--budget",
        "8",
        "--id-col",
        "id",
    )
    rows = csv_of(invoke(*args, "--per-prompt", *PLUGIN, "-f", "csv"))
    assert 0 == rows["group_size"].null_count()

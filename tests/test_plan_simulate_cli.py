"""`sigmatool simulate --plan FILE` and `--plan-budget B`: planned sizes against uniform G at the same rollouts."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from sigmatool.simulate.planned import STRATEGIES, SUMMARY_COLUMNS, even_sizes
from tests.conftest import BIGMATH, csv_of, headline, invoke

SMALL = ("--prompts", "300", "--steps", "6")


@pytest.fixture(scope="module")
def budget_run() -> pl.DataFrame:
    return csv_of(invoke("simulate", *SMALL, "--plan-budget", "6", "--replan-every", "3", "--format", "csv"))


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plan") / "plan.parquet"
    args = ("--budget", "8", "--objective", "knapsack-rl", "--per-prompt", "-o", path)
    assert 0 == invoke("plan", BIGMATH, *args).exit_code
    return path


def test_plan_budget_run_has_the_documented_columns_and_strategies(budget_run: pl.DataFrame) -> None:
    assert list(SUMMARY_COLUMNS) == budget_run.columns
    assert list(STRATEGIES) == budget_run["strategy"].to_list()


def test_plan_budget_run_gives_every_strategy_the_budgets_rollouts(budget_run: pl.DataFrame) -> None:
    assert [6 * 300.0] == budget_run.filter(pl.col("strategy") == "uniform")["rollouts_per_step"].to_list()
    assert (budget_run["rollouts_per_step"] <= 6 * 300).all()


def test_plan_file_run_samples_the_plans_rollouts_in_both_strategies(plan_file: Path) -> None:
    out = csv_of(invoke("simulate", *SMALL, "--plan", plan_file, "--format", "csv"))
    assert 1 == out["rollouts_per_step"].n_unique()


def test_plan_file_run_trains_only_the_prompts_the_plan_keeps(plan_file: Path) -> None:
    out = csv_of(invoke("simulate", *SMALL, "--plan", plan_file, "--format", "csv"))
    trained = out.filter(pl.col("strategy") == "plan")["prompts_trained"].item()
    assert 300 > trained


def test_the_headline_says_which_strategy_is_which(plan_file: Path) -> None:
    result = invoke("simulate", *SMALL, "--plan", plan_file, "--format", "table")
    assert f"'plan' the group sizes of {plan_file}" in headline(result.stdout)


def test_plan_trace_has_a_strategy_column() -> None:
    trace = csv_of(invoke("simulate", *SMALL, "--plan-budget", "6", "--trace", "--format", "csv"))
    assert ["uniform", "plan", "plan_replanned"] == trace["strategy"].unique(maintain_order=True).to_list()


@pytest.mark.parametrize(("rollouts", "prompts"), [(20, 4), (22, 4), (53_832, 6000), (7, 3)])
def test_even_sizes_sum_to_the_rollouts(rollouts: int, prompts: int) -> None:
    assert rollouts == int(even_sizes(rollouts, prompts).sum())


def test_even_sizes_differ_by_at_most_one() -> None:
    sizes = even_sizes(53_832, 6000)
    assert 1 == int(sizes.max() - sizes.min())


BAD = {
    "a plan file and a budget": ["--plan", "x.parquet", "--plan-budget", "8"],
    "sizes without a plan budget": ["--sizes", "4,8"],
    "objective without a plan budget": ["--objective", "learnable"],
    "G with a plan": ["--plan-budget", "8", "--G", "8"],
    "two methods with a plan": ["--plan-budget", "8", "--methods", "grpo,dapo"],
    "init with a plan file": ["--plan", "x.parquet", "--init", "beta-mix"],
    "bad plan sizes": ["--plan-budget", "8", "--sizes", "0,4"],
    "zero plan budget": ["--plan-budget", "0"],
    "negative replanning": ["--plan-budget", "8", "--replan-every", "-1"],
}


@pytest.mark.parametrize("args", list(BAD.values()), ids=list(BAD))
def test_bad_plan_options_of_simulate_exit_2(args: list[str]) -> None:
    assert 2 == invoke("simulate", *args).exit_code

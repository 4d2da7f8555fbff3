"""The plan's summary against uniform group sizes: columns, hand computations, and the bundled Big-Math sample."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sigmatool import kernels
from sigmatool.load import sample_histogram
from sigmatool.plan import DISTRIBUTION_COLUMNS, STRATEGIES, SUMMARY_COLUMNS, plan, plan_options, plan_values

VALUES = np.array([0.0, 0.05, 0.3, 0.5, 1.0])
COUNTS = np.array([1, 2, 2, 3, 1])
PROMPTS = 9


@pytest.fixture(scope="module")
def bigmath() -> pl.DataFrame:
    return sample_histogram().frame


def row(result, strategy: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return result.summary.filter(pl.col("strategy") == strategy).row(0, named=True)  # type: ignore[no-any-return]


@pytest.mark.parametrize("objective", ["signal", "learnable", "knapsack-rl", "fidelity"])
def test_on_bundled_big_math_the_plan_beats_every_uniform_size_within_budget(
    bigmath: pl.DataFrame, objective: str
) -> None:
    result = plan(bigmath, budget=8, sizes="4,8,16,32", objective=objective)
    summary = result.summary
    best_uniform = float(summary.filter(pl.col("strategy") != "plan")["objective"].max())  # type: ignore[arg-type]
    assert result.objective >= best_uniform
    assert 8 * 215_608 >= summary["rollouts_used"][0]


def test_summary_columns_and_strategies_are_in_the_documented_order() -> None:
    summary = plan_values(VALUES, COUNTS, plan_options(budget=8)).summary
    assert list(SUMMARY_COLUMNS) == summary.columns
    assert list(STRATEGIES) == summary["strategy"].to_list()


def test_uniform_row_is_the_largest_affordable_size_for_every_prompt() -> None:
    result = plan_values(VALUES, COUNTS, plan_options(budget=8, sizes="4,8,16"))
    r = row(result, "uniform")
    assert 8 == r["uniform_G"]
    assert 72 == r["rollouts_used"]
    assert float(COUNTS @ kernels.expected_sigma(VALUES, 8)) == pytest.approx(r["objective"], rel=1e-13)
    assert float(COUNTS @ kernels.silent_probability(VALUES, 8)) / PROMPTS == pytest.approx(
        r["expected_silent_rate"], rel=1e-13
    )


def test_dropped_uniform_row_keeps_the_interior_prompts_at_the_largest_size_they_afford() -> None:
    result = plan_values(VALUES, COUNTS, plan_options(budget=8, sizes="4,8,16"))
    r = row(result, "uniform_dropped")
    inner = (VALUES > 0) & (VALUES < 1)
    assert 8 == r["uniform_G"]  # 72 rollouts / 7 prompts = 10.3 per prompt
    assert 7 == r["prompts_kept"]
    assert 2 == r["prompts_left_out"]
    expected = float(COUNTS[inner] @ kernels.silent_probability(VALUES[inner], 8)) / 7
    assert expected == pytest.approx(r["expected_silent_rate"], rel=1e-13)


def test_an_unaffordable_uniform_size_goes_to_a_random_subset_in_expectation() -> None:
    result = plan_values(VALUES, COUNTS, plan_options(budget=8, sizes=[16]))
    r = row(result, "uniform")
    assert 4 == r["prompts_kept"]  # ⌊72 / 16⌋
    expected = 4 / PROMPTS * float(COUNTS @ kernels.expected_sigma(VALUES, 16))
    assert expected == pytest.approx(r["objective"], rel=1e-13)


def test_plan_row_agrees_with_its_values_table() -> None:
    result = plan_values(VALUES, COUNTS, plan_options(budget=8, sizes="4,8,16"))
    kept = result.values.filter(pl.col("keep"))
    r = row(result, "plan")
    weights = kept["prompts"].to_numpy()
    assert int(weights.sum()) == r["prompts_kept"]
    assert float(weights @ kept["p_silent_at_G"].to_numpy()) / weights.sum() == pytest.approx(
        r["expected_silent_rate"], rel=1e-13
    )
    sigma = weights * kept["expected_sigma"].to_numpy()
    extreme = ((kept["p"] < 0.1) | (kept["p"] > 0.9)).to_numpy()
    assert float(sigma[extreme].sum() / sigma.sum()) == pytest.approx(r["extreme_gradient_share"], rel=1e-13)
    assert int((kept["group_size"] * kept["prompts"]).sum()) == r["rollouts_used"]


def test_objective_vs_plan_is_the_ratio_to_the_plans_objective() -> None:
    summary = plan_values(VALUES, COUNTS, plan_options(budget=8)).summary
    ratio = (summary["objective"] / summary["objective"][0]).to_list()
    assert ratio == pytest.approx(summary["objective_vs_plan"].to_list(), rel=1e-15)


def test_distribution_accounts_for_every_prompt_and_rollout_of_each_strategy() -> None:
    result = plan_values(VALUES, COUNTS, plan_options(budget=8))
    totals = result.distribution.group_by("strategy", maintain_order=True).agg(
        pl.col("prompts").sum(), pl.col("rollouts").sum()
    )
    assert list(DISTRIBUTION_COLUMNS) == result.distribution.columns
    assert [PROMPTS] * 5 == totals["prompts"].to_list()
    assert result.summary["rollouts_used"].to_list() == totals["rollouts"].to_list()


def test_uniform_eight_on_big_math_has_the_reference_silent_rate(bigmath: pl.DataFrame) -> None:
    # docs/theory.md §2: Big-Math's mean p̂^8 + (1 − p̂)^8 is 44.28 %.
    r = row(plan(bigmath, budget=8), "uniform")
    assert 0.4428 == round(float(r["expected_silent_rate"]), 4)  # type: ignore[arg-type]

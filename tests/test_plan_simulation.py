"""The controlled run with per-prompt group sizes, and the plan against uniform G in it."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sigmatool.errors import UsageError
from sigmatool.simulate import simulate
from sigmatool.simulate.planned import STRATEGIES, SUMMARY_COLUMNS, simulate_plan

START = np.linspace(0.05, 0.95, 40)


def test_a_constant_per_prompt_array_reproduces_the_one_size_run() -> None:
    one, _ = simulate(START, prompts=40, group_size=8, steps=12, methods="grpo,drgrpo,dapo")
    many, _ = simulate(
        START, prompts=40, group_size=lambda p: np.full(p.size, 8), steps=12, methods="grpo,drgrpo,dapo"
    )
    assert one.equals(many)


def test_prompts_at_size_zero_do_not_move_and_draw_nothing() -> None:
    sizes = np.where(np.arange(40) % 2 == 0, 0, 16)
    trace, _ = simulate(np.full(40, 0.3), prompts=40, group_size=sizes, steps=5, methods="grpo")
    assert [20 * 16] * 5 == trace["samples_drawn"].to_list()


def test_untrained_prompts_keep_their_start_pass_rate() -> None:
    # Equal start rates: quartiles go by position, so the untrained first half is quartiles 1 and 2.
    sizes = np.where(np.arange(40) < 20, 0, 16)
    trace, _ = simulate(np.full(40, 0.3), prompts=40, group_size=sizes, steps=30, methods="grpo")
    last = trace.row(-1, named=True)
    assert 0.3 == pytest.approx(last["q1_mean_p"], rel=1e-14)
    assert 0.3 == pytest.approx(last["q2_mean_p"], rel=1e-14)
    assert last["q4_mean_p"] > 0.3


def test_predicted_silent_fraction_counts_only_trained_prompts() -> None:
    sizes = np.where(np.arange(40) < 10, 0, 4)
    trace, _ = simulate(np.full(40, 0.5), prompts=40, group_size=sizes, steps=1, methods="grpo")
    assert 2 * 0.5**4 == pytest.approx(trace["predicted_silent"][0], rel=1e-15)


@pytest.mark.parametrize("sizes", [np.full(40, 1), np.full(39, 8), np.full(40, 8.0), np.full(40, -2)])
def test_bad_per_prompt_sizes_are_usage_errors(sizes: np.ndarray) -> None:
    with pytest.raises(UsageError, match="per-prompt group sizes"):
        simulate(START, prompts=40, group_size=sizes, steps=2)


def test_replanning_needs_a_function_of_p() -> None:
    with pytest.raises(UsageError, match="replan_every"):
        simulate(START, prompts=40, group_size=8, steps=2, replan_every=5)


def test_replanning_calls_the_function_on_the_current_pass_rates() -> None:
    seen: list[float] = []

    def sizes(p: np.ndarray) -> np.ndarray:
        seen.append(float(p.mean()))
        return np.full(p.size, 8)

    simulate(START, prompts=40, group_size=sizes, steps=9, methods="grpo", replan_every=4)
    assert 3 == len(seen)  # steps 1, 5 and 9
    assert seen[0] < seen[1] < seen[2]


@pytest.fixture(scope="module")
def small_run() -> tuple[pl.DataFrame, pl.DataFrame]:
    return simulate_plan("beta-mix", prompts=400, steps=20, replan_every=5)


def test_plan_run_summary_has_the_documented_columns_and_strategies(small_run) -> None:  # type: ignore[no-untyped-def]
    _, summary = small_run
    assert list(SUMMARY_COLUMNS) == summary.columns
    assert list(STRATEGIES) == summary["strategy"].to_list()


def test_plan_never_draws_more_than_the_uniform_run(small_run) -> None:  # type: ignore[no-untyped-def]
    trace, _ = small_run
    per_step = trace.pivot(on="strategy", index="step", values="samples_drawn")
    assert (per_step["plan"] <= per_step["uniform"]).all()
    assert (per_step["plan_replanned"] <= per_step["uniform"]).all()


def test_every_strategy_starts_from_the_same_population(small_run) -> None:  # type: ignore[no-untyped-def]
    _, summary = small_run
    assert 1 == summary["start_mean_p"].n_unique()

"""The allocation against exhaustive search and an independent LP, the hull's properties, and the options."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sigmatool.errors import DataError, UsageError
from sigmatool.plan import curves, parse_sizes, plan, plan_options, plan_values
from sigmatool.plan.hull import upper_hull
from tests.plan_reference import dp_optimum, lp_optimum

SOME = settings(max_examples=40, deadline=None)
TOL = 1e-9
OBJECTIVES = ["signal", "learnable", "knapsack-rl", "fidelity"]


@st.composite
def instances(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, tuple[int, ...], bool, int]:
    """A few distinct pass rates (0 and 1 allowed), 1–3 prompts each, 1–3 sizes, and a budget."""
    grid = draw(st.lists(st.integers(0, 20), min_size=1, max_size=4, unique=True))
    values = np.array(sorted(g / 20 for g in grid))
    counts = np.array(draw(st.lists(st.integers(1, 3), min_size=values.size, max_size=values.size)))
    sizes = tuple(sorted(draw(st.lists(st.integers(2, 12), min_size=1, max_size=3, unique=True))))
    keep_all = draw(st.booleans())
    low = int(counts.sum()) * sizes[0] if keep_all else 1
    total = draw(st.integers(low, int(counts.sum()) * sizes[-1] + 2))
    return values, counts, sizes, keep_all, total


def rates_of(values: np.ndarray, counts: np.ndarray) -> list[float]:
    return [float(v) for v, c in zip(values, counts, strict=True) for _ in range(int(c))]


def used(result_plan) -> int:  # type: ignore[no-untyped-def]
    return int(result_plan.summary["rollouts_used"][0])


@SOME
@given(case=instances(), objective=st.sampled_from(["signal", "learnable", "knapsack-rl"]))
def test_plan_is_feasible_and_within_its_gap_of_the_exhaustive_optimum(case, objective) -> None:  # type: ignore[no-untyped-def]
    values, counts, sizes, keep_all, total = case
    options = plan_options(sizes=sizes, objective=objective, total=total, keep_all=keep_all)
    result = plan_values(values, counts, options)
    best = dp_optimum(rates_of(values, counts), options, total)
    assert result.objective <= best + TOL
    assert best <= result.objective + result.gap + TOL


@SOME
@given(case=instances(), objective=st.sampled_from(["signal", "learnable", "knapsack-rl"]))
def test_gap_is_at_most_one_prompts_largest_value(case, objective) -> None:  # type: ignore[no-untyped-def]
    values, counts, sizes, keep_all, total = case
    options = plan_options(sizes=sizes, objective=objective, total=total, keep_all=keep_all)
    result = plan_values(values, counts, options)
    one_prompt = float(curves.value_matrix(values, sizes, options).max())
    assert result.gap <= one_prompt + TOL


@SOME
@given(case=instances(), objective=st.sampled_from(["signal", "learnable", "knapsack-rl"]))
def test_plan_plus_gap_is_the_lp_optimum(case, objective) -> None:  # type: ignore[no-untyped-def]
    values, counts, sizes, keep_all, total = case
    options = plan_options(sizes=sizes, objective=objective, total=total, keep_all=keep_all)
    result = plan_values(values, counts, options)
    expected = lp_optimum(values.tolist(), counts.tolist(), options, total)
    assert expected == pytest.approx(result.objective + result.gap, rel=1e-12, abs=1e-12)


@SOME
@given(case=instances(), objective=st.sampled_from(["signal", "learnable", "knapsack-rl"]))
def test_a_plan_said_to_be_exact_is_the_exhaustive_optimum(case, objective) -> None:  # type: ignore[no-untyped-def]
    values, counts, sizes, keep_all, total = case
    options = plan_options(sizes=sizes, objective=objective, total=total, keep_all=keep_all)
    result = plan_values(values, counts, options)
    if result.exact:
        assert dp_optimum(rates_of(values, counts), options, total) == pytest.approx(
            result.objective, abs=TOL
        )


@SOME
@given(case=instances(), target=st.sampled_from([0.5, 0.8, 0.9, 0.95]))
def test_fidelity_plan_reaches_the_exhaustive_most_prompts(case, target) -> None:  # type: ignore[no-untyped-def]
    values, counts, sizes, keep_all, total = case
    options = plan_options(sizes=sizes, objective="fidelity", target=target, total=total, keep_all=keep_all)
    result = plan_values(values, counts, options)
    assert dp_optimum(rates_of(values, counts), options, total) == result.objective


@SOME
@given(case=instances(), objective=st.sampled_from(OBJECTIVES))
def test_budget_always_holds(case, objective) -> None:  # type: ignore[no-untyped-def]
    values, counts, sizes, keep_all, total = case
    result = plan_values(
        values, counts, plan_options(sizes=sizes, objective=objective, total=total, keep_all=keep_all)
    )
    table = result.values
    assert int((table["group_size"] * table["prompts"]).sum()) <= total


@SOME
@given(case=instances(), objective=st.sampled_from(OBJECTIVES))
def test_keep_all_leaves_no_prompt_out(case, objective) -> None:  # type: ignore[no-untyped-def]
    values, counts, sizes, _, total = case
    total = max(total, int(counts.sum()) * sizes[0])
    result = plan_values(
        values, counts, plan_options(sizes=sizes, objective=objective, total=total, keep_all=True)
    )
    assert 0 == int(result.values.filter(~pl.col("keep"))["prompts"].sum())


@SOME
@given(case=instances(), objective=st.sampled_from(OBJECTIVES))
def test_values_table_accounts_for_every_prompt_with_at_most_two_sizes(case, objective) -> None:  # type: ignore[no-untyped-def]
    values, counts, sizes, keep_all, total = case
    result = plan_values(
        values, counts, plan_options(sizes=sizes, objective=objective, total=total, keep_all=keep_all)
    )
    per_value = result.values.group_by("p").agg(pl.col("prompts").sum(), pl.len().alias("sizes")).sort("p")
    assert counts.tolist() == per_value["prompts"].to_list()
    assert per_value["sizes"].max() <= 2  # type: ignore[operator]


def test_one_size_greedy_is_exact_even_with_rollouts_left() -> None:
    values, counts = np.array([0.2, 0.5, 0.9]), np.array([2, 1, 2])
    options = plan_options(sizes=[8], total=20)
    result = plan_values(values, counts, options)
    assert result.exact
    assert dp_optimum(rates_of(values, counts), options, 20) == pytest.approx(result.objective, abs=TOL)


def test_a_budget_that_covers_everything_gives_each_prompt_its_best_size() -> None:
    values = np.array([0.0, 0.02, 0.5, 1.0])
    result = plan_values(values, np.ones(4, dtype=np.int64), plan_options(sizes=[4, 8, 16, 32], total=10_000))
    assert [0, 32, 32, 0] == result.values["group_size"].to_list()
    assert "optimal" in result.guarantee


def test_prompts_sharing_a_value_split_between_adjacent_hull_sizes() -> None:
    # Four prompts at p = ½, sizes 4 and 8, 24 rollouts: 2 get 8 and 2 get 4.
    result = plan_values(np.array([0.5]), np.array([4]), plan_options(sizes=[4, 8], total=24))
    assert [(8, 2, 0), (4, 2, 2)] == result.values.select("group_size", "prompts", "first_rank").rows()


def continuous(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    values = np.unique(np.concatenate(([0.0, 1.0], rng.random(n), rng.random(n) ** 6)))
    return values, rng.integers(1, 4, size=values.size)


# Each objective once, and the signal at a tight, a middling and a loose budget.
@pytest.mark.parametrize(
    ("objective", "budget"),
    [
        ("signal", 6.0),
        *[
            pytest.param(objective, budget, marks=pytest.mark.slow)
            for objective, budget in (
                ("signal", 1.5),
                ("signal", 13.0),
                ("learnable", 6.0),
                ("knapsack-rl", 6.0),
            )
        ],
    ],
)
def test_threshold_search_at_scale_meets_the_sorted_lp(objective: str, budget: float) -> None:
    values, counts = continuous(500, seed=3)
    options = plan_options(sizes="2..6,8,12,16,24,32", objective=objective, budget=budget)
    result = plan_values(values, counts, options)
    expected = lp_optimum(values.tolist(), counts.tolist(), options, result.budget)
    assert expected == pytest.approx(result.objective + result.gap, rel=1e-11)


def test_threshold_search_with_many_tied_slopes_meets_the_sorted_lp() -> None:
    # p and 1 − p have the same E[σ] curve, so every slope is tied with its mirror.
    half = np.linspace(0.01, 0.49, 300)
    values = np.concatenate((half, 1.0 - half[::-1]))
    counts = np.full(values.size, 3)
    options = plan_options(sizes=[4, 8, 16], budget=7)
    result = plan_values(values, counts, options)
    expected = lp_optimum(values.tolist(), counts.tolist(), options, result.budget)
    assert expected == pytest.approx(result.objective + result.gap, rel=1e-12)


def test_hull_points_lie_on_or_below_and_slopes_fall() -> None:
    rng = np.random.default_rng(5)
    values = rng.normal(size=(2000, 6)).cumsum(axis=1)
    sizes = np.array([2, 3, 5, 8, 13, 21])
    segments = upper_hull(values, sizes, np.full(2000, -1, dtype=np.int16))
    for row in range(2000):
        ends = segments.end[row, : segments.count[row]].astype(int)
        slopes = segments.slope[row, : segments.count[row]]
        assert np.all(slopes > 0)
        assert np.all(np.diff(slopes) <= 0)
        xs = np.concatenate(([0], sizes[ends]))
        vs = np.concatenate(([0.0], values[row, ends]))
        assert np.all(values[row] <= np.interp(sizes, xs, vs) + 1e-12)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("4,8,16,32", (4, 8, 16, 32)),
        ("2..5", (2, 3, 4, 5)),
        ("8..32:8", (8, 16, 24, 32)),
        ([16, 4, 4], (4, 16)),
        (8, (8,)),
    ],
)
def test_sizes_parse_lists_ranges_and_steps(spec, expected) -> None:  # type: ignore[no-untyped-def]
    assert expected == parse_sizes(spec)


@pytest.mark.parametrize("spec", ["0,8", "a", "9..3", "0..4", "8..64:0", ""])
def test_bad_sizes_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError, match="--sizes"):
        parse_sizes(spec)


def test_a_group_of_one_is_planned_only_for_hits() -> None:
    """σ = 0 in a group of one: no gradient objective takes size 1; the hit objective does (HORA)."""
    with pytest.raises(UsageError, match="size 1 is for --objective hit"):
        plan_options(sizes="1,8")
    assert plan_options(sizes="1,8", objective="hit").sizes == (1, 8)


def test_min_and_max_group_size_narrow_the_sizes() -> None:
    assert (8, 16) == plan_options(sizes="4,8,16,32", min_G=5, max_G=20).sizes


def test_every_bad_option_is_named_at_once() -> None:
    with pytest.raises(UsageError) as info:
        plan_options(objective="speed", method="ppo", std="sample", target=1.5, budget=2, total=3)
    for name in ("--objective", "--method", "--std", "--fidelity", "--budget and --total"):
        assert name in str(info.value)


def test_budget_per_prompt_is_multiplied_exactly() -> None:
    assert 29 == plan_options(budget=0.29).total_rollouts(100)


def test_keep_all_without_enough_budget_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--keep-all"):
        plan(np.array([0.5, 0.5, 0.2]), budget=3, sizes="4,8", keep_all=True)


@pytest.mark.parametrize("data", [np.array([0.5, 1.5]), pl.DataFrame({"p": [0.5], "prompts": [0.5]})])
def test_bad_data_is_a_data_error(data) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError):
        plan(data)


def test_a_histogram_and_its_per_prompt_rates_give_the_same_plan() -> None:
    rates = np.array([0.25, 0.5, 0.25, 0.75, 0.5, 0.5])
    hist = pl.DataFrame({"p": [0.75, 0.25, 0.5], "prompts": [1, 2, 3]})
    assert plan(rates).values.equals(plan(hist).values)


def _wrapped(values: list[float], sizes: list[int]) -> list[tuple[int, float]]:
    """One row's hull by hand: from each vertex (first (0, 0)), the point of steepest positive slope after it,
    the nearest of equal slopes."""
    out: list[tuple[int, float]] = []
    x, v, j = 0.0, 0.0, -1
    while True:
        best, best_j = -np.inf, -1
        for i in range(j + 1, len(sizes)):
            slope = (values[i] - v) / (sizes[i] - x)
            if slope > best:
                best, best_j = slope, i
        if best <= 0.0:
            return out
        out.append((best_j, best))
        x, v, j = float(sizes[best_j]), values[best_j], best_j


@pytest.mark.parametrize("kind", ["steps", "thirds", "noise"])
def test_hull_of_bent_curves_is_the_gift_wrapping_by_hand(kind: str) -> None:
    # Steps (fidelity's 0/1 values) and curves on a grid of thirds give equal slopes: the nearest point wins.
    rng = np.random.default_rng(13)
    sizes = np.array([2, 3, 4, 6, 8, 9, 12, 16, 24, 32])
    if kind == "steps":
        values = rng.integers(0, 2, (300, sizes.size)).astype(np.float64)
    elif kind == "thirds":
        values = rng.integers(-1, 3, (300, sizes.size)).cumsum(axis=1) / 3.0
    else:
        values = rng.random((300, sizes.size))
    segments = upper_hull(values, sizes, -1)
    for row in range(300):
        count = int(segments.count[row])
        found = list(
            zip(segments.end[row, :count].tolist(), segments.slope[row, :count].tolist(), strict=True)
        )
        assert _wrapped(values[row].tolist(), sizes.tolist()) == found


def test_fidelity_plan_over_every_allowed_size_reaches_the_exhaustive_most_prompts() -> None:
    # 1,024 sizes (the most a plan takes): a prompt near p = ½ reaches φ* = 0.95 at a small G, one near the
    # ends only at hundreds, so the budget decides how many reach it.
    values = np.array([0.004, 0.02, 0.1, 0.3, 0.5, 0.7, 0.97, 0.995])
    counts = np.array([1, 2, 1, 1, 2, 1, 1, 1])
    options = plan_options(sizes="2..1025", objective="fidelity", target=0.95, total=400)
    result = plan_values(values, counts, options)
    assert dp_optimum(rates_of(values, counts), options, 400) == result.objective

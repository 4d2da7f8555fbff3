"""``plan --objective hit``: HORA's allocation (arXiv:2605.07114) of rollouts to maximise the prompts with a right
rollout, checked against an independent greedy over exact Beta-binomial utilities.

Under HORA's Beta(1 + k, 1 + n − k) posterior (``--prior 1,1``), a prompt with k right of n given m rollouts
holds a right one with chance U(m) = 1 − E[(1 − p)^m] = 1 − B(1 + k, 1 + n − k + m)/B(1 + k, 1 + n − k). U is
concave in m, so greedily giving each next rollout to the largest marginal gain is optimal; with every
prompt's gains at hand, the optimum at a budget of R rollouts is the sum of the R largest gains.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import polars as pl
import pytest

from tests.conftest import BIGMATH, csv_of, invoke

N, BUDGET, CAP = 64, 8, 32


@cache
def beta_fn(a: int, b: int) -> Fraction:
    return Fraction(math.factorial(a - 1) * math.factorial(b - 1), math.factorial(a + b - 1))


def utility(k: int, m: int) -> Fraction:
    a, b = 1 + k, 1 + N - k
    return 1 - beta_fn(a, b + m) / beta_fn(a, b)


@pytest.fixture(scope="module")
def counts() -> dict[int, int]:
    rates = pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_list()
    out: dict[int, int] = {}
    for r in rates:
        out[round(r * N)] = out.get(round(r * N), 0) + 1
    return out


@pytest.fixture(scope="module")
def plan() -> pl.DataFrame:
    args = ("--objective", "hit", "--prior", "1,1", "--sizes", f"1..{CAP}", "--budget", BUDGET, "-f", "csv")
    return csv_of(invoke("plan", BIGMATH, *args))


def greedy_optimum(counts: dict[int, int]) -> tuple[float, float]:
    """The sum of the budget's largest marginal gains (each prompt's m-th rollout at most once, m ≤ CAP), and
    the largest single gain."""
    gains = sorted(
        (
            (float(utility(k, m) - utility(k, m - 1)), copies)
            for k, copies in counts.items()
            for m in range(1, CAP + 1)
        ),
        reverse=True,
    )
    left, total = BUDGET * sum(counts.values()), 0.0
    for gain, copies in gains:
        take = min(copies, left)
        total += take * gain
        left -= take
        if not left:
            break
    return total, gains[0][0]


def test_the_plan_is_within_one_rollouts_gain_of_horas_greedy(
    plan: pl.DataFrame, counts: dict[int, int]
) -> None:
    best, one = greedy_optimum(counts)
    value = plan.filter(pl.col("strategy") == "plan")["objective"][0]
    assert value <= best + 1e-6
    assert best - value <= one
    assert round(value / sum(counts.values()), 3) == 0.846


def test_the_uniform_row_is_the_exact_utility_at_g8(plan: pl.DataFrame, counts: dict[int, int]) -> None:
    exact = sum((copies * utility(k, BUDGET) for k, copies in counts.items()), Fraction(0))
    row = plan.filter(pl.col("strategy") == "uniform")
    assert row["uniform_G"][0] == BUDGET
    assert row["objective"][0] == pytest.approx(float(exact), rel=1e-12)
    assert round(float(exact) / sum(counts.values()), 3) == 0.788


def test_hit_sizes_start_at_one_by_default(plan: pl.DataFrame) -> None:
    assert plan.filter(pl.col("strategy") == "plan")["min_G"][0] == 1


def test_hit_from_counts_is_the_unbiased_chance_of_a_right_answer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Without a prior, a prompt with k of n at G ≤ n holds a hit with chance 1 − C(n−k, G)/C(n, G): a plan at
    one size values every prompt at it."""
    data = tmp_path / "counts.csv"
    data.write_text("k,n\n0,8\n1,8\n4,8\n8,8\n")
    out = csv_of(invoke("plan", data, "--objective", "hit", "--sizes", "4", "--budget", "4", "-f", "csv"))
    expected = sum(1 - Fraction(math.comb(8 - k, 4), math.comb(8, 4)) for k in (0, 1, 4, 8))
    assert out.filter(pl.col("strategy") == "uniform")["objective"][0] == pytest.approx(
        float(expected), abs=1e-12
    )

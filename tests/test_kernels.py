"""Kernels against docs/theory.md's reference values, brute-force enumeration, Monte Carlo and properties."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from sigmatool.kernels import (
    all_right_probability,
    all_right_probability_unbiased,
    all_wrong_probability,
    all_wrong_probability_unbiased,
    bessel_factor,
    dapo_expected_draws,
    dapo_still_silent_probability,
    drgrpo_fidelity,
    drgrpo_weight_limit,
    expected_sigma,
    expected_sigma_squared,
    expected_sigma_squared_unbiased,
    expected_sigma_unbiased,
    fidelity,
    fidelity_expansion,
    group_size_law,
    group_std,
    grpo_weight_limit,
    hypergeometric_pmf,
    silent_group_size,
    silent_probability,
    silent_probability_unbiased,
)
from sigmatool.kernels._common import distinct_rows

BIGMATH_COUNTS = Path(__file__).parent.parent / "sample_data" / "bigmath_solve_rate_counts.csv"
PROBABILITIES = np.array([0.0, 1e-9, 0.01, 0.05, 0.3, 0.5, 0.77, 0.95, 1.0 - 1e-9, 1.0])
EXACT = 1e-12
# Absolute slack only for values that are exactly 0: everything else is compared relatively.
TINY = 1e-300
FEW = settings(max_examples=100, deadline=None)

interior_p = st.floats(min_value=1e-4, max_value=1.0 - 1e-4)
# Subnormal p makes p (1 − p) underflow to 0 while E[σ] does not: a float artefact, not a property.
any_p = st.floats(min_value=0.0, max_value=1.0, allow_subnormal=False)


@pytest.fixture(scope="module")
def bigmath() -> pl.DataFrame:
    return pl.read_csv(BIGMATH_COUNTS)


def _weighted_mean(values: NDArray[np.float64], frame: pl.DataFrame) -> float:
    return float(np.average(values, weights=frame["count"].to_numpy()))


def _reward_vectors(G: int) -> NDArray[np.float64]:
    """All 2^G reward vectors of a group, one per row."""
    return np.array(list(itertools.product((0.0, 1.0), repeat=G)))


def _enumerate_groups(p: float, G: int, f: Callable[[NDArray[np.float64]], NDArray[np.float64]]) -> float:
    """E[f(rewards)] over all 2^G reward vectors, each weighted by its probability."""
    rewards = _reward_vectors(G)
    k = rewards.sum(axis=1)
    probability = p**k * (1.0 - p) ** (G - k)
    return math.fsum(probability * f(rewards))


def _enumerate_subsets(
    k: int, n: int, G: int, f: Callable[[NDArray[np.float64]], NDArray[np.float64]]
) -> float:
    """E[f(rewards)] over all size-G subsets of n logged rewards, k of them right."""
    logged = np.array([1.0] * k + [0.0] * (n - k))
    subsets = np.array(list(itertools.combinations(range(n), G)))
    return math.fsum(f(logged[subsets])) / len(subsets)


def _population_std(rewards: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(rewards.std(axis=1), dtype=np.float64)


def _is_silent(rewards: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(rewards.std(axis=1) == 0.0, dtype=np.float64)


def _population_variance(rewards: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(rewards.var(axis=1), dtype=np.float64)


SMALL_LOGS = [(k, n, G) for n in range(1, 11) for k in range(n + 1) for G in range(1, n + 1)]


# --------------------------------------------------------------------------------------------------
# docs/theory.md reference values


def test_group_std_matches_reference_row_at_g8() -> None:
    expected = [0.0, 0.3307, 0.4330, 0.4841, 0.5, 0.4841, 0.4330, 0.3307, 0.0]
    assert expected == np.round(group_std(np.arange(9), 8), 4).tolist()


def test_fidelity_at_g8_and_half_is_09278() -> None:
    expected = 0.9278
    assert expected == round(float(fidelity(0.5, 8)), 4)


def test_fidelity_at_g8_and_005_is_05390() -> None:
    expected = 0.5390
    assert expected == round(float(fidelity(0.05, 8)), 4)


def test_fidelity_expansion_at_g8_and_005_is_06711() -> None:
    expected = 0.6711
    assert expected == round(float(fidelity_expansion(0.05, 8)), 4)


def test_expected_sigma_squared_is_p_q_times_one_minus_inverse_g() -> None:
    expected = 0.3 * 0.7 * (1 - 1 / 8)
    assert expected == pytest.approx(float(expected_sigma_squared(0.3, 8)), rel=EXACT)


def test_drgrpo_fidelity_is_expected_sigma_squared_over_its_limit() -> None:
    p = np.array([0.05, 0.3, 0.5, 0.9])
    ratio = expected_sigma_squared(p, 8) / drgrpo_weight_limit(p)
    assert pytest.approx(np.full(4, float(drgrpo_fidelity(8))), rel=EXACT) == ratio


def test_grpo_difficulty_weight_is_2_at_half_and_46_at_005() -> None:
    expected = [2.0, 4.6]
    assert expected == np.round(1.0 / grpo_weight_limit([0.5, 0.05]), 1).tolist()


# Exact G, and the law rounded to nearest, for φ* = 0.90 / 0.95 / 0.99 (docs/theory.md §4).
GROUP_SIZE_TABLE = {
    0.50: [(7, 5), (11, 10), (51, 50)],
    0.30: [(9, 6), (14, 12), (61, 60)],
    0.70: [(9, 6), (14, 12), (61, 60)],
    0.10: [(22, 14), (36, 28), (144, 139)],
    0.90: [(22, 14), (36, 28), (144, 139)],
    0.05: [(42, 26), (69, 53), (273, 263)],
    0.95: [(42, 26), (69, 53), (273, 263)],
}
GROUP_SIZE_CASES = [
    (p, target, exact, law)
    for p, row in GROUP_SIZE_TABLE.items()
    for target, (exact, law) in zip((0.90, 0.95, 0.99), row, strict=True)
]


@pytest.mark.parametrize(("p", "target", "exact", "law"), GROUP_SIZE_CASES)
def test_fidelity_first_reaches_target_at_reference_group_size(
    p: float, target: float, exact: int, law: int
) -> None:
    expected = [False, True]
    assert expected == (fidelity(p, [exact - 1, exact]) >= target).tolist()


@pytest.mark.parametrize(("p", "target", "exact", "law"), GROUP_SIZE_CASES)
def test_group_size_law_rounds_to_reference(p: float, target: float, exact: int, law: int) -> None:
    assert law == round(float(group_size_law(p, target)))


@pytest.mark.parametrize(
    ("G", "expected"), [(4, 0.5927), (8, 0.4428), (16, 0.3224), (32, 0.2301), (64, 0.1653)]
)
def test_bigmath_silent_rate_matches_reference(bigmath: pl.DataFrame, G: int, expected: float) -> None:
    p_hat = bigmath["llama8b_solve_rate"].to_numpy()
    assert expected == round(_weighted_mean(silent_probability(p_hat, G), bigmath), 4)


@pytest.mark.parametrize(("G", "expected"), [(4, 0.5859), (8, 0.4307), (16, 0.3019)])
def test_bigmath_unbiased_silent_rate_matches_reference(
    bigmath: pl.DataFrame, G: int, expected: float
) -> None:
    rate = silent_probability_unbiased(bigmath["k"].to_numpy(), bigmath["n"].to_numpy(), G)
    assert expected == round(_weighted_mean(rate, bigmath), 4)


@pytest.mark.parametrize(("p_hat", "expected_percent"), [(0.0, 4.02), (1.0, 7.16)])
def test_bigmath_share_of_prompts_silent_at_every_g(
    bigmath: pl.DataFrame, p_hat: float, expected_percent: float
) -> None:
    at = (bigmath["llama8b_solve_rate"].to_numpy() == p_hat).astype(np.float64)
    assert expected_percent == round(100 * _weighted_mean(at, bigmath), 2)


@pytest.mark.parametrize(
    ("weight", "segment", "expected_percent"),
    [
        (drgrpo_weight_limit, "extreme", 13.88),
        (grpo_weight_limit, "extreme", 24.70),
        (drgrpo_weight_limit, "medium", 22.78),
        (grpo_weight_limit, "medium", 17.47),
    ],
)
def test_bigmath_gradient_budget_share_at_infinite_g(
    bigmath: pl.DataFrame,
    weight: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    segment: str,
    expected_percent: float,
) -> None:
    p = bigmath["llama8b_solve_rate"].to_numpy()
    inside = (p < 0.1) | (p > 0.9) if segment == "extreme" else (p >= 0.4) & (p <= 0.6)
    mass = weight(p) * bigmath["count"].to_numpy()
    assert expected_percent == round(100 * mass[inside].sum() / mass.sum(), 2)


# --------------------------------------------------------------------------------------------------
# Brute force: every reward vector of a small group


@pytest.mark.parametrize("G", range(1, 11))
def test_silent_probability_matches_reward_enumeration(G: int) -> None:
    expected = [_enumerate_groups(p, G, _is_silent) for p in PROBABILITIES]
    assert pytest.approx(expected, rel=EXACT, abs=TINY) == silent_probability(PROBABILITIES, G)


@pytest.mark.parametrize("G", range(1, 11))
def test_all_right_and_all_wrong_probabilities_match_reward_enumeration(G: int) -> None:
    expected = [
        (
            _enumerate_groups(p, G, lambda r: r.min(axis=1)),
            _enumerate_groups(p, G, lambda r: 1 - r.max(axis=1)),
        )
        for p in PROBABILITIES
    ]
    actual = np.stack(
        [all_right_probability(PROBABILITIES, G), all_wrong_probability(PROBABILITIES, G)], axis=1
    )
    assert pytest.approx(np.array(expected), rel=EXACT, abs=TINY) == actual


@pytest.mark.parametrize("G", range(1, 11))
def test_expected_sigma_matches_reward_enumeration(G: int) -> None:
    expected = [_enumerate_groups(p, G, _population_std) for p in PROBABILITIES]
    assert pytest.approx(expected, rel=EXACT, abs=TINY) == expected_sigma(PROBABILITIES, G)


@pytest.mark.parametrize("G", range(1, 11))
def test_expected_bessel_sigma_matches_reward_enumeration(G: int) -> None:
    def realised_sigma(rewards: NDArray[np.float64]) -> NDArray[np.float64]:
        # The update (1/G) Σ A_i s_i with A_i = (R_i − mean) / std_bessel is (var / std_bessel) · gap.
        std_bessel = rewards.std(axis=1, ddof=1) if G > 1 else np.zeros(len(rewards))
        variance = rewards.var(axis=1)
        return np.asarray(np.divide(variance, std_bessel, out=np.zeros_like(variance), where=std_bessel > 0))

    expected = [_enumerate_groups(p, G, realised_sigma) for p in PROBABILITIES]
    assert pytest.approx(expected, rel=EXACT, abs=TINY) == expected_sigma(PROBABILITIES, G, std="bessel")


@pytest.mark.parametrize("G", range(1, 11))
def test_expected_sigma_squared_matches_reward_enumeration(G: int) -> None:
    expected = [_enumerate_groups(p, G, _population_variance) for p in PROBABILITIES]
    assert pytest.approx(expected, rel=EXACT, abs=TINY) == expected_sigma_squared(PROBABILITIES, G)


# --------------------------------------------------------------------------------------------------
# Brute force: every size-G subset of a small log of n samples


def test_unbiased_silent_probability_matches_subset_enumeration() -> None:
    expected = [_enumerate_subsets(k, n, G, _is_silent) for k, n, G in SMALL_LOGS]
    k, n, G = np.array(SMALL_LOGS).T
    assert pytest.approx(expected, rel=EXACT, abs=TINY) == silent_probability_unbiased(k, n, G)


def test_unbiased_all_right_and_all_wrong_match_subset_enumeration() -> None:
    expected = [
        (
            _enumerate_subsets(k, n, G, lambda r: r.min(axis=1)),
            _enumerate_subsets(k, n, G, lambda r: 1 - r.max(axis=1)),
        )
        for k, n, G in SMALL_LOGS
    ]
    k, n, G = np.array(SMALL_LOGS).T
    actual = np.stack(
        [all_right_probability_unbiased(k, n, G), all_wrong_probability_unbiased(k, n, G)], axis=1
    )
    assert pytest.approx(np.array(expected), rel=EXACT, abs=TINY) == actual


def test_unbiased_expected_sigma_matches_subset_enumeration() -> None:
    expected = [_enumerate_subsets(k, n, G, _population_std) for k, n, G in SMALL_LOGS]
    k, n, G = np.array(SMALL_LOGS).T
    assert pytest.approx(expected, rel=EXACT, abs=TINY) == expected_sigma_unbiased(k, n, G)


def test_unbiased_expected_sigma_squared_matches_subset_enumeration() -> None:
    expected = [_enumerate_subsets(k, n, G, _population_variance) for k, n, G in SMALL_LOGS]
    k, n, G = np.array(SMALL_LOGS).T
    assert pytest.approx(expected, rel=EXACT, abs=TINY) == expected_sigma_squared_unbiased(k, n, G)


def test_hypergeometric_pmf_matches_subset_enumeration() -> None:
    cases = [(j, k, n, G) for k, n, G in SMALL_LOGS for j in range(-1, G + 2)]

    def holding(j: int) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
        return lambda rewards: np.asarray(rewards.sum(axis=1) == j, dtype=np.float64)

    expected = [_enumerate_subsets(k, n, G, holding(j)) for j, k, n, G in cases]
    j, k, n, G = np.array(cases).T
    assert pytest.approx(expected, rel=EXACT, abs=TINY) == hypergeometric_pmf(j, n, k, G)


@pytest.mark.parametrize(
    ("k", "n", "G"), [(20, 64, 16), (700, 2000, 500), (9_000, 30_000, 1_000), (400_000, 1_000_000, 300)]
)
def test_hypergeometric_pmf_matches_exact_binomial_coefficients(k: int, n: int, G: int) -> None:
    j = np.arange(max(0, G - (n - k)), min(k, G) + 1, max(1, G // 50))
    expected = [float(Fraction(math.comb(k, i) * math.comb(n - k, G - i), math.comb(n, G))) for i in j]
    assert pytest.approx(expected, rel=EXACT, abs=TINY) == hypergeometric_pmf(j, n, k, G)


@pytest.mark.parametrize(("k", "n", "G"), [(5, 64, 8), (31, 64, 16), (64, 64, 4), (300, 1000, 100)])
def test_unbiased_expected_sigma_squared_closed_form_equals_hypergeometric_sum(
    k: int, n: int, G: int
) -> None:
    j = np.arange(G + 1)
    expected = math.fsum(hypergeometric_pmf(j, n, k, G) * j * (G - j) / G**2)
    assert pytest.approx(expected, rel=EXACT) == float(expected_sigma_squared_unbiased(k, n, G))


# --------------------------------------------------------------------------------------------------
# The identity


def _random_group(rng: np.random.Generator, G: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """0/1 rewards with 0 < k < G, and a 5-dimensional score per answer."""
    k = int(rng.integers(1, G))
    rewards = rng.permutation(np.array([1.0] * k + [0.0] * (G - k)))
    return rewards, rng.normal(size=(G, 5))


@pytest.mark.parametrize("G", range(2, 13))
def test_grpo_update_equals_sigma_times_score_gap(G: int) -> None:
    rng = np.random.default_rng(G)
    for _ in range(20):
        rewards, scores = _random_group(rng, G)
        k = int(rewards.sum())
        sigma = float(group_std(k, G))
        advantages = (rewards - k / G) / sigma
        update = (advantages[:, None] * scores).mean(axis=0)
        gap = scores[rewards == 1].mean(axis=0) - scores[rewards == 0].mean(axis=0)
        assert pytest.approx(sigma * gap, rel=1e-10, abs=1e-12) == update


@pytest.mark.parametrize("G", range(2, 13))
def test_bessel_std_update_is_bessel_factor_times_population_update(G: int) -> None:
    rng = np.random.default_rng(100 + G)
    for _ in range(20):
        rewards, scores = _random_group(rng, G)
        sigma = float(group_std(int(rewards.sum()), G))
        advantages = (rewards - rewards.mean()) / rewards.std(ddof=1)
        update = (advantages[:, None] * scores).mean(axis=0)
        gap = scores[rewards == 1].mean(axis=0) - scores[rewards == 0].mean(axis=0)
        assert pytest.approx(float(bessel_factor(G)) * sigma * gap, rel=1e-10, abs=1e-12) == update


def test_group_std_is_numpy_population_std() -> None:
    rewards = _reward_vectors(9)
    assert pytest.approx(rewards.std(axis=1), rel=EXACT, abs=TINY) == group_std(rewards.sum(axis=1), 9)


# --------------------------------------------------------------------------------------------------
# Monte Carlo

MONTE_CARLO_DRAWS = 200_000
MONTE_CARLO_CASES = [(0.05, 8), (0.3, 16), (0.5, 4), (0.9, 64)]


@pytest.mark.parametrize(("p", "G"), MONTE_CARLO_CASES)
def test_expected_sigma_matches_monte_carlo(p: float, G: int) -> None:
    k = np.random.default_rng(7).binomial(G, p, size=MONTE_CARLO_DRAWS)
    sigma = np.sqrt(k * (G - k)) / G
    standard_error = sigma.std() / math.sqrt(MONTE_CARLO_DRAWS)
    assert abs(float(expected_sigma(p, G)) - sigma.mean()) <= 4 * standard_error


@pytest.mark.parametrize(("p", "G"), MONTE_CARLO_CASES)
def test_silent_probability_matches_monte_carlo(p: float, G: int) -> None:
    k = np.random.default_rng(8).binomial(G, p, size=MONTE_CARLO_DRAWS)
    silent = ((k == 0) | (k == G)).astype(np.float64)
    expected = float(silent_probability(p, G))
    standard_error = math.sqrt(expected * (1 - expected) / MONTE_CARLO_DRAWS)
    assert abs(expected - silent.mean()) <= 4 * standard_error


# --------------------------------------------------------------------------------------------------
# Large groups


@pytest.mark.parametrize("p", [1e-7, 0.001, 0.3, 0.5, 0.999])
def test_expected_sigma_at_g100000_is_finite_and_below_its_limit(p: float) -> None:
    value = float(expected_sigma(p, 100_000))
    assert 0.0 < value <= float(grpo_weight_limit(p))


def test_fidelity_at_g100000_matches_expansion() -> None:
    assert pytest.approx(float(fidelity_expansion(0.3, 100_000)), abs=1e-6) == float(fidelity(0.3, 100_000))


def _expected_sigma_full_sum(p: float, G: int) -> float:
    """Every k from 0 to G, log-space pmf via math.lgamma, normalised, compensated sums."""
    log_pmf = [
        math.lgamma(G + 1)
        - math.lgamma(k + 1)
        - math.lgamma(G - k + 1)
        + k * math.log(p)
        + (G - k) * math.log1p(-p)
        for k in range(G + 1)
    ]
    top = max(log_pmf)
    weights = [math.exp(x - top) for x in log_pmf]
    return math.fsum(w * math.sqrt(k * (G - k)) / G for k, w in enumerate(weights)) / math.fsum(weights)


@pytest.mark.parametrize("p", [0.01, 0.3, 0.5, 0.9])
def test_expected_sigma_windowed_sum_equals_full_sum_at_g5000(p: float) -> None:
    assert pytest.approx(_expected_sigma_full_sum(p, 5000), rel=EXACT) == float(expected_sigma(p, 5000))


def test_expected_sigma_broadcasts_p_against_an_array_of_g() -> None:
    p = np.array([[0.05], [0.5], [0.0]])
    G = np.array([1, 2, 8, 1000, 5000])
    expected = [[float(expected_sigma(float(pi), int(g))) for g in G] for pi in p[:, 0]]
    assert pytest.approx(np.array(expected), rel=EXACT) == expected_sigma(p, G)


def test_expected_sigma_repeated_p_equals_distinct_p() -> None:
    p = np.tile([0.1, 0.2, 0.3], 1000)
    assert pytest.approx(np.tile(expected_sigma([0.1, 0.2, 0.3], 8), 1000), rel=EXACT) == expected_sigma(p, 8)


# --------------------------------------------------------------------------------------------------
# Properties


@FEW
@given(p=interior_p, G=st.integers(min_value=1, max_value=400))
def test_fidelity_rises_with_group_size(p: float, G: int) -> None:
    assert float(fidelity(p, G + 1)) >= float(fidelity(p, G)) * (1 - EXACT)


@FEW
@given(p=any_p, G=st.integers(min_value=1, max_value=100_000))
def test_silent_probability_is_a_probability(p: float, G: int) -> None:
    assert 0.0 <= float(silent_probability(p, G)) <= 1.0


@FEW
@given(
    p=st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True), G=st.integers(1, 10_000)
)
def test_silent_probability_does_not_rise_with_group_size(p: float, G: int) -> None:
    assert float(silent_probability(p, G + 1)) <= float(silent_probability(p, G))


@FEW
@given(p=any_p, G=st.integers(min_value=1, max_value=2_000))
def test_expected_sigma_is_at_most_root_expected_sigma_squared(p: float, G: int) -> None:
    assert float(expected_sigma(p, G)) <= math.sqrt(float(expected_sigma_squared(p, G))) * (1 + EXACT)


@FEW
@given(data=st.data(), n=st.integers(min_value=1, max_value=500))
def test_unbiased_expected_sigma_is_at_most_root_unbiased_expected_sigma_squared(
    data: st.DataObject, n: int
) -> None:
    k = data.draw(st.integers(0, n))
    G = data.draw(st.integers(1, n))
    bound = math.sqrt(float(expected_sigma_squared_unbiased(k, n, G)))
    assert float(expected_sigma_unbiased(k, n, G)) <= bound * (1 + EXACT) + 1e-15


@FEW
@given(data=st.data(), n=st.integers(min_value=1, max_value=500))
def test_unbiased_silent_probability_is_a_probability(data: st.DataObject, n: int) -> None:
    k = data.draw(st.integers(0, n))
    G = data.draw(st.integers(1, n))
    assert 0.0 <= float(silent_probability_unbiased(k, n, G)) <= 1.0 + EXACT


@FEW
@given(p=interior_p, max_silent=st.floats(min_value=1e-6, max_value=0.99))
def test_silent_group_size_is_the_smallest_group_meeting_the_bound(p: float, max_silent: float) -> None:
    G = float(silent_group_size(p, max_silent, 10**6))
    assert float(silent_probability(p, G)) <= max_silent
    assert G == 2 or float(silent_probability(p, G - 1)) > max_silent


# --------------------------------------------------------------------------------------------------
# Domain masking and options

P_KERNELS: list[Callable[[NDArray[np.float64]], NDArray[np.float64]]] = [
    lambda p: all_right_probability(p, 8),
    lambda p: all_wrong_probability(p, 8),
    lambda p: silent_probability(p, 8),
    lambda p: expected_sigma(p, 8),
    lambda p: expected_sigma(p, 8, std="bessel"),
    lambda p: expected_sigma_squared(p, 8),
    lambda p: fidelity(p, 8),
    lambda p: fidelity_expansion(p, 8),
    lambda p: grpo_weight_limit(p),
    lambda p: drgrpo_weight_limit(p),
    lambda p: group_size_law(p, 0.9),
    lambda p: silent_group_size(p, 0.1, 1000),
    lambda p: dapo_expected_draws(p),
    lambda p: dapo_expected_draws(p, cap=4),
    lambda p: dapo_still_silent_probability(p, 4),
]
UNBIASED_KERNELS: list[Callable[[float, float, float], NDArray[np.float64]]] = [
    all_right_probability_unbiased,
    all_wrong_probability_unbiased,
    silent_probability_unbiased,
    expected_sigma_unbiased,
    expected_sigma_squared_unbiased,
    lambda k, n, G: hypergeometric_pmf(1, n, k, G),
]


@pytest.mark.parametrize("kernel", P_KERNELS)
@pytest.mark.parametrize("p", [1.2, -0.1, math.nan, math.inf])
def test_probability_outside_unit_interval_gives_nan(
    kernel: Callable[[NDArray[np.float64]], NDArray[np.float64]], p: float
) -> None:
    assert np.isnan(kernel(np.array([p]))).all()


@pytest.mark.parametrize("kernel", P_KERNELS)
def test_kernels_return_float64_of_the_input_shape(
    kernel: Callable[[NDArray[np.float64]], NDArray[np.float64]],
) -> None:
    out = kernel(np.full((2, 3), 0.3))
    assert np.dtype(np.float64) == out.dtype
    assert (2, 3) == out.shape


@pytest.mark.parametrize("kernel", UNBIASED_KERNELS)
@pytest.mark.parametrize(("k", "n", "G"), [(65, 64, 8), (-1, 64, 8), (3, 64, 65), (3, 64, 0), (2.5, 64, 8)])
def test_unbiased_kernels_give_nan_outside_their_domain(
    kernel: Callable[[float, float, float], NDArray[np.float64]], k: float, n: float, G: float
) -> None:
    assert np.isnan(kernel(k, n, G))


@pytest.mark.parametrize("G", [0, -3, 2.5, math.nan])
def test_invalid_group_size_gives_nan(G: float) -> None:
    kernels = [silent_probability(0.3, G), expected_sigma(0.3, G), bessel_factor(G), drgrpo_fidelity(G)]
    assert np.isnan(kernels).all()


def test_invalid_elements_do_not_spoil_valid_ones() -> None:
    out = expected_sigma([0.5, 1.2, math.nan], 8)
    assert float(expected_sigma(0.5, 8)) == float(out[0])
    assert [True, True] == np.isnan(out[1:]).tolist()


def test_group_std_with_k_above_g_is_nan() -> None:
    assert np.isnan(group_std(9, 8))


@pytest.mark.parametrize("kernel", [expected_sigma, fidelity])
def test_unknown_std_convention_raises(kernel: Callable[..., NDArray[np.float64]]) -> None:
    with pytest.raises(ValueError, match="std"):
        kernel(0.3, 8, std="foo")


def test_unknown_std_convention_raises_for_unbiased_expected_sigma() -> None:
    with pytest.raises(ValueError, match="std"):
        expected_sigma_unbiased(3, 64, 8, std="foo")


def test_expected_sigma_is_zero_where_groups_are_always_silent() -> None:
    expected = [0.0, 0.0, 0.0]
    assert expected == expected_sigma([0.0, 1.0, 0.4], [8, 8, 1]).tolist()


def test_fidelity_is_nan_at_p_zero_and_one() -> None:
    assert np.isnan(fidelity([0.0, 1.0], 8)).all()


def test_group_size_law_is_infinite_at_p_zero_and_one() -> None:
    assert [math.inf, math.inf] == group_size_law([0.0, 1.0], 0.9).tolist()


def test_unbiased_silent_probability_at_g_equal_n_is_one_only_for_unanimous_logs() -> None:
    expected = [1.0, 0.0, 1.0]
    assert expected == silent_probability_unbiased([0, 5, 64], 64, 64).tolist()


# --------------------------------------------------------------------------------------------------
# DAPO dynamic sampling


def _simulate_dapo(
    p: float, G: int, cap: int | None, prompts: int, seed: int
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Draw groups per prompt until one is not silent (or the cap is hit): draws used, still silent."""
    rng = np.random.default_rng(seed)
    draws = np.zeros(prompts, dtype=np.int64)
    silent = np.ones(prompts, dtype=np.bool_)
    while silent.any() and (cap is None or draws.max() < cap):
        draws[silent] += 1
        k = rng.binomial(G, p, size=int(silent.sum()))
        silent[silent] = (k == 0) | (k == G)
    return draws, silent


@pytest.mark.parametrize(("p", "G", "cap"), [(0.05, 8, None), (0.9, 4, None), (0.05, 8, 4), (0.97, 16, 3)])
def test_dapo_expected_draws_match_simulated_redraws(p: float, G: int, cap: int | None) -> None:
    draws, _ = _simulate_dapo(p, G, cap, 100_000, seed=11)
    expected = float(dapo_expected_draws(silent_probability(p, G), cap=cap))
    assert abs(expected - draws.mean()) <= 4 * draws.std() / math.sqrt(draws.size)


@pytest.mark.parametrize(("p", "G", "cap"), [(0.05, 8, 4), (0.97, 16, 3), (0.5, 2, 1)])
def test_dapo_still_silent_probability_matches_simulated_redraws(p: float, G: int, cap: int) -> None:
    _, silent = _simulate_dapo(p, G, cap, 100_000, seed=12)
    expected = float(dapo_still_silent_probability(silent_probability(p, G), cap))
    assert abs(expected - silent.mean()) <= 4 * math.sqrt(expected * (1 - expected) / silent.size)


@pytest.mark.parametrize("P", [0.0, 0.2, 0.5, 0.9, 1 - 1e-9])
@pytest.mark.parametrize("cap", [1, 2, 4, 50])
def test_dapo_capped_draws_are_the_geometric_series(P: float, cap: int) -> None:
    assert pytest.approx(math.fsum(P**t for t in range(cap)), rel=EXACT) == float(
        dapo_expected_draws(P, cap=cap)
    )


def test_dapo_uncapped_draws_are_infinite_when_always_silent() -> None:
    assert math.isinf(float(dapo_expected_draws(1.0)))


def test_dapo_capped_draws_are_the_cap_when_always_silent() -> None:
    cap = 4
    assert float(cap) == float(dapo_expected_draws(1.0, cap=cap))


@pytest.mark.parametrize("cap", [0, -1, 2.5])
def test_dapo_cap_below_one_or_fractional_raises(cap: int) -> None:
    with pytest.raises(ValueError, match="cap"):
        dapo_expected_draws(0.5, cap=cap)


# --------------------------------------------------------------------------------------------------
# silent_group_size


def test_silent_group_size_is_nan_when_p_is_zero_or_one() -> None:
    assert np.isnan(silent_group_size([0.0, 1.0], 0.2, 10_000)).all()


def test_silent_group_size_is_nan_when_max_g_is_too_small() -> None:
    assert np.isnan(silent_group_size(0.01, 0.05, 100))


def test_silent_group_size_defaults_to_at_least_two() -> None:
    # One answer is always silent, so G = 1 only meets the bound max_silent = 1.
    expected = [2.0, 1.0]
    assert expected == [
        float(silent_group_size(0.5, 1.0, 10)),
        float(silent_group_size(0.5, 1.0, 10, min_G=1)),
    ]


def test_silent_group_size_respects_a_larger_min_g() -> None:
    expected = 20.0
    assert expected == float(silent_group_size(0.5, 0.1, 100, min_G=20))


def test_silent_group_size_for_one_percent_silence_at_half() -> None:
    # 2 · 0.5^G ≤ 0.01 first at G = 8 (0.0078); G = 7 gives 0.0156.
    expected = 8.0
    assert expected == float(silent_group_size(0.5, 0.01, 1000))


def test_silent_group_size_with_min_g_above_max_g_raises() -> None:
    with pytest.raises(ValueError, match="min_G"):
        silent_group_size(0.5, 0.1, max_G=4, min_G=5)


@pytest.mark.parametrize("G", [8, 64, 65, 300, 5000])
def test_expected_sigma_bits_do_not_depend_on_the_batch(G: int) -> None:
    p = np.array([0.013, 0.3, 0.5, 0.77, 0.999])
    alone = [float(expected_sigma(x, G)) for x in p]
    in_batch = expected_sigma(np.concatenate([p, np.linspace(0.001, 0.999, 257)]), G)[:5].tolist()
    assert alone == in_batch


def test_unbiased_expected_sigma_bits_do_not_depend_on_the_batch() -> None:
    k = np.array([1, 17, 40, 63])
    alone = [float(expected_sigma_unbiased(x, 64, 16)) for x in k]
    batch = expected_sigma_unbiased(np.concatenate([k, np.arange(65)]), 64, 16)[:4].tolist()
    assert alone == batch


def _sorted_distinct(*columns: NDArray[np.float64]) -> tuple[list[NDArray[np.float64]], NDArray[np.int64]]:
    """Distinct rows in lexicographic order and each row's index among them, by sorting Python tuples."""
    rows = list(zip(*(c.tolist() for c in columns), strict=True))
    distinct = sorted(set(rows))
    where = {row: i for i, row in enumerate(distinct)}
    return [np.array(c, dtype=np.float64) for c in zip(*distinct, strict=True)], np.array(
        [where[r] for r in rows]
    )


@given(
    st.lists(st.tuples(st.integers(0, 70), st.integers(0, 3000), st.integers(1, 9)), min_size=1, max_size=60)
)
def test_distinct_counts_are_the_sorted_distinct_rows(cells: list[tuple[int, int, int]]) -> None:
    # Whole numbers in a small range go through a table of keys rather than a sort: the same answer.
    columns = [np.array(c, dtype=np.float64) for c in zip(*cells, strict=True)]
    found, inverse = distinct_rows(*columns)
    expected, expected_inverse = _sorted_distinct(*columns)
    assert all(np.array_equal(a, b) for a, b in zip(found, expected, strict=True))
    assert np.array_equal(expected_inverse, inverse)


def test_distinct_rows_of_fractions_are_the_sorted_distinct_rows() -> None:
    rng = np.random.default_rng(8)
    p, G = rng.choice([0.125, 0.5, 0.75], 200), rng.choice([4.0, 8.0], 200)
    found, inverse = distinct_rows(p, G)
    expected, expected_inverse = _sorted_distinct(p, G)
    assert all(np.array_equal(a, b) for a, b in zip(found, expected, strict=True))
    assert np.array_equal(expected_inverse, inverse)

"""sigmatool.prior: closed forms against numerical integration and exact fractions, the fits' optimality
conditions, the identified bounds, the bootstrap's coverage and the Big-Math split test (docs/prior.md)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import comb

from sigmatool import kernels
from sigmatool.errors import DataError, UsageError
from sigmatool.groupsize import group_sizes
from sigmatool.kernels import Quantity
from sigmatool.kernels.beta import beta_binomial_logpmf, beta_expected_sigma
from sigmatool.prior import cells, fit_prior, p_grid
from sigmatool.prior.bootstrap import bootstrap_rate, replicate_weights
from sigmatool.prior.bounds import bounds
from sigmatool.prior.cells import binomial_matrix
from sigmatool.prior.fit import (
    EMOptions,
    fit_beta,
    mixing_weights,
    refit_masses,
    support_reduction,
)
from sigmatool.prior.groupsize import posterior_group_size
from sigmatool.prior.model import Prior
from sigmatool.prior.posterior import expected_rate, posterior_mean
from sigmatool.prior.refit import npmle_refits
from sigmatool.progress import nothing

from .conftest import BIGMATH_COUNTS

CASES = [
    ("all_right", 16),
    ("all_wrong", 16),
    ("silent", 16),
    ("sigma", 16),
    ("sigma", 300),
    ("sigma_squared", 16),
    ("grpo_limit", None),
    ("drgrpo_limit", None),
]


def _integral(f, weight) -> float:  # type: ignore[no-untyped-def]
    return float(integrate.quad(lambda p: f(p) * weight(p), 0, 1, epsabs=1e-14, epsrel=1e-13, limit=400)[0])


def _f(quantity: str, G: int | None):  # type: ignore[no-untyped-def]
    return lambda p: float(Quantity(quantity).plugin(np.array(p), G))


@pytest.mark.parametrize(("quantity", "G"), CASES)
@pytest.mark.parametrize("k", [0, 3, 8])
def test_beta_posterior_mean_matches_integration(quantity: str, G: int | None, k: int) -> None:
    prior = fit_prior([0], [8], kind=(0.7, 1.3))
    posterior = stats.beta(0.7 + k, 1.3 + 8 - k).pdf
    expected = _integral(_f(quantity, G), posterior)
    assert expected == pytest.approx(float(posterior_mean(prior, k, 8, quantity, G)), abs=1e-10)


@pytest.mark.parametrize(("quantity", "G"), CASES)
def test_mixture_posterior_mean_matches_bayes_rule(quantity: str, G: int | None) -> None:
    prior = Prior(
        "test", np.array([0.0, 1.0]), np.array([0.2, 0.1]), np.array([2.0]), np.array([3.0]), np.array([0.7])
    )
    k, n, f = 0, 5, _f(quantity, G)
    beta_part = 0.7 * _integral(lambda p: stats.binom.pmf(k, n, p) * f(p), stats.beta(2.0, 3.0).pdf)
    evidence = 0.2 + 0.7 * _integral(lambda p: stats.binom.pmf(k, n, p), stats.beta(2.0, 3.0).pdf)
    expected = (0.2 * f(0.0) + beta_part) / evidence
    assert expected == pytest.approx(float(posterior_mean(prior, k, n, quantity, G)), abs=1e-10)


def _beta_fn(x: int, y: int) -> Fraction:
    return Fraction(math.factorial(x - 1) * math.factorial(y - 1), math.factorial(x + y - 1))


def test_beta_binomial_pmf_matches_exact_fractions() -> None:
    A, B, G = 3, 5, 12
    exact = [math.comb(G, j) * _beta_fn(A + j, B + G - j) / _beta_fn(A, B) for j in range(G + 1)]
    computed = np.exp(beta_binomial_logpmf(np.arange(G + 1), G, A, B))
    assert np.allclose([float(e) for e in exact], computed, rtol=1e-13, atol=0)


def test_beta_expected_sigma_matches_exact_weights() -> None:
    A, B, G = 2, 7, 20
    weights = [math.comb(G, j) * _beta_fn(A + j, B + G - j) / _beta_fn(A, B) for j in range(G + 1)]
    expected = math.fsum(float(w) * math.sqrt(j * (G - j)) / G for j, w in enumerate(weights))
    assert expected == pytest.approx(float(beta_expected_sigma(A, B, G)), rel=1e-13)


def test_beta_expected_sigma_at_a_large_group_matches_integration() -> None:
    expected = _integral(_f("sigma", 3000), stats.beta(1.5, 40.0).pdf)
    assert expected == pytest.approx(float(beta_expected_sigma(1.5, 40.0, 3000)), abs=1e-10)


@pytest.mark.parametrize("quantity", ["silent", "sigma", "grpo_limit"])
def test_beta_reduces_to_plug_in_as_its_mass_grows(quantity: str) -> None:
    mean, G = 0.3, None if quantity == "grpo_limit" else 16
    prior = fit_prior([0], [8], kind=(mean * 1e7, (1 - mean) * 1e7))
    expected = float(Quantity(quantity).plugin(np.array(mean), G))
    assert expected == pytest.approx(float(posterior_mean(prior, 2, 8, quantity, G)), abs=1e-6)


def test_beta_fit_recovers_the_beta_of_an_exact_beta_binomial_histogram() -> None:
    k = np.arange(9)
    weight = 1e6 * np.exp(beta_binomial_logpmf(k, 8, 0.5, 0.6))
    prior = fit_beta(cells(k, 8, weight))
    assert [0.5, 0.6] == pytest.approx([prior.beta_a[0], prior.beta_b[0]], rel=1e-4)


def test_beta_fit_is_a_maximum() -> None:
    k, n = np.array([0, 1, 2, 5, 8, 4, 3]), np.array([8, 8, 8, 8, 8, 4, 4])
    prior = fit_prior(k, n, [5, 3, 2, 4, 6, 2, 1], kind="beta")
    a, b = prior.beta_a[0], prior.beta_b[0]
    c = cells(k, n, [5, 3, 2, 4, 6, 2, 1])
    for da, db in [(1.01, 1), (0.99, 1), (1, 1.01), (1, 0.99), (1.01, 1.01), (0.99, 0.99)]:
        nearby = fit_prior(k, n, [5, 3, 2, 4, 6, 2, 1], kind=(a * da, b * db))
        assert prior.log_likelihood > nearby.log_likelihood
    assert c.total == prior.prompts


def _small_data() -> np.ndarray:
    rng = np.random.default_rng(3)
    return rng.binomial(6, np.where(rng.random(400) < 0.15, 0.0, rng.beta(0.6, 0.9, 400)))


def _small_npmle(start: str, tol: float) -> tuple[Prior, np.ndarray]:
    k, grid = _small_data(), p_grid(101)
    prior = fit_prior(k, 6, kind="npmle", grid=grid, options=EMOptions(tol=tol, max_iter=50000, start=start))
    c = cells(k, 6)
    L = binomial_matrix(c, grid)
    return prior, L.T @ (c.weight / c.total / (L @ prior.atom_mass))


@pytest.fixture(scope="module")
def em_from_uniform() -> tuple[Prior, np.ndarray]:
    return _small_npmle("uniform", 1e-7)


@pytest.fixture(scope="module")
def em_from_dual() -> tuple[Prior, np.ndarray]:
    return _small_npmle("interior", 1e-8)


def test_npmle_em_never_lowers_the_likelihood(em_from_uniform) -> None:  # type: ignore[no-untyped-def]
    history = np.asarray(em_from_uniform[0].history)
    assert (np.diff(history) >= -1e-12 * np.abs(history[1:])).all()


def test_npmle_em_stops_by_its_kkt_rule(em_from_dual) -> None:  # type: ignore[no-untyped-def]
    assert em_from_dual[0].iterations < 50000


def test_npmle_gradient_is_at_most_one_everywhere(em_from_dual) -> None:  # type: ignore[no-untyped-def]
    assert em_from_dual[1].max() <= 1.0 + 1e-8


def test_npmle_gradient_is_one_on_the_support(em_from_dual) -> None:  # type: ignore[no-untyped-def]
    prior, gradient = em_from_dual
    assert np.allclose(1.0, gradient[prior.atom_mass > 1e-3], atol=1e-6)


def test_npmle_from_either_start_reaches_the_maximum(em_from_uniform, em_from_dual) -> None:  # type: ignore[no-untyped-def]
    # Concavity: the per-prompt log-likelihood is within the KKT gap of the maximum, for either start.
    uniform, dual = em_from_uniform[0], em_from_dual[0]
    assert uniform.log_likelihood / 400 == pytest.approx(dual.log_likelihood / 400, abs=1e-7 + 1e-8)


def test_npmle_dataset_mean_of_posterior_means_is_the_prior_mean(em_from_dual) -> None:  # type: ignore[no-untyped-def]
    prior = em_from_dual[0]
    expected = float(prior.atom_mass @ kernels.silent_probability(prior.atoms, 20))
    assert expected == pytest.approx(expected_rate(prior, _small_data(), 6, None, "silent", 20), abs=1e-6)


def test_summary_counts_never_solved_prompts_moved_off_zero() -> None:
    prior = fit_prior([0, 0, 4, 8], [8, 8, 8, 8], kind=(0.5, 0.5))
    summary = prior.summary()
    assert 2.0 == summary["never_solved"]
    assert 2.0 == summary["moved_off_zero"]


def test_point_masses_keep_never_solved_prompts_at_zero() -> None:
    prior = Prior("test", np.array([0.0, 0.5]), np.array([0.5, 0.5]), *(np.zeros(0),) * 3).describe(
        cells([0], [64])
    )
    expected = 0.5 * 0.5**64 / (0.5 + 0.5 * 0.5**64)
    assert expected == pytest.approx(prior.moved_off_zero, rel=1e-12)


# ------------------------------------------------------------------------------------------- group size


@pytest.mark.parametrize(("p", "target"), [(0.3, 0.95), (0.1, 0.9), (0.5, 0.99)])
def test_group_size_under_a_sharp_prior_is_the_plug_in_group_size(p: float, target: float) -> None:
    prior = fit_prior([0], [8], kind=(p * 1e9, (1 - p) * 1e9))
    expected = float(group_sizes(np.array([p]), target)[0])
    assert expected == float(posterior_group_size(prior, 4, 8, target))


def test_group_size_under_a_prior_is_the_smallest_reaching_the_target() -> None:
    prior = fit_prior([0], [8], kind=(0.6, 0.8))
    k = np.arange(9)
    G = posterior_group_size(prior, k, 8, 0.9).astype(int)
    limit = posterior_mean(prior, k, 8, "grpo_limit")
    reached = np.array([posterior_mean(prior, j, 8, "sigma", g) for j, g in zip(k, G, strict=True)])
    before = np.array([posterior_mean(prior, j, 8, "sigma", g - 1) for j, g in zip(k, G, strict=True)])
    assert (reached >= 0.9 * limit).all()
    assert (before < 0.9 * limit).all()


def test_drgrpo_group_size_under_a_prior_is_the_ceiling_of_one_over_epsilon() -> None:
    prior = fit_prior([0], [8], kind=(0.6, 0.8))
    assert [10.0, 10.0] == posterior_group_size(prior, [0, 5], 8, 0.9, objective="drgrpo").tolist()


def test_bessel_posterior_sigma_is_the_population_one_times_the_bessel_factor() -> None:
    prior = fit_prior([0], [8], kind=(0.6, 0.8))
    population = posterior_mean(prior, [0, 5], 8, "sigma", 12)
    bessel = posterior_mean(prior, [0, 5], 8, "sigma", 12, std="bessel")
    assert np.allclose(population * math.sqrt(11 / 12), bessel, rtol=1e-14)


def test_never_solved_prompt_is_reachable_under_a_beta_prior() -> None:
    prior = fit_prior([0], [8], kind=(0.5, 0.5))
    assert np.isfinite(posterior_group_size(prior, 0, 8, 0.9))


def test_prompt_is_unreachable_when_the_posterior_sits_on_zero_and_one() -> None:
    prior = Prior("test", np.array([0.0, 1.0]), np.array([0.5, 0.5]), *(np.zeros(0),) * 3)
    assert np.isnan(posterior_group_size(prior, 0, 8, 0.9))


# ------------------------------------------------------------------------------------------------ bounds


def _exact_histogram(
    grid_index: list[int], mass: list[float], n: int
) -> tuple[np.ndarray, np.ndarray, float]:
    grid = p_grid()
    p, w = grid[grid_index], np.array(mass)
    k = np.arange(n + 1)
    return k, 1e12 * (w[None, :] * stats.binom.pmf(k[:, None], n, p[None, :])).sum(axis=1), float(w.sum())


def test_bounds_shrink_to_the_truth_when_the_group_is_within_the_samples() -> None:
    grid = p_grid()
    k, weight, _ = _exact_histogram([0, 200, 500, 800], [0.1, 0.4, 0.3, 0.2], 8)
    truth = float(np.array([0.1, 0.4, 0.3, 0.2]) @ kernels.silent_probability(grid[[0, 200, 500, 800]], 8))
    b = bounds(k, 8, weight, "silent", 8)
    assert truth == pytest.approx(b.lo, abs=1e-5)
    assert truth == pytest.approx(b.hi, abs=1e-5)


def test_bounds_hold_the_truth_beyond_the_samples() -> None:
    grid = p_grid()
    index, mass = [0, 150, 420, 700, 800], [0.05, 0.3, 0.3, 0.25, 0.1]
    k, weight, _ = _exact_histogram(index, mass, 6)
    truth = float(np.array(mass) @ kernels.silent_probability(grid[index], 40))
    b = bounds(k, 6, weight, "silent", 40)
    assert b.lo <= truth <= b.hi


def test_share_bounds_hold_the_true_share() -> None:
    grid = p_grid()
    index, mass = [60, 300, 420, 700], [0.3, 0.3, 0.2, 0.2]
    k, weight, _ = _exact_histogram(index, mass, 8)
    w = np.array(mass) * kernels.grpo_weight_limit(grid[index])
    inside = (grid[index] >= 0.4) & (grid[index] <= 0.6)
    b = bounds(k, 8, weight, "grpo_limit", segment=lambda p: (p >= 0.4) & (p <= 0.6))
    assert b.lo <= float(w[inside].sum() / w.sum()) <= b.hi


def test_share_of_everything_is_one() -> None:
    b = bounds([0, 2, 3, 5], 5, [3, 4, 4, 2], "sigma", 8, segment=(0.0, 1.0))
    assert 1.0 == pytest.approx(b.lo, abs=1e-9)
    assert 1.0 == pytest.approx(b.hi, abs=1e-9)


def test_bounds_say_when_the_group_is_beyond_the_samples() -> None:
    assert bounds([0, 2, 5], 8, None, "silent", 8).identified
    assert not bounds([0, 2, 5], 8, None, "silent", 9).identified


def test_bounds_with_two_sample_sizes_hold_the_truth() -> None:
    grid = p_grid()
    index, mass = [0, 250, 640], [0.2, 0.5, 0.3]
    k4, w4, _ = _exact_histogram(index, mass, 4)
    k9, w9, _ = _exact_histogram(index, mass, 9)
    truth = float(np.array(mass) @ kernels.expected_sigma(grid[index], 12))
    b = bounds(np.r_[k4, k9], np.r_[np.full(5, 4), np.full(10, 9)], np.r_[w4, w9 / 10], "sigma", 12)
    assert b.lo <= truth <= b.hi


# --------------------------------------------------------------------------------------------- bootstrap


def test_bootstrap_interval_covers_the_truth_in_at_least_93_percent_of_datasets() -> None:
    rng = np.random.default_rng(11)
    a, b, n, G = 0.5, 0.6, 8, 8
    truth = float(stats.beta(a, b).expect(lambda p: p**G + (1 - p) ** G))
    hits = 0
    for seed in range(500):
        k = rng.binomial(n, rng.beta(a, b, 300))
        ci = bootstrap_rate(k, n, None, "silent", G, estimator="unbiased", replicates=400, seed=seed)
        hits += ci.lo <= truth <= ci.hi
    assert hits / 500 >= 0.93


@pytest.mark.slow
def test_the_npmle_interval_covers_the_truth_as_often_as_the_unbiased_one() -> None:
    # 120 datasets of 400 prompts, 16 answers each, from 15 % at p = 0 and 85 % Beta(0.5, 0.6); the silent
    # rate at G = 8 (identified), 200 replicates each, the NPMLE refitted per replicate as --ci refits it.
    rng = np.random.default_rng(12)
    truth = 0.15 + 0.85 * float(stats.beta(0.5, 0.6).expect(lambda p: p**8 + (1 - p) ** 8))
    hits = {"npmle": 0, "unbiased": 0}
    for seed in range(120):
        k = rng.binomial(16, np.where(rng.random(400) < 0.15, 0.0, rng.beta(0.5, 0.6, 400)))
        for estimator in hits:
            ci = bootstrap_rate(k, 16, None, "silent", 8, estimator=estimator, replicates=200, seed=seed)
            hits[estimator] += ci.lo <= truth <= ci.hi
    assert hits["npmle"] >= hits["unbiased"] - 3
    assert hits["npmle"] >= 0.85 * 120


@pytest.mark.slow
def test_inside_the_mixtures_the_npmle_interval_covers_the_truth_as_often_as_the_unbiased_one() -> None:
    # 100 datasets of 2,000 prompts, 6 answers each, p from Beta(0.5, 0.6): no atoms, so the fit reproduces
    # the histogram in most, and the replicates take their face centres (sigmatool.prior.centre); the silent
    # rate at G = 4 and 6 (identified), 200 replicates each.
    rng = np.random.default_rng(13)
    truth = {G: float(stats.beta(0.5, 0.6).expect(lambda p, G=G: p**G + (1 - p) ** G)) for G in (4, 6)}
    hits = {(estimator, G): 0 for estimator in ("npmle", "unbiased") for G in truth}
    reproduced = 0
    for seed in range(100):
        k = rng.binomial(6, rng.beta(0.5, 0.6, 2000))
        reproduced += fit_prior(k, 6, None, kind="npmle").reproduced
        for estimator, G in hits:
            ci = bootstrap_rate(k, 6, None, "silent", G, estimator=estimator, replicates=200, seed=seed)
            hits[estimator, G] += ci.lo <= truth[G] <= ci.hi
    assert reproduced >= 90
    for G in truth:
        assert hits["npmle", G] >= hits["unbiased", G] - 3
        assert hits["npmle", G] >= 90


def test_bootstrap_refuses_an_unbiased_estimate_beyond_the_samples() -> None:
    with pytest.raises(UsageError, match="no unbiased estimate"):
        bootstrap_rate([0, 3, 8], 8, None, "sigma", 16, estimator="unbiased")


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    first = bootstrap_rate([0, 3, 8], 8, [5, 7, 2], "silent", 4, estimator="unbiased", seed=5)
    again = bootstrap_rate([0, 3, 8], 8, [5, 7, 2], "silent", 4, estimator="unbiased", seed=5)
    assert first == again


@pytest.fixture(scope="module")
def thinned_bigmath() -> tuple[np.ndarray, np.ndarray]:
    """3,000 Big-Math prompts (seeded), 16 of their 64 answers each: the cells' k and prompt counts."""
    table = np.loadtxt(BIGMATH_COUNTS, delimiter=",", skiprows=1, usecols=(0, 3)).astype(np.int64)
    rng = np.random.default_rng(26)
    k64 = rng.choice(np.repeat(table[:, 0], table[:, 1]), 3000, replace=False)
    counts = np.bincount(rng.hypergeometric(k64, 64 - k64, 16), minlength=17)
    return np.arange(17), counts.astype(np.float64)


def _silent_mean(L: np.ndarray, grid: np.ndarray, mass: np.ndarray, w: np.ndarray, G: int) -> float:
    """The prompts' mean posterior silent probability, written out from the masses."""
    joint = L * mass[None, :]
    return float(w @ (joint @ (grid**G + (1 - grid) ** G) / joint.sum(axis=1)) / w.sum())


def test_support_reduction_reaches_the_kkt_gap_it_is_asked(thinned_bigmath: tuple) -> None:
    k, counts = thinned_bigmath
    L = binomial_matrix(cells(k, 16, counts), p_grid())
    assert support_reduction(L, counts / counts.sum(), tol=1e-6).gap <= 1e-6


def test_support_reduction_is_at_least_as_likely_as_the_em_fit(thinned_bigmath: tuple) -> None:
    k, counts = thinned_bigmath
    L, w = binomial_matrix(cells(k, 16, counts), p_grid()), counts / counts.sum()
    em, _, _ = mixing_weights(L, w, EMOptions())
    reduced = support_reduction(L, w, tol=1e-6).mass
    # Both stop within a KKT gap of 1e-6, which bounds how far each log-likelihood is from the maximum.
    assert float(w @ np.log(L @ em)) - 1e-6 <= float(w @ np.log(L @ reduced))


def test_a_replicate_refit_matches_a_cold_em_refit(thinned_bigmath: tuple) -> None:
    k, counts = thinned_bigmath
    c = cells(k, 16, counts)
    grid = p_grid()
    L = binomial_matrix(c, grid)
    start = support_reduction(L, c.weight / c.total).mass
    worst = 0.0
    for w in replicate_weights(c, 10, seed=3):
        keep = w > 0
        cold = np.zeros(grid.size)
        cold[:] = mixing_weights(L[keep], w[keep] / w.sum(), EMOptions())[0]
        warm = refit_masses(L, w / w.sum(), start)
        assert warm is not None
        worst = max(worst, abs(_silent_mean(L, grid, cold, w, 8) - _silent_mean(L, grid, warm, w, 8)))
    # REFIT_TOL's accuracy (sigmatool.prior.fit): within 6e-5 where the replicates spread by 3e-3.
    assert worst <= 1e-4


@pytest.mark.slow  # 1,000 cold refits: a reference for the warm ones
def test_the_npmle_interval_is_the_percentile_of_cold_em_refits(thinned_bigmath: tuple) -> None:
    k, counts = thinned_bigmath
    c = cells(k, 16, counts)
    grid = p_grid()
    L = binomial_matrix(c, grid)
    values = []
    for w in replicate_weights(c, 40, seed=4):
        keep = w > 0
        cold = np.zeros(grid.size)
        cold[:] = mixing_weights(L[keep], w[keep] / w.sum(), EMOptions())[0]
        values.append(_silent_mean(L, grid, cold, w, 8))
    lo, hi = np.quantile(values, [0.025, 0.975])
    ci = bootstrap_rate(k, 16, counts, "silent", 8, estimator="npmle", replicates=40, seed=4)
    assert float(lo) == pytest.approx(ci.lo, abs=1e-4)
    assert float(hi) == pytest.approx(ci.hi, abs=1e-4)


def test_the_npmle_is_the_sparse_one_support_reduction_finds(thinned_bigmath: tuple) -> None:
    k, counts = thinned_bigmath
    c = cells(k, 16, counts)
    L = binomial_matrix(c, p_grid())
    cold = support_reduction(L, c.weight / c.total)
    prior = fit_prior(k, 16, counts, kind="npmle")
    assert np.allclose(cold.mass, prior.atom_mass, rtol=0, atol=1e-15)


def test_the_npmle_has_no_more_atoms_than_its_histogram_has_cells(thinned_bigmath: tuple) -> None:
    k, counts = thinned_bigmath
    assert fit_prior(k, 16, counts, kind="npmle").summary()["support_size"] <= k.size


def test_the_npmle_is_at_least_as_likely_as_a_tight_em_fit(thinned_bigmath: tuple) -> None:
    k, counts = thinned_bigmath
    em = fit_prior(k, 16, counts, kind="npmle", options=EMOptions(tol=1e-8, max_iter=50000))
    # Each stops within its KKT gap of the maximum, which bounds how far each log-likelihood is from it.
    assert em.log_likelihood - 1e-6 * counts.sum() <= fit_prior(k, 16, counts, kind="npmle").log_likelihood


def _eight_answers() -> tuple[np.ndarray, np.ndarray]:
    """The Big-Math prompts' expected histogram of 8 of their 64 answers (hypergeometric thinning)."""
    table = np.loadtxt(BIGMATH_COUNTS, delimiter=",", skiprows=1)
    k, count, j = table[:, 0].astype(int), table[:, 3], np.arange(9)
    return j, (count[:, None] * stats.hypergeom.pmf(j[None, :], 64, k[:, None], 8)).sum(axis=0)


def test_a_fit_that_reproduces_its_histogram_is_the_interior_point_em_fit() -> None:
    # 215,608 prompts of 8 answers lie inside the set of binomial mixtures: the NPMLE is not unique there,
    # and the estimate is the spread-out one of the interior-point start and EM.
    j, counts = _eight_answers()
    c = cells(j, 8, counts)
    em = mixing_weights(binomial_matrix(c, p_grid()), c.weight / c.total, EMOptions())[0]
    prior = fit_prior(j, 8, counts, kind="npmle")
    assert prior.reproduced
    assert np.array_equal(em, prior.atom_mass)


def test_a_fit_that_does_not_reproduce_its_histogram_is_the_sparse_one(thinned_bigmath: tuple) -> None:
    k, counts = thinned_bigmath
    assert not fit_prior(k, 16, counts, kind="npmle").reproduced


def _replicate_values(L: np.ndarray, grid: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """Per replicate: the silent rate at G = 8 and 64, and the mass at p ∈ {0, 1}, from the masses alone."""
    edge = (grid == 0) | (grid == 1)
    return np.stack(
        [masses @ (grid**8 + (1 - grid) ** 8), masses @ (grid**64 + (1 - grid) ** 64), masses @ edge]
    )


@pytest.mark.parametrize("data", ["thinned", "eight"])
def test_replicate_refits_give_the_interval_of_the_estimate_refitted(
    data: str, thinned_bigmath: tuple
) -> None:
    # Every replicate fitted as the estimate is (fit_prior, cold) gives interval ends within 5 % of the
    # interval's width of the refits --ci uses, beyond n (G = 64) and at p ∈ {0, 1} too: warm support
    # reduction to REFIT_TOL where the NPMLE is unique, the interior-point start and EM where it is not.
    k, counts = thinned_bigmath if data == "thinned" else _eight_answers()
    n = 16 if data == "thinned" else 8
    c, grid = cells(k, n, counts), p_grid()
    L = binomial_matrix(c, grid)
    weights = replicate_weights(c, 40, seed=7)
    fast = _replicate_values(L, grid, npmle_refits(L, weights, fit_prior(k, n, counts, kind="npmle")))
    alone = np.asarray([fit_prior(k, n, w, kind="npmle").atom_mass for w in weights])
    slow = _replicate_values(L, grid, alone)
    ends = [np.quantile(v, [0.025, 0.975], axis=1) for v in (fast, slow)]
    width = ends[1][1] - ends[1][0]
    assert (np.abs(ends[0] - ends[1]) <= 0.05 * width).all()


# ------------------------------------------------------------------------------------ Big-Math split test


@pytest.fixture(scope="module")
def bigmath_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    table = np.loadtxt(BIGMATH_COUNTS, delimiter=",", skiprows=1)
    k, count = table[:, 0].astype(int), table[:, 3]
    j = np.arange(9)
    thinned = (count[:, None] * stats.hypergeom.pmf(j[None, :], 64, k[:, None], 8)).sum(axis=0)
    return k, count, j, thinned


def _truth(k: np.ndarray, count: np.ndarray, G: int) -> float:
    return float(count @ ((comb(k, G) + comb(64 - k, G)) / comb(64, G)) / count.sum())


def test_split_truth_is_the_theory_reference(bigmath_split) -> None:  # type: ignore[no-untyped-def]
    k, count, _, _ = bigmath_split
    assert 0.3019 == pytest.approx(_truth(k, count, 16), abs=5e-5)


def test_split_unbiased_estimate_from_8_of_64_is_the_64_sample_estimate(bigmath_split) -> None:  # type: ignore[no-untyped-def]
    k, count, j, thinned = bigmath_split
    estimate = float(thinned @ kernels.silent_probability_unbiased(j, 8, 8) / thinned.sum())
    assert _truth(k, count, 8) == pytest.approx(estimate, abs=1e-12)


def test_split_npmle_from_8_of_64_predicts_g16_within_a_point(bigmath_split) -> None:  # type: ignore[no-untyped-def]
    k, count, j, thinned = bigmath_split
    prior = fit_prior(j, 8, thinned, kind="npmle")
    assert _truth(k, count, 16) == pytest.approx(expected_rate(prior, j, 8, thinned, "silent", 16), abs=0.01)


def test_split_single_beta_misses_on_bigmath(bigmath_split) -> None:  # type: ignore[no-untyped-def]
    k, count, j, thinned = bigmath_split
    prior = fit_prior(j, 8, thinned, kind="beta")
    assert abs(_truth(k, count, 16) - expected_rate(prior, j, 8, thinned, "silent", 16)) > 0.01


@pytest.mark.parametrize("G", [8, 16, 32])
def test_split_bounds_hold_the_64_sample_value(bigmath_split, G: int) -> None:  # type: ignore[no-untyped-def]
    k, count, j, thinned = bigmath_split
    b = bounds(j, 8, thinned, "silent", G)
    assert b.lo <= _truth(k, count, G) <= b.hi


@pytest.mark.parametrize("G", [8, 16, 32])
def test_split_npmle_estimate_lies_inside_its_bounds(bigmath_split, G: int) -> None:  # type: ignore[no-untyped-def]
    _, _, j, thinned = bigmath_split
    prior = fit_prior(j, 8, thinned, kind="npmle")
    b = bounds(j, 8, thinned, "silent", G)
    assert b.lo <= expected_rate(prior, j, 8, thinned, "silent", G) <= b.hi


def test_split_bounds_at_g16_are_at_most_three_points_wide(bigmath_split) -> None:  # type: ignore[no-untyped-def]
    _, _, j, thinned = bigmath_split
    assert bounds(j, 8, thinned, "silent", 16).width <= 0.03


# ---------------------------------------------------------------------------------------------- errors


def test_k_above_n_is_a_data_error() -> None:
    with pytest.raises(DataError, match="k exceeds n"):
        fit_prior([9], [8])


def test_unknown_prior_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--prior"):
        fit_prior([1], [8], kind="gamma")


def test_quantity_without_a_group_size_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="silent needs"):
        bounds([1], [8], None, "silent")


def test_histogram_that_is_no_binomial_mixture_is_a_data_error() -> None:
    # Half the prompts all right or all wrong, half exactly 4 of 8: no mixture of Binomial(8, p) makes that.
    with pytest.raises(DataError, match="no pass-rate distribution"):
        bounds([0, 4, 8], 8, [2500, 5000, 2500], "silent", 16)


def _refits_with(
    monkeypatch: pytest.MonkeyPatch,
    thinned_bigmath: tuple,
    advance: Callable[[int], None] | None = None,
    **patches: object,
) -> tuple:
    """The refits of 23 replicates in this process alone, and shared in chunks of 4 with ``patches`` applied
    to sigmatool.prior.refit (the shared ones telling ``advance`` of their progress)."""
    from sigmatool.prior import refit

    k, counts = thinned_bigmath
    c = cells(k, 16, counts)
    L, prior = binomial_matrix(c, p_grid()), fit_prior(k, 16, counts, kind="npmle")
    weights = replicate_weights(c, 23, seed=2)
    alone = npmle_refits(L, weights, prior)
    monkeypatch.setattr(refit, "SHARED_FROM", 2)
    monkeypatch.setattr(refit, "CHUNK", 4)
    monkeypatch.setattr(refit, "_cores", lambda: 2)
    for name, value in patches.items():
        monkeypatch.setattr(refit, name, value)
    return alone, npmle_refits(L, weights, prior, advance or nothing)


def test_refits_shared_with_a_second_process_are_the_refits_of_this_one(
    thinned_bigmath: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: list[int] = []
    alone, shared = _refits_with(monkeypatch, thinned_bigmath, told.append)
    assert np.array_equal(alone, shared)
    assert 23 == sum(told)


def test_refits_are_made_here_where_no_second_process_can_start(
    thinned_bigmath: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    import multiprocessing

    def refused(method: str) -> None:
        raise OSError("no shared memory here")

    monkeypatch.setattr(multiprocessing, "get_context", refused)
    alone, shared = _refits_with(monkeypatch, thinned_bigmath)
    assert np.array_equal(alone, shared)


def helper_that_claims_and_ends(*args: object) -> None:
    """A helper process that claims the last chunk and ends without sending it (run in the spawned child)."""
    claims = args[4]
    with claims.get_lock():  # type: ignore[attr-defined]
        claims[1] -= 1  # type: ignore[index]


@pytest.mark.slow
def test_a_chunk_the_helper_claimed_and_never_sent_is_refitted_here(
    thinned_bigmath: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone, shared = _refits_with(monkeypatch, thinned_bigmath, _helper=helper_that_claims_and_ends)
    assert np.array_equal(alone, shared)

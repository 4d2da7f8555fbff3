"""sigmatool.prior.batched: the NPMLEs of many replicates fitted together equal the fits one at a time
(sigmatool.prior.fit.mixing_weights on each replicate's cells with weight), rates beyond n and the mass at
p ∈ {0, 1} included. sigmatool.prior.centre, the fits --ci takes where the NPMLE reproduces the histogram:
the analytic centre of each replicate's face, the same whatever it is fitted with, and an interval whose ends
are those of the batched fits to a stated share of its width (docs/prior.md, "Cost").

Tolerances. Rates the data identify (degree ≤ n) are unique, so they agree to 1e-6. Rates beyond n and the
share of prompts at p = 0 or 1 are not: any NPMLE within the stopping rule's KKT gap is one, and the fit
lands where its arithmetic takes it. On the 8-answer file (40 replicates) the one-at-a-time fit itself moves
by up to 1.4 % of the replicates' spread (standard deviation) when the weights are perturbed by 1e-12, and
starts 5e-12 apart end 4e-7 to 3e-5 apart at the ends; the batched fit, whose sums run in another order,
moved by 0.3–4 % of the spread. It is allowed 5 %: about half the Monte Carlo error of a 2.5 % quantile over
1,000 replicates (8.5 % of the spread).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sigmatool.prior import batched, centre
from sigmatool.prior.batched import batched_masses
from sigmatool.prior.bootstrap import replicate_weights
from sigmatool.prior.cells import Cells, binomial_matrix, cells, p_grid
from sigmatool.prior.centre import face_centres
from sigmatool.prior.dual import interior_start
from sigmatool.prior.fit import EMOptions, fit_prior, mixing_weights
from sigmatool.prior.refit import SPARSE_TOL, face_refits, npmle_refits

from .conftest import BIGMATH_COUNTS, SAMPLE

IDENTIFIED_TOL = 1e-6
SPREAD_SHARE = 0.05


def _one_at_a_time(L: np.ndarray, weights: np.ndarray) -> np.ndarray:
    out = np.zeros((weights.shape[0], L.shape[1]))
    for i, w in enumerate(weights):
        keep = w > 0
        out[i] = mixing_weights(L[keep], w[keep] / w.sum(), EMOptions())[0]
    return out


def _silent(masses: np.ndarray, G: int) -> np.ndarray:
    grid = p_grid(masses.shape[1])
    return np.asarray(masses @ (grid**G + (1.0 - grid) ** G))


def _ends(masses: np.ndarray) -> np.ndarray:
    return np.asarray(masses[:, 0] + masses[:, -1])


def _compare(
    c: Cells, replicates: int, identified: tuple[int, ...], beyond: tuple[int, ...], grid: int = 801
) -> None:
    L = binomial_matrix(c, p_grid(grid))
    weights = replicate_weights(c, replicates, seed=3)
    expected, batched = _one_at_a_time(L, weights), batched_masses(L, weights)
    for G in identified:
        assert np.abs(_silent(expected, G) - _silent(batched, G)).max() <= IDENTIFIED_TOL
    for G in beyond:
        spread = SPREAD_SHARE * float(_silent(expected, G).std())
        assert np.abs(_silent(expected, G) - _silent(batched, G)).max() <= spread
    spread = SPREAD_SHARE * float(_ends(expected).std())
    assert np.abs(_ends(expected) - _ends(batched)).max() <= spread


def _eight_answers() -> Cells:
    frame = pl.read_csv(SAMPLE / "bigmath_8_samples.csv")
    return cells(frame["k"].to_numpy(), frame["n"].to_numpy(), frame["count"].to_numpy())


def test_batched_fits_equal_single_fits_on_a_coarse_grid() -> None:
    _compare(_eight_answers(), 4, identified=(2, 4, 8), beyond=(16, 64), grid=41)


@pytest.mark.slow
def test_batched_fits_equal_single_fits_on_eight_answers() -> None:
    _compare(_eight_answers(), 12, identified=(2, 4, 8), beyond=(16,))


@pytest.mark.slow
def test_batched_fits_equal_single_fits_on_a_math_sized_sample() -> None:
    table = np.loadtxt(BIGMATH_COUNTS, delimiter=",", skiprows=1, usecols=(0, 3)).astype(np.int64)
    k = np.random.default_rng(26).choice(np.repeat(table[:, 0], table[:, 1]), 12_500, replace=False)
    _compare(cells(k, np.full(k.size, 64), None), 6, identified=(4, 8, 64), beyond=(128,))


def test_replicates_with_an_empty_cell_are_fitted_on_their_cells_with_weight() -> None:
    c = cells(np.array([0, 1, 2, 3, 4]), np.full(5, 4), np.array([30.0, 5.0, 1.0, 8.0, 20.0]))
    L = binomial_matrix(c, p_grid(21))
    weights = np.array(
        [[30.0, 6.0, 0.0, 8.0, 20.0], [29.0, 5.0, 2.0, 8.0, 20.0], [31.0, 0.0, 1.0, 8.0, 24.0]]
    )
    expected, batched = _one_at_a_time(L, weights), batched_masses(L, weights)
    assert np.abs(_silent(expected, 4) - _silent(batched, 4)).max() <= IDENTIFIED_TOL


def test_every_replicate_meets_the_single_fits_stopping_rule() -> None:
    c = _eight_answers()
    L = binomial_matrix(c, p_grid())
    weights = replicate_weights(c, 8, seed=4)
    masses = batched_masses(L, weights)
    shares = weights / weights.sum(axis=1, keepdims=True)
    gaps = ((shares / (masses @ L.T)) @ L).max(axis=1) - 1.0
    assert gaps.max() <= EMOptions().tol


def test_starts_in_batches_or_alone_equal_the_starts_together(monkeypatch: pytest.MonkeyPatch) -> None:
    c = _eight_answers()
    L = binomial_matrix(c, p_grid(41))
    weights = replicate_weights(c, 5, seed=2)
    shares = weights / weights.sum(axis=1, keepdims=True)
    together = batched.interior_starts(L, shares)
    alone = np.asarray([interior_start(L, w) for w in shares])
    assert np.abs(alone - together).max() <= 1e-9
    monkeypatch.setattr(batched, "_START_FLOATS", 2 * 9 * 9)  # two replicates per batch
    assert np.abs(together - batched._starts(L, shares)).max() <= 1e-9
    monkeypatch.setattr(batched, "_START_FLOATS", 9)  # too many cells: one start at a time
    assert np.abs(alone - batched._starts(L, shares)).max() == 0.0


# ------------------------------------------------------------------------------ face centres (--ci's fits)


@pytest.fixture(scope="module")
def thinned() -> dict[int, Cells]:
    """12,500 Big-Math prompts (seed 26) with 8 and with 5 of their 64 answers each, drawn as
    bench/latency.py's ``ci8`` and ``ci5`` draw them: data whose NPMLE reproduces its histogram."""
    table = np.loadtxt(BIGMATH_COUNTS, delimiter=",", skiprows=1, usecols=(0, 3)).astype(np.int64)
    rng = np.random.default_rng(26)
    everyone = np.repeat(table[:, 0], table[:, 1])
    k = everyone[rng.choice(everyone.size, 12_500, replace=False)]
    out = {}
    for m in (8, 5):
        out[m] = cells(rng.hypergeometric(k, 64 - k, m), np.full(k.size, m), None)
    return out


def _rates(L: np.ndarray, weights: np.ndarray, masses: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """Per replicate (rows) and G (columns): the prompts' mean posterior silent probability, as --ci values
    a replicate under its refitted prior."""
    grid = p_grid(masses.shape[1])
    fitted = masses @ L.T
    out = []
    for G in sizes:
        silent = ((masses * (grid**G + (1.0 - grid) ** G)) @ L.T) / fitted
        out.append((weights * silent).sum(axis=1) / weights.sum(axis=1))
    return np.asarray(out).T


# 8 answers against the old path's EM refits takes 4 s: a reference check, in the slow suite.
@pytest.mark.parametrize("m", [pytest.param(8, marks=pytest.mark.slow), 5])
def test_the_face_centres_interval_is_the_interior_point_and_em_fits_interval(
    m: int, thinned: dict[int, Cells]
) -> None:
    # The interval's ends of 200 replicates fitted by default (face centres, support reduction outside the
    # mixtures) against each fitted by the interior-point start and EM, as the estimate is: within 0.1 % of
    # the interval's width at G ≤ n (identified), within 2 % beyond (docs/prior.md, "Cost").
    c = thinned[m]
    L = binomial_matrix(c, p_grid())
    prior = fit_prior(c.k, c.n, c.weight, kind="npmle")
    assert prior.reproduced
    weights = replicate_weights(c, 200, seed=3)
    sizes = (2, m, 16, 64)
    fast, slow = (_rates(L, weights, npmle_refits(L, weights, prior, em=em), sizes) for em in (False, True))
    ends = [np.quantile(v, [0.025, 0.975], axis=0) for v in (fast, slow)]
    shares = np.abs(ends[0] - ends[1]) / (ends[1][1] - ends[1][0])
    assert shares[:, :2].max() <= 0.001
    assert shares[:, 2:].max() <= 0.02


def test_a_replicates_fit_is_the_same_whichever_replicates_it_is_fitted_with(
    thinned: dict[int, Cells], monkeypatch: pytest.MonkeyPatch
) -> None:
    c = thinned[8]
    L = binomial_matrix(c, p_grid())
    prior = fit_prior(c.k, c.n, c.weight, kind="npmle")
    weights = replicate_weights(c, 40, seed=5)
    together = npmle_refits(L, weights, prior)
    _, found = face_centres(L, weights / weights.sum(axis=1, keepdims=True))
    assert found.any()  # centres and support reduction's fits both
    assert not found.all()
    order = np.random.default_rng(1).permutation(40)
    assert np.array_equal(together[order], npmle_refits(L, weights[order], prior))
    assert np.array_equal(together[:7], npmle_refits(L, weights[:7], prior))
    for i in (int(np.argmax(found)), int(np.argmin(found))):
        assert np.array_equal(together[i : i + 1], npmle_refits(L, weights[i : i + 1], prior))
    monkeypatch.setattr(centre, "_BATCH_FLOATS", 3 * (9 * 9 + 45))  # three replicates per batch
    assert np.array_equal(together, npmle_refits(L, weights, prior))


def test_a_face_centre_is_the_analytic_centre_of_the_replicates_face(thinned: dict[int, Cells]) -> None:
    # max Σ log π over π ≥ 0 with L π = w: π > 0, L π = w and 1/π in the row space of L (the KKT conditions).
    c = thinned[8]
    L = binomial_matrix(c, p_grid())
    weights = replicate_weights(c, 20, seed=6)
    shares = weights / weights.sum(axis=1, keepdims=True)
    masses, found = face_centres(L, shares)
    assert found.sum() >= 10
    for mass, w in zip(masses[found], shares[found], strict=True):
        assert (mass > 0).all()
        assert np.abs(L @ mass / w - 1.0).max() <= 1e-9
        inverse = 1.0 / mass
        lam = np.linalg.lstsq(L.T, inverse, rcond=None)[0]
        assert np.abs(L.T @ lam / inverse - 1.0).max() <= 1e-6


def test_the_interior_point_start_heads_for_the_face_centre(thinned: dict[int, Cells]) -> None:
    c = thinned[5]
    L = binomial_matrix(c, p_grid())
    w = c.weight / c.total
    masses, found = face_centres(L, w[None, :])
    assert found[0]
    start = interior_start(L, w)
    assert _rates(L, w[None, :], start[None, :], (64,))[0, 0] == pytest.approx(
        _rates(L, w[None, :], masses, (64,))[0, 0], abs=1e-4
    )


def test_a_histogram_outside_the_mixtures_has_no_centre_and_gets_its_unique_npmle() -> None:
    # Fewer prompts at k = 1 and 3 of 4 than any mixture of binomials allows.
    c = cells(np.arange(5), np.full(5, 4), np.array([10.0, 1.0, 100.0, 1.0, 10.0]))
    L = binomial_matrix(c, p_grid())
    w = c.weight / c.total
    assert not face_centres(L, w[None, :])[1][0]
    mass = face_refits(L, c.weight[None, :])[0]
    assert ((w / (L @ mass)) @ L).max() <= 1.0 + SPARSE_TOL
    assert np.abs(L @ mass - w).max() > 1e-3


def test_with_em_the_refits_are_the_interior_point_and_em_fits(thinned: dict[int, Cells]) -> None:
    c = thinned[5]
    L = binomial_matrix(c, p_grid())
    weights = replicate_weights(c, 6, seed=8)
    prior = fit_prior(c.k, c.n, c.weight, kind="npmle")
    assert np.array_equal(batched_masses(L, weights), npmle_refits(L, weights, prior, em=True))


def test_cells_of_several_n_keep_the_interior_point_and_em_fits(thinned: dict[int, Cells]) -> None:
    # Every column of L sums to the number of n: L π = w leaves the simplex, and there is no centre to find.
    c8, c5 = thinned[8], thinned[5]
    k, n = np.r_[c8.k, c5.k], np.r_[c8.n, c5.n]
    c = cells(k, n, np.r_[c8.weight, c5.weight])
    L = binomial_matrix(c, p_grid())
    assert not centre.applies(L)
    weights = replicate_weights(c, 4, seed=9)
    prior = fit_prior(c.k, c.n, c.weight, kind="npmle")
    assert prior.reproduced
    assert np.array_equal(batched_masses(L, weights), npmle_refits(L, weights, prior))

"""sigmatool.prior.batched: the NPMLEs of many replicates fitted together equal the fits one at a time
(sigmatool.prior.fit.mixing_weights on each replicate's cells with weight), rates beyond n and the mass at
p ∈ {0, 1} included.

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

from sigmatool.prior import batched
from sigmatool.prior.batched import batched_masses
from sigmatool.prior.bootstrap import replicate_weights
from sigmatool.prior.cells import Cells, binomial_matrix, cells, p_grid
from sigmatool.prior.dual import interior_start
from sigmatool.prior.fit import EMOptions, mixing_weights

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

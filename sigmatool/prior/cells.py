"""The histogram of distinct (k, n) with weights that every prior, bound and bootstrap works on, and the p grid."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sigmatool.errors import DataError, UsageError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Points of the default p grid: spacing ∝ sqrt(p (1 − p)), like a binomial's sd, so the first interior point
# is 3.9e-6 from 0 and p^G stays resolved for G in the thousands.
DEFAULT_GRID_SIZE = 801


@dataclass(frozen=True)
class Cells:
    """Distinct (k, n) cells, sorted by (n, k), with their summed weight (prompts)."""

    k: IntArray
    n: IntArray
    weight: FloatArray

    @property
    def total(self) -> float:
        """Summed weight: the number of prompts when weights are counts."""
        return float(self.weight.sum())

    def with_weight(self, weight: FloatArray) -> Cells:
        """The same cells with other weights (a bootstrap replicate)."""
        return Cells(self.k, self.n, np.asarray(weight, dtype=np.float64))


def _integers(name: str, values: FloatArray, minimum: int) -> IntArray:
    bad = ~(np.isfinite(values) & (values == np.floor(values)) & (values >= minimum))
    if bad.any():
        raise DataError(
            f"{name} must hold whole numbers ≥ {minimum}; {int(bad.sum())} do not (first: {values[bad][0]!r})"
        )
    return values.astype(np.int64)


def cells(k: ArrayLike, n: ArrayLike, weight: ArrayLike | None = None) -> Cells:
    """Check counts and weights and sum the weights of equal (k, n): the distinct-cell histogram."""
    k_arr, n_arr = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64))
    w_arr = np.ones(k_arr.shape) if weight is None else np.asarray(weight, dtype=np.float64)
    if w_arr.shape != k_arr.shape:
        w_arr = np.broadcast_to(w_arr, k_arr.shape)
    k_int = _integers("k", k_arr.ravel(), 0)
    n_int = _integers("n", n_arr.ravel(), 1)
    w = w_arr.ravel()
    if (k_int > n_int).any():
        raise DataError(f"k exceeds n in {int((k_int > n_int).sum())} rows")
    if not (np.isfinite(w) & (w >= 0)).all():
        raise DataError("weights must be finite and ≥ 0")
    if not w.sum() > 0:
        raise DataError("the histogram is empty: its weights sum to 0")
    keys, inverse = np.unique(np.stack([n_int, k_int]), axis=1, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=w, minlength=keys.shape[1])
    keep = summed > 0
    return Cells(k=keys[1][keep], n=keys[0][keep], weight=np.asarray(summed[keep], dtype=np.float64))


def p_grid(size: int = DEFAULT_GRID_SIZE) -> FloatArray:
    """``size`` points on [0, 1], both ends included, at p = sin²(θ) for equally spaced θ in [0, π/2]."""
    if size < 3:
        raise UsageError(f"the p grid needs at least 3 points, not {size}")
    grid = np.sin(np.linspace(0.0, np.pi / 2.0, size)) ** 2
    grid[0], grid[-1] = 0.0, 1.0
    return np.asarray(grid, dtype=np.float64)


def binomial_matrix(c: Cells, grid: FloatArray) -> FloatArray:
    """``Bin(k_c; n_c, p_i)`` for every cell c (rows) and grid point i (columns)."""
    return binomial_pmf(c.k, c.n, grid)


def binomial_pmf(k: IntArray, n: IntArray, grid: FloatArray) -> FloatArray:
    """``Bin(k_c; n_c, p_i)`` for cells c (rows) and grid points i (columns), in log space with exact
    binomial coefficients: the pmf scipy.stats gives (to 1e-13), without the second its import costs.

    >>> binomial_pmf(np.array([0, 1]), np.array([2, 2]), np.array([0.0, 0.5, 1.0])).tolist()
    [[1.0, 0.25, 0.0], [0.0, 0.5, 0.0]]
    """
    kk, nn = np.asarray(k, dtype=np.float64)[:, None], np.asarray(n, dtype=np.float64)[:, None]
    pairs = zip(np.asarray(k).ravel().tolist(), np.asarray(n).ravel().tolist(), strict=True)
    log_choose = np.array([math.log(math.comb(int(b), int(a))) for a, b in pairs], dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p, log_q = np.log(grid)[None, :], np.log1p(-grid)[None, :]
        # 0 · log 0 = 0: at p = 0 all the mass is on k = 0, at p = 1 on k = n.
        right = np.where(kk > 0, kk * log_p, 0.0)
        wrong = np.where(kk < nn, (nn - kk) * log_q, 0.0)
    return np.asarray(np.exp(log_choose + right + wrong), dtype=np.float64)


def binomial_rows(n: int, grid: FloatArray) -> FloatArray:
    """``Bin(k; n, p)`` for k = 0 … n (rows) at every p of ``grid`` (columns) (:func:`binomial_pmf`).

    >>> binomial_rows(2, np.array([0.0, 0.5, 1.0])).tolist()
    [[1.0, 0.25, 0.0], [0.0, 0.5, 0.0], [0.0, 0.25, 1.0]]
    """
    return binomial_pmf(np.arange(n + 1), np.full(n + 1, n), grid)

"""Identified bounds: the smallest and largest value of a dataset-level quantity over every pass-rate
distribution F (on a grid of p) whose implied k-histogram matches the observed one within sampling error.

Tolerance rule (docs/prior.md). For each n group g with N_g prompts (summed weight) and observed shares
``h_j`` of k = j, j = 0 … n_g (unobserved cells included, at 0), write ``u_j = (f_j − h_j) / s_j`` with
``f_j = Σ_i π_i Bin(j; n_g, p_i)`` and ``s_j = sqrt(max(h_j, 1/N_g) / N_g)``. Neyman's χ² statistic ``Σ u_j²``
is asymptotically χ² with ``D = Σ_g n_g`` degrees of freedom at the true F, so ``{Σ u_j² ≤ r²}``,
``r² = χ²_D(level)``, is a confidence region for the histogram. It lies inside the polytope
``|u_j| ≤ r`` and ``Σ_j |u_j| ≤ sqrt(K) r`` (K cells in all), and the bounds are taken over that polytope: a
linear program (HiGHS), conservative with respect to the χ² region. One F is shared by all n groups (the
number of samples does not depend on p), as for the priors. Ratios (gradient shares) use the
Charnes–Cooper transform.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sigmatool.errors import DataError, UsageError
from sigmatool.kernels import Quantity
from sigmatool.prior.cells import Cells, cells, p_grid
from sigmatool.prior.posterior import check_quantity, check_std

FloatArray = NDArray[np.float64]
Segment = tuple[float, float] | Callable[[FloatArray], NDArray[np.bool_]]


@dataclass(frozen=True)
class Bounds:
    """``lo ≤ quantity ≤ hi`` over every F consistent with the data; ``identified`` when n pins it down."""

    lo: float
    hi: float
    identified: bool
    level: float
    radius: float

    @property
    def width(self) -> float:
        """``hi − lo``."""
        return self.hi - self.lo


@dataclass(frozen=True)
class _Constraints:
    A: FloatArray  # cells × grid: Bin(j; n_g, p_i)
    h: FloatArray  # observed shares per cell
    s: FloatArray  # scale per cell
    radius: float
    l1: float


def _constraints(c: Cells, grid: FloatArray, level: float) -> _Constraints:
    from scipy.stats import binom, chi2

    rows, shares, scales = [], [], []
    for n_g in np.unique(c.n).tolist():
        inside = c.n == n_g
        total = float(c.weight[inside].sum())
        h = np.zeros(n_g + 1)
        h[c.k[inside]] = c.weight[inside] / total
        j = np.arange(n_g + 1)
        rows.append(binom.pmf(j[:, None], n_g, grid[None, :]))
        shares.append(h)
        scales.append(np.sqrt(np.maximum(h, 1.0 / total) / total))
    df = int(np.unique(c.n).sum())
    radius = math.sqrt(float(chi2.ppf(level, df)))
    K = sum(s.size for s in scales)
    return _Constraints(
        np.vstack(rows), np.concatenate(shares), np.concatenate(scales), radius, math.sqrt(K) * radius
    )


def _solve(objective: FloatArray, con: _Constraints, ratio: FloatArray | None) -> tuple[float, float]:
    """Min and max of ``objective · π`` (or of ``objective · π / ratio · π``) over the tolerance polytope."""
    from scipy.optimize import linprog

    K, P = con.A.shape
    eye = np.eye(K)
    # Variables: π (or y = tπ), d⁺, d⁻ (cell deviations), and t for the ratio.
    t_col = np.zeros((K + 1, 0)) if ratio is None else np.concatenate([-con.h, [-1.0]])[:, None]
    A_eq = np.hstack([np.vstack([np.hstack([con.A, -eye, eye]), np.r_[np.ones(P), np.zeros(2 * K)]]), t_col])
    b_eq = np.r_[con.h, 1.0] if ratio is None else np.zeros(K + 1)
    l1_row = np.r_[np.zeros(P), 1.0 / con.s, 1.0 / con.s]
    if ratio is None:
        A_ub, b_ub = l1_row[None, :], np.array([con.l1])
        bounds = [(0.0, None)] * P + [(0.0, float(con.radius * s)) for s in np.r_[con.s, con.s]]
    else:
        box = np.hstack([np.zeros((2 * K, P)), np.eye(2 * K), -con.radius * np.r_[con.s, con.s][:, None]])
        A_ub = np.vstack([np.r_[l1_row, -con.l1][None, :], box])
        b_ub = np.zeros(2 * K + 1)
        A_eq = np.vstack([A_eq, np.r_[ratio, np.zeros(2 * K), 0.0][None, :]])
        b_eq = np.r_[b_eq, 1.0]
        bounds = [(0.0, None)] * (P + 2 * K + 1)
    cost = np.r_[objective, np.zeros(A_eq.shape[1] - P)]
    out = []
    for sign in (1.0, -1.0):
        result = linprog(
            sign * cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs"
        )
        # HiGHS may also end with status 4 ("unknown model status") and an infeasible primal when the region
        # is empty up to its tolerances (seen on a 155-prompt histogram that no binomial mixture makes).
        if result.status == 2 or (
            result.status == 4 and "primal_status is Infeasible" in str(result.message)
        ):
            raise DataError(
                "no pass-rate distribution reproduces the k-histogram within sampling error: are a prompt's "
                "answers independent draws?"
            )
        if result.status != 0:
            raise RuntimeError(f"the bounds' linear program failed: {result.message}")
        out.append(sign * float(result.fun))
    return out[0], out[1]


def segment_mask(segment: Segment, grid: FloatArray) -> NDArray[np.bool_]:
    """Grid points in the segment: ``lo ≤ p < hi`` (``≤ 1`` when hi = 1), or a callable's mask."""
    if callable(segment):
        return np.asarray(segment(grid), dtype=np.bool_)
    lo, hi = segment
    return np.asarray((grid >= lo) & ((grid < hi) | ((hi >= 1.0) & (grid <= 1.0))), dtype=np.bool_)


def identified(quantity: str, G: int | None, n: int) -> bool:
    """Whether the data's n samples per prompt pin down the mean of f: f a polynomial of degree ≤ n."""
    degree = Quantity(quantity).degree(G)
    return degree is not None and degree <= n


@dataclass(frozen=True)
class Region:
    """The pass-rate distributions on ``grid`` whose implied k-histogram matches the data (the polytope)."""

    grid: FloatArray
    constraints: _Constraints
    n_max: int

    def linear(self, objective: FloatArray) -> tuple[float, float]:
        """Min and max of ``Σ_i π_i objective_i`` over the region."""
        return _solve(np.asarray(objective, dtype=np.float64), self.constraints, None)

    def ratio(self, numerator: FloatArray, denominator: FloatArray) -> tuple[float, float]:
        """Min and max of ``Σ π numerator / Σ π denominator`` (denominator ≥ 0, positive on the region)."""
        num = np.asarray(numerator, dtype=np.float64)
        return _solve(num, self.constraints, np.asarray(denominator, dtype=np.float64))


def region(
    k: ArrayLike, n: ArrayLike, weight: ArrayLike | None, level: float = 0.95, grid: FloatArray | None = None
) -> Region:
    """The tolerance region of the histogram of counts k of n (weights: prompts), built once for many bounds."""
    if not 0.0 < level < 1.0:
        raise UsageError(f"--level must lie strictly between 0 and 1, not {level:g}")
    c = cells(k, n, weight)
    points = p_grid() if grid is None else np.asarray(grid, dtype=np.float64)
    return Region(points, _constraints(c, points, level), int(c.n.max()))


def bounds(
    k: ArrayLike,
    n: ArrayLike,
    weight: ArrayLike | None,
    quantity: str,
    G: int | None = None,
    std: str = "population",
    level: float = 0.95,
    grid: FloatArray | None = None,
    segment: Segment | None = None,
) -> Bounds:
    """Bounds on the mean of f(p) over prompts, or with ``segment`` on the share ``Σ_S f / Σ_all f``."""
    check_quantity(quantity, G)
    check_std(std)
    space = region(k, n, weight, level, grid)
    values = Quantity(quantity).plugin(space.grid, G, std)
    if segment is None:
        lo, hi = space.linear(values)
    else:
        lo, hi = space.ratio(values * segment_mask(segment, space.grid), values)
    known = identified(quantity, G, space.n_max) and segment is None
    return Bounds(lo, hi, known, level, space.constraints.radius)

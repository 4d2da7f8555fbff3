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
Charnes–Cooper transform; a mean is the ratio with denominator 1.

Solving. A :class:`Region` keeps one HiGHS model (highspy) per denominator and sense, alive between
numerators: the grid's columns enter by column generation (a coarse subset first, then the points that the
row duals price below zero, until none does), and each new numerator starts from the last optimal basis. The
answer is the whole grid's linear program's (its optimality conditions hold at every grid point), equal to
scipy's linprog over the whole grid at tight tolerances to 1e-13 (tests/test_prior_bounds.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sigmatool.errors import DataError, UsageError
from sigmatool.kernels import Quantity
from sigmatool.prior.cells import Cells, binomial_rows, cells, p_grid
from sigmatool.prior.posterior import check_quantity, check_std

if TYPE_CHECKING:
    import highspy

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
    rows, shares, scales = [], [], []
    for n_g in np.unique(c.n).tolist():
        inside = c.n == n_g
        total = float(c.weight[inside].sum())
        h = np.zeros(n_g + 1)
        h[c.k[inside]] = c.weight[inside] / total
        rows.append(binomial_rows(n_g, grid))
        shares.append(h)
        scales.append(np.sqrt(np.maximum(h, 1.0 / total) / total))
    df = int(np.unique(c.n).sum())
    radius = math.sqrt(chi2_quantile(level, df))
    K = sum(s.size for s in scales)
    return _Constraints(
        np.vstack(rows), np.concatenate(shares), np.concatenate(scales), radius, math.sqrt(K) * radius
    )


def _chi2_tail(df: int) -> Callable[[float], float]:
    """``x ↦ P(χ²_df > x)`` for a whole df: ``Q(df/2, x/2)`` in closed form, a Poisson tail for an even df and
    erfc plus half-integer terms for an odd one (each term in log space, so any df)."""
    half = 0.0 if df % 2 == 0 else 0.5
    i = np.arange(df // 2, dtype=np.float64) + half
    log_gamma = np.array([math.lgamma(v + 1.0) for v in i.tolist()])

    def tail(x: float) -> float:
        y = x / 2.0
        if y <= 0.0:
            return 1.0
        series = float(np.exp(-y + i * math.log(y) - log_gamma).sum())
        return series + (math.erfc(math.sqrt(y)) if half else 0.0)

    return tail


def chi2_quantile(level: float, df: int) -> float:
    """The ``level`` quantile of χ² with a whole number df of degrees of freedom (scipy.stats.chi2.ppf to
    1e-11, without the second that importing scipy.stats or scipy.special costs): Newton's steps on the
    closed-form tail from the Wilson–Hilferty start, kept inside a bracket that bisection narrows.

    >>> round(chi2_quantile(0.95, 1), 6), round(chi2_quantile(0.95, 64), 4)
    (3.841459, 83.6753)
    """
    z = math.sqrt(2.0) * _inverse_erfc(2.0 * (1.0 - level))
    x = max(df * (1.0 - 2.0 / (9.0 * df) + z * math.sqrt(2.0 / (9.0 * df))) ** 3, 1e-300)
    tail, lo, hi = _chi2_tail(df), 0.0, math.inf
    for _ in range(200):
        excess = (1.0 - level) - tail(x)  # < 0: x below the quantile
        lo, hi = (x, hi) if excess < 0 else (lo, x)
        density = math.exp(
            (df / 2.0 - 1.0) * math.log(x) - x / 2.0 - (df / 2.0) * math.log(2.0) - math.lgamma(df / 2.0)
        )
        step = x - excess / density if density > 0 else math.nan
        new = step if lo < step < hi else (lo + hi) / 2.0 if math.isfinite(hi) else 2.0 * x
        if abs(new - x) <= 1e-15 * x:
            return new
        x = new
    return x


def _inverse_erfc(y: float) -> float:
    """erfc⁻¹(y) to a few digits (the quantile's start only): bisection on math.erfc."""
    lo, hi = -10.0, 10.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if math.erfc(mid) > y else (lo, mid)
    return (lo + hi) / 2.0


def _rows(con: _Constraints, denominator: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The linear program's rows over the columns (d⁺, d⁻, t, then y = tπ at every grid point), and their lower
    and upper ends."""
    K, P = con.A.shape
    eye, r_s = np.eye(K), con.radius * np.r_[con.s, con.s]
    matrix = np.vstack(
        [
            np.hstack([-eye, eye, -con.h[:, None], con.A]),  # A y − d⁺ + d⁻ = t h
            np.r_[np.zeros(2 * K), -1.0, np.ones(P)][None, :],  # Σ y = t
            np.r_[1.0 / con.s, 1.0 / con.s, -con.l1, np.zeros(P)][None, :],  # Σ (d⁺ + d⁻) / s ≤ t l1
            np.hstack([np.eye(2 * K), -r_s[:, None], np.zeros((2 * K, P))]),  # d± ≤ t r s
            np.r_[np.zeros(2 * K + 1), denominator][None, :],  # denominator · y = 1
        ]
    )
    lower = np.r_[np.zeros(K + 1), np.full(2 * K + 1, -np.inf), 1.0]
    upper = np.r_[np.zeros(K + 1), np.zeros(2 * K + 1), 1.0]
    return matrix, lower, upper


# Grid points every linear program starts from (with those of its last optimum): one in STRIDE. Pricing adds
# the others that can improve the objective, so the answer is the whole grid's, at a fraction of its cost.
STRIDE = 8
# A grid point enters when its reduced cost is below −PRICING_TOLERANCE, HiGHS's dual feasibility tolerance.
PRICING_TOLERANCE = 1e-9
# Programs a region keeps (about 3 MB each with 65 cells): two shares' minimum and maximum, or two segments'.
KEPT_PROGRAMS = 8


class _Program:
    """The minimum of ``cost · π / denominator · π`` over the tolerance polytope (Charnes–Cooper: y = tπ,
    t ≥ 0, denominator · y = 1) as one HiGHS model kept alive between costs, by column generation: the model
    holds the deviations and some grid points; after each solve the row duals price every other grid point,
    and those whose reduced cost is negative enter, until none is. The optimum is then the whole grid's (an
    LP's optimality conditions). Each cost starts from the last optimal basis with the primal simplex (the
    basis stays feasible when only the cost changes), so a program serves one sense: minima and maxima
    have programs of their own."""

    def __init__(self, con: _Constraints, denominator: FloatArray) -> None:
        self.matrix, lower, upper = _rows(con, denominator)
        self.fixed = 2 * con.A.shape[0] + 1  # d⁺, d⁻, t: always in the model
        self.highs = _quiet_highs()
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            self.highs.setOptionValue(name, PRICING_TOLERANCE)
        self.highs.setOptionValue("simplex_strategy", 4)  # primal
        # Unscaled: HiGHS would rescale the model whenever columns enter, which costs more than it saves here
        # (every bound the same to 5e-11 on Big-Math, in a third less time).
        self.highs.setOptionValue("simplex_scale_strategy", 0)
        self.highs.addRows(
            lower.size, lower, upper, 0, np.zeros(lower.size, np.int32), np.zeros(0, np.int32), np.zeros(0)
        )
        self.columns = np.zeros(0, dtype=np.int64)  # the full matrix's columns in the model, in its order
        self._add(np.arange(self.fixed))
        self._add(self.fixed + np.arange(0, con.A.shape[1], STRIDE))

    def _add(self, columns: NDArray[np.int64]) -> None:
        """Put these columns of the full matrix into the model (cost 0, y ≥ 0)."""
        block = self.matrix[:, columns]
        col, row = np.nonzero(block.T)
        starts = np.searchsorted(col, np.arange(columns.size)).astype(np.int32)
        size = columns.size
        self.highs.addCols(
            size,
            np.zeros(size),
            np.zeros(size),
            np.full(size, np.inf),
            row.size,
            starts,
            row.astype(np.int32),
            block[row, col],
        )
        self.columns = np.r_[self.columns, columns].astype(np.int64)

    def minimum(self, objective: FloatArray) -> float:
        """The minimum of ``objective · π / denominator · π`` over every grid point."""
        import highspy

        cost = np.r_[np.zeros(self.fixed), objective]
        while True:
            self.highs.changeColsCost(
                self.columns.size, np.arange(self.columns.size, dtype=np.int32), cost[self.columns]
            )
            self.highs.run()
            status = self.highs.getModelStatus()
            if status != highspy.HighsModelStatus.kOptimal and self.columns.size < cost.size:
                self._add(np.setdiff1d(np.arange(cost.size), self.columns))  # the whole grid decides
                continue
            _check(self.highs, status)
            duals = np.asarray(self.highs.getSolution().row_dual)
            reduced = cost - duals @ self.matrix
            reduced[self.columns] = np.inf
            entering = _entering(reduced[self.fixed :]) + self.fixed
            if entering.size == 0:
                return float(self.highs.getInfo().objective_function_value)
            self._add(entering)


def _entering(reduced: FloatArray) -> NDArray[np.int64]:
    """The grid points to add: where the reduced cost (a smooth function of p) is negative and a local
    minimum along the grid, one for each dip instead of every point of it."""
    padded = np.r_[np.inf, reduced, np.inf]
    dips = (reduced < -PRICING_TOLERANCE) & (reduced <= padded[:-2]) & (reduced <= padded[2:])
    return np.flatnonzero(dips).astype(np.int64)


def _check(highs: highspy.Highs, status: highspy.HighsModelStatus) -> None:
    """A DataError when the region is empty, a RuntimeError when HiGHS fails otherwise."""
    import highspy

    # HiGHS may also end with an unknown model status and an infeasible primal when the region is empty up
    # to its tolerances (seen on a 155-prompt histogram that no binomial mixture makes).
    if status == highspy.HighsModelStatus.kInfeasible or (
        status != highspy.HighsModelStatus.kOptimal
        and highs.getInfo().primal_solution_status == int(highspy.kSolutionStatusInfeasible)
    ):
        raise DataError(
            "no pass-rate distribution reproduces the k-histogram within sampling error: are a prompt's "
            "answers independent draws?"
        )
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"the bounds' linear program failed: {highs.modelStatusToString(status)}")


def _quiet_highs() -> highspy.Highs:
    """A HiGHS model with its log off from the start: ``highspy.Highs()`` calls a method (enabling its
    callbacks) that prints a banner to stdout unless ``output_flag`` is already off."""
    import highspy

    class Quiet(highspy.Highs):  # highspy leaves its constructor and enableCallbacks unannotated
        def enableCallbacks(self) -> None:  # noqa: N802 (highspy's name)
            self.setOptionValue("output_flag", False)
            super().enableCallbacks()  # type: ignore[no-untyped-call]

    return Quiet()  # type: ignore[no-untyped-call]


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

    programs: dict[tuple[float, bytes], _Program] = field(default_factory=dict, compare=False, repr=False)

    def linear(self, objective: FloatArray) -> tuple[float, float]:
        """Min and max of ``Σ_i π_i objective_i`` over the region."""
        return self.ratio(objective, np.ones(self.grid.size))

    def ratio(self, numerator: FloatArray, denominator: FloatArray) -> tuple[float, float]:
        """Min and max of ``Σ π numerator / Σ π denominator`` (denominator ≥ 0, positive on the region).

        Two linear programs per denominator (the minimum and the maximum), kept for the next numerator: the
        last ``KEPT_PROGRAMS`` used (a few MB each)."""
        den = np.asarray(denominator, dtype=np.float64)
        num = np.asarray(numerator, dtype=np.float64)
        ends = []
        for sign in (1.0, -1.0):
            key = (sign, den.tobytes())
            program = self.programs.pop(key, None) or _Program(self.constraints, den)
            self.programs[key] = program  # the most recently used last
            while len(self.programs) > KEPT_PROGRAMS:
                del self.programs[next(iter(self.programs))]
            ends.append(sign * program.minimum(sign * num))
        return ends[0], ends[1]


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

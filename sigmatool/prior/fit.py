"""Fitting a prior to the histogram of distinct (k, n): one Beta by maximum likelihood, or the NPMLE by EM."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg.lapack import dposv as _posv

from sigmatool.errors import UsageError
from sigmatool.prior.cells import Cells, binomial_matrix, cells, p_grid
from sigmatool.prior.model import Prior, beta_prior, grid_prior

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
KINDS = ("beta", "npmle")

# Beta parameters are searched in [1e-6, 1e8]: a bound is reached only by degenerate data (every prompt
# k = 0, or a histogram with less spread than a binomial), and the summary shows it.
_LOG_AB_BOUNDS = (math.log(1e-6), math.log(1e8))

# The NPMLE's stopping rule: KKT gap max_i D(p_i) − 1 ≤ FIT_TOL.
FIT_TOL = 1e-6


@dataclass(frozen=True)
class EMOptions:
    """How the NPMLE is fitted: the start (``interior``: the dual barrier's point; ``uniform``: equal masses)
    and the EM's stopping rule: KKT gap ``max_i D(p_i) − 1`` ≤ ``tol`` or ``max_iter`` accelerated steps."""

    tol: float = 1e-6
    max_iter: int = 5000
    start: str = "interior"


def _beta_objective(log_ab: FloatArray, c: Cells) -> tuple[float, FloatArray]:
    """Minus the mean beta-binomial log-likelihood per prompt (k-only terms dropped), and its gradient."""
    from scipy.special import betaln, digamma

    a, b = np.exp(log_ab)
    w = c.weight / c.total
    k, rest, n = c.k.astype(np.float64), (c.n - c.k).astype(np.float64), c.n.astype(np.float64)
    value = w @ (betaln(k + a, rest + b) - betaln(a, b))
    common = digamma(a + b) - w @ digamma(n + a + b)
    grad_a = w @ digamma(k + a) - digamma(a) + common
    grad_b = w @ digamma(rest + b) - digamma(b) + common
    return -float(value), -np.array([grad_a * a, grad_b * b])


def fit_beta(c: Cells) -> Prior:
    """Beta(a, b) maximising the beta-binomial likelihood ``Σ_c w_c log BB(k_c; n_c, a, b)``."""
    from scipy.optimize import minimize

    p_hat = c.k / c.n
    w = c.weight / c.total
    mean = float(np.clip(w @ p_hat, 0.01, 0.99))
    spread = float(np.clip(w @ (p_hat - mean) ** 2, 1e-4, mean * (1 - mean) * 0.99))
    total = mean * (1 - mean) / spread - 1.0
    start = np.log([max(mean * total, 1e-3), max((1 - mean) * total, 1e-3)])
    result = minimize(
        _beta_objective, start, args=(c,), jac=True, method="L-BFGS-B", bounds=[_LOG_AB_BOUNDS] * 2
    )
    a, b = np.exp(result.x)
    return replace(beta_prior(float(a), float(b), kind="beta"), iterations=int(result.nit)).describe(c)


def _loglik(L: FloatArray, w: FloatArray, mass: FloatArray) -> float:
    with np.errstate(divide="ignore"):
        return float(w @ np.log(L @ mass))


def _em(L: FloatArray, w: FloatArray, mass: FloatArray) -> FloatArray:
    """One EM step of the mixing weights: ``mass_i ← mass_i Σ_c w_c L_ci / (L mass)_c``."""
    return np.asarray(mass * (L.T @ (w / (L @ mass))), dtype=np.float64)


def _squarem(L: FloatArray, w: FloatArray, mass: FloatArray, value: float) -> tuple[FloatArray, float]:
    """One SQUAREM step (Varadhan & Roland 2008, scheme S3), never below the plain double EM step."""
    once = _em(L, w, mass)
    twice = _em(L, w, once)
    twice_value = _loglik(L, w, twice)
    r, v = once - mass, twice - 2.0 * once + mass
    norm_v = float(np.sqrt(v @ v))
    if norm_v == 0.0:
        return twice, twice_value
    alpha = min(-1.0, -float(np.sqrt(r @ r)) / norm_v)
    while alpha < -1.0:
        jump = mass - 2.0 * alpha * r + alpha * alpha * v
        if (jump >= 0.0).all():
            jump = _em(L, w, jump / jump.sum())
            jump_value = _loglik(L, w, jump)
            if jump_value >= twice_value:
                return jump, jump_value
        alpha = (alpha - 1.0) / 2.0 if alpha < -1.01 else -1.0
    return twice, twice_value


def _gradient(L: FloatArray, w: FloatArray, mass: FloatArray) -> FloatArray:
    """``D(p_i) = Σ_c w_c L_ci / (L mass)_c``: ≤ 1 everywhere and = 1 on the support at the NPMLE."""
    return np.asarray(L.T @ (w / (L @ mass)), dtype=np.float64)


def mixing_weights(L: FloatArray, w: FloatArray, options: EMOptions) -> tuple[FloatArray, list[float], float]:
    """Maximise ``Σ_c w_c log Σ_i mass_i L_ci`` over the simplex by accelerated EM from the chosen start.

    Returns the masses, the log-likelihood after each step (non-decreasing) and the final KKT gap.
    """
    if options.start == "interior":
        from sigmatool.prior.dual import interior_start

        mass = interior_start(L, w)
    else:
        mass = np.full(L.shape[1], 1.0 / L.shape[1])
    value = _loglik(L, w, mass)
    history = [value]
    gap = float(_gradient(L, w, mass).max() - 1.0)
    while gap > options.tol and len(history) <= options.max_iter:
        mass, value = _squarem(L, w, mass, value)
        mass = mass / mass.sum()
        value = _loglik(L, w, mass)
        history.append(value)
        gap = float(_gradient(L, w, mass).max() - 1.0)
    return mass, history, gap


# Past this many distinct (k, n) cells the dual interior-point start (one cells × cells solve per Newton step;
# 8 s each at 8,942 cells on two cores) is left out: see fit_npmle.
INTERIOR_CELLS = 2_000


def fit_npmle(c: Cells, grid: FloatArray | None = None, options: EMOptions | None = None) -> Prior:
    """The Kiefer–Wolfowitz NPMLE of the pass-rate distribution on a grid of p (0 and 1 included).

    By support reduction (:func:`support_reduction`, cold) to a KKT gap of :data:`FIT_TOL`: where its fit
    does not reproduce the data's histogram, the NPMLE is unique and this is it. Where it does (the data lie
    inside the set of binomial mixtures: many NPMLEs, equal up to n moments), and with ``options``, by
    accelerated EM from the dual interior-point start (:func:`mixing_weights`): a spread-out NPMLE, the
    analytic centre of the optimal face, which predicts beyond n better than a sparse one (docs/prior.md).
    With more than :data:`INTERIOR_CELLS` distinct counts (a rollout log whose prompts have n in the hundreds),
    whose dual Newton steps solve a cells × cells system each, the support-reduction NPMLE is kept: one of
    the NPMLEs, equal to the others up to the data's own moments."""
    atoms = p_grid() if grid is None else np.asarray(grid, dtype=np.float64)
    L = binomial_matrix(c, atoms)
    w = c.weight / c.total
    reduced = support_reduction(L, w, tol=FIT_TOL, record=True) if options is None else None
    reproduced = reduced is not None and reproduces(L, w, reduced.mass, FIT_TOL)
    many = L.shape[0] > INTERIOR_CELLS  # the interior start's cells × cells solves would take minutes
    if reduced is not None and reduced.gap <= FIT_TOL and (not reproduced or many):
        mass, history, gap = reduced.mass, reduced.history, reduced.gap
    else:
        mass, history, gap = mixing_weights(L, w, options or EMOptions())
    prior = replace(grid_prior(atoms, mass), iterations=len(history) - 1, kkt_gap=gap, reproduced=reproduced)
    return replace(prior.describe(c), history=tuple(float(h) * c.total for h in history))


def fit_prior(
    k: ArrayLike,
    n: ArrayLike,
    weight: ArrayLike | None = None,
    kind: str | Sequence[float] = "npmle",
    grid: FloatArray | None = None,
    options: EMOptions | None = None,
) -> Prior:
    """Fit a prior to counts k of n (weights: prompts per row): ``beta``, ``npmle`` or a fixed (a, b)."""
    c = cells(k, n, weight)
    if not isinstance(kind, str):
        a, b = (float(x) for x in kind)
        if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
            raise UsageError(f"--prior A,B needs two positive numbers, not {a:g},{b:g}")
        return beta_prior(a, b).describe(c)
    if kind == "beta":
        return fit_beta(c)
    if kind == "npmle":
        return fit_npmle(c, grid, options)
    raise UsageError(f"--prior must be beta, npmle or A,B, not {kind!r}")


# Support reduction (see support_reduction): the first support of a cold start holds every _COARSE-th point
# of the grid; a Newton step on the support is searched back until the objective does not fall.
_COARSE = 50
_MAX_HALVINGS = 40


# A fitted probability below this is taken as this in the objective's logarithm (log 0 would be −inf).
_TINY = 1e-300


def _objective(on: FloatArray, w: FloatArray, now: FloatArray) -> float:
    """``Σ_c w_c log (L mass)_c − Σ_i mass_i`` for the support's columns ``on`` of L and masses ``now``:
    maximised over mass ≥ 0 by the NPMLE, where Σ mass = 1."""
    return float(w @ np.log(np.maximum(on @ now, _TINY))) - float(now.sum())


def _newton_target(on: FloatArray, w: FloatArray, now: FloatArray) -> FloatArray:
    """The maximiser over the support of the objective's second-order expansion at ``now``."""
    fitted = on @ now
    A = (np.sqrt(w) / fitted)[:, None] * on
    gradient = (w / fitted) @ on - 1.0
    H = A.T @ A
    scale = 1.0 / np.sqrt(np.maximum(H.diagonal(), 1e-300))
    scaled = H * scale[:, None] * scale[None, :]
    # A Gram matrix: Cholesky through LAPACK directly (numpy's solve costs more in checks than in work on
    # a support of a few dozen points); not positive definite when support points are closer than the data
    # can tell apart, then least squares.
    _, step, info = _posv(scaled, gradient * scale, lower=True)
    if info != 0:
        step = np.linalg.lstsq(scaled, gradient * scale, rcond=None)[0]
    return np.asarray(now + scale * step, dtype=np.float64)


def _reduce(L: FloatArray, w: FloatArray, mass: FloatArray, support: IntArray) -> tuple[FloatArray, IntArray]:
    """Step towards the Newton target; while it has a negative mass, stop where the first mass reaches 0,
    drop that point and aim again (Groeneboom, Jongbloed & Wellner 2008, the support reduction step)."""
    on, now = L[:, support], mass[support]
    target = _newton_target(on, w, now)
    while (target < 0).any() and support.size > 1:
        negative = target < 0
        ratios = np.where(negative, now / np.where(negative, now - target, 1.0), np.inf)
        first = int(np.argmin(ratios))
        moved = now + float(ratios[first]) * (target - now)
        moved[first] = 0.0
        keep = moved > 0
        support, now, on = support[keep], moved[keep], on[:, keep]
        target = _newton_target(on, w, now)
    before, step = _objective(on, w, now), np.maximum(target, 0.0) - now
    trial = now
    for halving in range(_MAX_HALVINGS):
        if _objective(on, w, now + 0.5**halving * step) >= before:
            trial = now + 0.5**halving * step
            break
    out = np.zeros_like(mass)
    out[support] = trial
    return out, support[trial > 0]


@dataclass(frozen=True)
class Reduced:
    """What :func:`support_reduction` ends with: the masses (normalised), the KKT gap (NaN if it did not get
    below the tolerance), the steps taken and, when asked, the log-likelihood after each."""

    mass: FloatArray
    gap: float
    steps: int
    history: list[float]


def support_reduction(
    L: FloatArray,
    w: FloatArray,
    start: FloatArray | None = None,
    tol: float = 1e-6,
    max_iter: int = 500,
    record: bool = False,
) -> Reduced:
    """The NPMLE's masses by support reduction: add the grid point of largest ``D(p_i)``, then Newton steps
    on the support's masses, until the KKT gap ``max_i D(p_i) − 1`` is ≤ ``tol`` (EM's stopping rule).

    From a cold start (every 50th grid point) it finds the sparse NPMLE; from ``start`` (a fit to nearby
    weights, e.g. the full data's for a bootstrap replicate) it needs fewer steps. ``record`` keeps the
    log-likelihood after each step. Cells without weight add nothing to the likelihood and are left out.
    """
    seen = w > 0
    L, w = L[seen], w[seen]
    mass = np.zeros(L.shape[1]) if start is None else np.array(start, dtype=np.float64)
    if start is None:
        mass[:: max(1, L.shape[1] // _COARSE)] = 1.0
        mass /= mass.sum()
    support = np.flatnonzero(mass > 0)
    history = [_loglik(L, w, mass / mass.sum())] if record else []
    for step in range(max_iter + 1):
        D = (w / (L[:, support] @ mass[support])) @ L
        best = int(np.argmax(D))
        gap = float(D[best] - 1.0)
        if gap <= tol and abs(mass.sum() - 1.0) <= tol:
            return Reduced(mass / mass.sum(), gap, step, history)
        if step == max_iter:
            break
        if mass[best] == 0.0:
            support = np.append(support, best)
        mass, support = _reduce(L, w, mass, support)
        if record:
            history.append(_loglik(L, w, mass / mass.sum()))
    return Reduced(mass / mass.sum(), math.nan, max_iter, history)


# A bootstrap replicate's refit by support reduction stops at this KKT gap. Measured on a 12,500-prompt
# MATH-sized sample of Big-Math (k of 64), 300 replicates against refits to 1e-6: the interval's ends moved by
# at most 1e-4 (rates at G = 8 to 128, spreads 0.012–0.013) and 6e-4 (the mass at p ∈ {0, 1}, spread 0.049),
# below the Monte Carlo error of those ends at 1,000 replicates; 1e-6 took three to five times as long.
REFIT_TOL = 1e-4


def reproduces(L: FloatArray, w: FloatArray, mass: FloatArray, gap: float) -> bool:
    """Whether the masses' fitted histogram may be the data's ``w``: their Kullback–Leibler divergence per
    prompt is within what the KKT gap ``gap`` of the fit allows (the log-likelihood of a fit is within ``gap``
    of the maximum). Then the data lie inside the set of binomial mixtures, or too near it to tell, and NPMLEs
    of equal likelihood may differ beyond n."""
    fitted = L @ mass
    seen = w > 0
    return float(w[seen] @ np.log(w[seen] / fitted[seen])) <= 2.0 * max(gap, 0.0) + 1e-12


def refit_masses(L: FloatArray, w: FloatArray, start: FloatArray) -> FloatArray | None:
    """The NPMLE's masses for other weights ``w`` (summing to 1) on the cells of ``L`` by support reduction
    from ``start`` (the full data's masses) to a KKT gap of :data:`REFIT_TOL`; None where that is not the
    NPMLE :func:`fit_npmle` gives (the fit reproduces ``w``, or does not get there)."""
    reduced = support_reduction(L, w, start, REFIT_TOL)
    if reduced.gap <= REFIT_TOL and not reproduces(L, w, reduced.mass, reduced.gap):
        return reduced.mass
    return None

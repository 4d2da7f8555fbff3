"""Fitting a prior to the histogram of distinct (k, n): one Beta by maximum likelihood, or the NPMLE by EM."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sigmatool.errors import UsageError
from sigmatool.prior.cells import Cells, binomial_matrix, cells, p_grid
from sigmatool.prior.model import Prior, beta_prior, grid_prior

FloatArray = NDArray[np.float64]
KINDS = ("beta", "npmle")

# Beta parameters are searched in [1e-6, 1e8]: a bound is reached only by degenerate data (every prompt
# k = 0, or a histogram with less spread than a binomial), and the summary shows it.
_LOG_AB_BOUNDS = (math.log(1e-6), math.log(1e8))


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


def fit_npmle(c: Cells, grid: FloatArray | None = None, options: EMOptions | None = None) -> Prior:
    """The Kiefer–Wolfowitz NPMLE of the pass-rate distribution on a grid of p (0 and 1 included)."""
    atoms = p_grid() if grid is None else np.asarray(grid, dtype=np.float64)
    L = binomial_matrix(c, atoms)
    mass, history, gap = mixing_weights(L, c.weight / c.total, options or EMOptions())
    prior = replace(grid_prior(atoms, mass), iterations=len(history) - 1, kkt_gap=gap)
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

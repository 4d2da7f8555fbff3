"""A starting point for the NPMLE: a log-barrier Newton method on the dual of Kiefer–Wolfowitz's problem.

Primal (weights w summing to 1): maximise ``Σ_c w_c log (L π)_c`` over the simplex. Dual (Koenker & Mizera
2014, "Convex optimization, shape constraints, compound decisions, and empirical Bayes rules", JASA 109):
minimise ``−Σ_c w_c log ν_c`` subject to ``Lᵀ ν ≤ 1``; at the optimum ``(L π)_c = w_c / ν_c``. The barrier
``−Σ w log ν − t Σ_i log(1 − (Lᵀν)_i)`` has C variables only, so each Newton step is one C × C solve; the
multipliers ``π_i = t / (1 − (Lᵀν)_i)`` are the primal point, with duality gap about t · (grid size).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# The barrier stops at t · (grid size) ≤ this: smaller t would leave slacks 1 − Lᵀν near float64 rounding,
# and the primal point t / slack would lose its digits; EM finishes the job from there.
_GAP = 1e-7
_SHRINK = 0.1
_NEWTON_TOL = 1e-10
_MAX_NEWTON = 200


def _barrier(L: FloatArray, w: FloatArray, nu: FloatArray, t: float) -> float:
    slack = 1.0 - L.T @ nu
    if (nu <= 0).any() or (slack <= 0).any():
        return float("inf")
    return float(-(w @ np.log(nu)) - t * np.log(slack).sum())


def _center(L: FloatArray, w: FloatArray, nu: FloatArray, t: float) -> FloatArray:
    """Newton's method with backtracking on the barrier at a fixed t."""
    for _ in range(_MAX_NEWTON):
        inv_slack = 1.0 / (1.0 - L.T @ nu)
        grad = -w / nu + t * (L @ inv_slack)
        hess = (L * (t * inv_slack**2)) @ L.T
        hess[np.diag_indices_from(hess)] += w / nu**2
        scale = 1.0 / np.sqrt(np.diag(hess))
        step = -scale * np.linalg.solve(hess * scale[:, None] * scale[None, :], grad * scale)
        decrement = float(-grad @ step)
        if decrement / 2.0 < _NEWTON_TOL:
            break
        size, before = 1.0, _barrier(L, w, nu, t)
        while _barrier(L, w, nu + size * step, t) > before - 0.25 * size * decrement and size > 1e-12:
            size *= 0.5
        nu = nu + size * step
    return nu


def interior_start(L: FloatArray, w: FloatArray) -> FloatArray:
    """Mixing weights within a duality gap of about 1e-7 of the NPMLE (rows of L: cells; columns: grid)."""
    nu = np.full(L.shape[0], 0.5 / float(L.sum(axis=0).max()))
    t = 1.0
    while True:
        nu = _center(L, w, nu, t)
        if t * L.shape[1] <= _GAP:
            break
        t *= _SHRINK
    mass = t / (1.0 - L.T @ nu)
    return np.asarray(mass / mass.sum(), dtype=np.float64)

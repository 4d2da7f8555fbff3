"""The NPMLE fitted to many weightings of the same cells at once (a bootstrap's replicates).

A bootstrap of prompts over the distinct (k, n) cells only reweights the cells, so every replicate's fit
uses the same binomial matrix L (cells × grid). This module runs :func:`sigmatool.prior.fit.mixing_weights`
— the dual interior-point start (:mod:`sigmatool.prior.dual`), then accelerated EM to the same KKT gap —
for R weightings together: the same steps, the same step-size choices and the same stopping rule per
replicate, with the matrix products of all replicates done as one matrix–matrix product. A replicate that
has met its stopping rule is set aside (its rows masked) while the others go on, so each stops where its
own fit would; the answers differ from one fit at a time only by the order of floating-point sums.

``--ci`` fits such replicates by the centres of their faces (:mod:`sigmatool.prior.centre`); this, the
estimate's own fit on every replicate, remains for cells of several n, which have no centre there, and to
measure the centres against (:func:`sigmatool.prior.refit.npmle_refits` with ``em``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from sigmatool.prior.dual import _GAP, _MAX_NEWTON, _NEWTON_TOL, _SHRINK, interior_start
from sigmatool.prior.fit import EMOptions, mixing_weights
from sigmatool.progress import nothing

FloatArray = NDArray[np.float64]

# The starts' largest arrays, in floats (64 MB): the grid's products of cell pairs (grid × C(C + 1)/2; past
# this, about 140 cells on the default grid, each start is computed alone) and a batch's Hessians (rows × C²).
_START_FLOATS = 1 << 23


def _barriers(L: FloatArray, W: FloatArray, nu: FloatArray, t: float) -> FloatArray:
    """The dual barrier of each row (:func:`sigmatool.prior.dual._barrier`), inf where infeasible."""
    slack = 1.0 - nu @ L
    bad = (nu <= 0).any(axis=1) | (slack <= 0).any(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = -(W * np.log(nu)).sum(axis=1) - t * np.log(slack).sum(axis=1)
    return np.where(bad, np.inf, value)


def _newton_steps(
    L: FloatArray, pairs: FloatArray, W: FloatArray, nu: FloatArray, t: float
) -> tuple[FloatArray, FloatArray]:
    """Each row's Newton step on the barrier at t and its decrement; ``pairs`` (:func:`_pairs`) makes the
    upper triangle of every row's Hessian ``L diag(t / slack²) Lᵀ`` one matrix product."""
    C = L.shape[0]
    rows, cols = np.triu_indices(C)
    inv_slack = 1.0 / (1.0 - nu @ L)
    grad = -W / nu + t * (inv_slack @ L.T)
    triangle = (t * inv_slack**2) @ pairs
    hess = np.empty((nu.shape[0], C, C))
    hess[:, rows, cols] = triangle
    hess[:, cols, rows] = triangle
    hess[:, np.arange(C), np.arange(C)] += W / nu**2
    scale = 1.0 / np.sqrt(np.diagonal(hess, axis1=1, axis2=2))
    scaled = hess * scale[:, :, None] * scale[:, None, :]
    step = -scale * np.linalg.solve(scaled, (grad * scale)[:, :, None])[:, :, 0]
    return step, -(grad * step).sum(axis=1)


def _pairs(L: FloatArray) -> FloatArray:
    """``pairs[i, j] = L_ai L_bi`` for the j-th pair a ≤ b of cells (grid × C(C + 1)/2)."""
    rows, cols = np.triu_indices(L.shape[0])
    return np.ascontiguousarray((L[rows] * L[cols]).T)


def _center(L: FloatArray, pairs: FloatArray, W: FloatArray, nu: FloatArray, t: float) -> FloatArray:
    """:func:`sigmatool.prior.dual._center` for every row: Newton with backtracking until each row's
    decrement is below the tolerance (that row then stays where it is)."""
    nu = nu.copy()
    active = np.arange(nu.shape[0])
    for _ in range(_MAX_NEWTON):
        if active.size == 0:
            break
        step, decrement = _newton_steps(L, pairs, W[active], nu[active], t)
        going = decrement / 2.0 >= _NEWTON_TOL
        active, step, decrement = active[going], step[going], decrement[going]
        now, w = nu[active], W[active]
        size, before = np.ones(active.size), _barriers(L, w, now, t)
        while True:
            worse = _barriers(L, w, now + size[:, None] * step, t) > before - 0.25 * size * decrement
            worse &= size > 1e-12
            if not worse.any():
                break
            size[worse] *= 0.5
        nu[active] = now + size[:, None] * step
    return nu


def interior_starts(L: FloatArray, W: FloatArray) -> FloatArray:
    """:func:`sigmatool.prior.dual.interior_start` for each row of weights ``W`` (replicates × cells, every
    weight positive, rows summing to 1): the same path of t, the same Newton steps per row."""
    pairs = _pairs(L)
    nu = np.full(W.shape, 0.5 / float(L.sum(axis=0).max()))
    t = 1.0
    while True:
        nu = _center(L, pairs, W, nu, t)
        if t * L.shape[1] <= _GAP:
            break
        t *= _SHRINK
    mass = t / (1.0 - nu @ L)
    return np.asarray(mass / mass.sum(axis=1, keepdims=True), dtype=np.float64)


def _starts(L: FloatArray, W: FloatArray) -> FloatArray:
    """:func:`interior_starts` in batches whose Hessians fit in :data:`_START_FLOATS`, or one at a time
    (:func:`sigmatool.prior.dual.interior_start`) when the cells are too many for the pairs' products."""
    C, M = L.shape
    if C * (C + 1) // 2 * M > _START_FLOATS:
        return np.asarray([interior_start(L, w) for w in W], dtype=np.float64)
    rows = max(1, _START_FLOATS // (C * C))
    return np.concatenate([interior_starts(L, W[i : i + rows]) for i in range(0, W.shape[0], rows)])


def _em(L: FloatArray, W: FloatArray, mass: FloatArray) -> FloatArray:
    """One EM step per row (:func:`sigmatool.prior.fit._em`): two matrix products for all rows."""
    return np.asarray(mass * ((W / (mass @ L.T)) @ L), dtype=np.float64)


def _loglik(L: FloatArray, W: FloatArray, mass: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore"):
        return np.asarray((W * np.log(mass @ L.T)).sum(axis=1), dtype=np.float64)


def _gradients(L: FloatArray, W: FloatArray, mass: FloatArray) -> FloatArray:
    """Each row's ``D(p_i) = Σ_c w_c L_ci / (L mass)_c``: its maximum − 1 is the KKT gap, and ``mass · D`` the
    next EM step."""
    return np.asarray((W / (mass @ L.T)) @ L, dtype=np.float64)


def _squarem(L: FloatArray, W: FloatArray, mass: FloatArray, gradient: FloatArray) -> FloatArray:
    """:func:`sigmatool.prior.fit._squarem` for every row (``gradient``: :func:`_gradients` at ``mass``):
    each row's own step length, backtracked alone."""
    once = mass * gradient
    twice = _em(L, W, once)
    twice_value = _loglik(L, W, twice)
    r, v = once - mass, twice - 2.0 * once + mass
    norm_v = np.sqrt((v * v).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.minimum(-1.0, -np.sqrt((r * r).sum(axis=1)) / norm_v)
    out = twice.copy()
    pending = (norm_v > 0.0) & (alpha < -1.0)
    while pending.any():
        rows = np.flatnonzero(pending)
        a = alpha[rows, None]
        jump = mass[rows] - 2.0 * a * r[rows] + a * a * v[rows]
        feasible = (jump >= 0.0).all(axis=1)
        tried = rows[feasible]
        if tried.size:
            moved = jump[feasible]
            moved = _em(L, W[tried], moved / moved.sum(axis=1, keepdims=True))
            better = _loglik(L, W[tried], moved) >= twice_value[tried]
            out[tried[better]] = moved[better]
            pending[tried[better]] = False
        left = rows[pending[rows]]
        alpha[left] = np.where(alpha[left] < -1.01, (alpha[left] - 1.0) / 2.0, -1.0)
        pending[left] = alpha[left] < -1.0
    return np.asarray(out, dtype=np.float64)


def _em_rows(
    L: FloatArray, W: FloatArray, mass: FloatArray, options: EMOptions, advance: Callable[[int], None]
) -> FloatArray:
    """Accelerated EM per row from ``mass`` until its KKT gap is ≤ ``options.tol`` (or ``max_iter`` steps),
    as :func:`sigmatool.prior.fit.mixing_weights` runs it; rows that have stopped are left out, and
    ``advance`` is told how many stopped at each step."""
    mass = mass.copy()
    steps = np.zeros(W.shape[0], dtype=np.int64)
    gradient = _gradients(L, W, mass)
    going = gradient.max(axis=1) - 1.0 > options.tol
    active, gradient = np.flatnonzero(going), gradient[going]
    advance(W.shape[0] - active.size)
    while active.size:
        moved = _squarem(L, W[active], mass[active], gradient)
        moved /= moved.sum(axis=1, keepdims=True)
        mass[active] = moved
        steps[active] += 1
        gradient = _gradients(L, W[active], moved)
        going = (gradient.max(axis=1) - 1.0 > options.tol) & (steps[active] < options.max_iter)
        active, gradient = active[going], gradient[going]
        advance(going.size - active.size)
    return mass


def batched_masses(
    L: FloatArray,
    W: FloatArray,
    options: EMOptions | None = None,
    advance: Callable[[int], None] = nothing,
) -> FloatArray:
    """The NPMLE's masses (rows) for each row of cell weights ``W`` (replicates × cells, any scale), as
    :func:`sigmatool.prior.fit.mixing_weights` fits each on its cells with weight; rows with an empty cell
    (whose start is fitted on fewer cells) are fitted one at a time. ``advance`` is told of each finished fit."""
    options = options or EMOptions()
    W = np.asarray(W, dtype=np.float64)
    W = W / W.sum(axis=1, keepdims=True)
    out = np.zeros((W.shape[0], L.shape[1]))
    full = (W > 0).all(axis=1)
    if full.any():
        rows = W[full]
        start = _starts(L, rows) if options.start == "interior" else np.full(rows.shape, 1.0 / L.shape[1])
        out[full] = _em_rows(L, rows, start, options, advance)
    for i in np.flatnonzero(~full).tolist():
        keep = W[i] > 0
        out[i] = mixing_weights(L[keep], W[i, keep], options)[0]
        advance(1)
    return out

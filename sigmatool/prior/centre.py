"""The analytic centre of the NPMLE's optimal face, for many histograms on the same cells at once.

Where the cells' weights w (summing to 1) are a mixture of the grid's binomials, the NPMLE is not unique:
every mixture π ≥ 0 with ``L π = w`` has the largest likelihood (the optimal face). The estimate of such data
is the interior-point start's point (:mod:`sigmatool.prior.dual`), which follows the barrier's path towards
the face's analytic centre, the π on it maximising ``Σ_i log π_i``, then EM from there
(:func:`sigmatool.prior.fit.fit_npmle`). The barrier stops where its slacks ``1 − Lᵀν`` lose their digits to
rounding, and EM's steps from there along the flat face end where their arithmetic takes them. Here the
centre itself is found, by Newton's method on its dual (C variables per histogram, no barrier parameter)::

    minimise  g(λ) = λ·w − Σ_i log (Lᵀλ)_i   over Lᵀλ > 0;   then π_i = 1 / (Lᵀλ)_i and L π = w.

g is self-concordant, so Newton's method with a backtracking search converges from any start, and a step
whose decrement is below 1/4 stays inside the domain and converges quadratically. Its KKT gap is 0 up to
rounding: EM would not move it. The masses sum to 1 when every column of L does (every count k of one n:
:func:`applies`). A histogram outside the mixtures has no centre: a point with Lᵀλ > 0 and λ·w ≤ 0 proves it
(any mixture would give λ·w = Σ_i (Lᵀλ)_i π_i > 0), and Newton's method finds one in a few steps.

Each histogram's fit is its own: the matrix products are taken row by row (a matrix–matrix product's
rounding depends on the rows computed beside it), and the step sizes and the stopping rule are per row, so a
bootstrap replicate's centre is the same whichever replicates it is computed with, in whichever process.
"""

from __future__ import annotations

import contextlib

import numpy as np
from numpy.typing import NDArray

from sigmatool.prior.batched import _START_FLOATS, _pairs
from sigmatool.prior.fit import FIT_TOL

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

# A row stops after the step whose squared Newton decrement is at most this (its masses then move by about
# 1e-7 relative, and after the step by about 1e-14), or after this many steps (near the mixtures' boundary,
# where the centre is poorly conditioned: such a row has no centre here).
_NEWTON_TOL = 1e-14
_MAX_STEPS = 100
# Below this decrement (its root) the full Newton step is taken: it stays within a quarter of each Lᵀλ of
# where it starts, and the backtracking's test would compare values that agree to rounding.
_FULL_STEP = 0.25
# A batch of rows holds at most this many floats in its Hessians, products of pairs and masses (64 MB).
_BATCH_FLOATS = 1 << 23


def _rows(X: FloatArray, A: FloatArray) -> FloatArray:
    """``X @ A`` row by row (one BLAS call per row): each row's product the same whatever rows are beside it."""
    return np.asarray(np.matmul(X[:, None, :], A)[:, 0], dtype=np.float64)


def _dual(L: FloatArray, W: FloatArray, lam: FloatArray) -> FloatArray:
    """Each row's ``g(λ)``, inf outside the domain."""
    at = _rows(lam, L)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (lam * W).sum(axis=1) - np.log(at).sum(axis=1)
    return np.where((at > 0).all(axis=1), value, np.inf)


def _newton(
    L: FloatArray, LT: FloatArray, pairs: FloatArray, W: FloatArray, lam: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Each row's Newton step and squared decrement: gradient ``w − L π``, Hessian ``L diag(π²) Lᵀ`` (its
    upper triangle one product with ``pairs``, :func:`sigmatool.prior.batched._pairs`), solved scaled."""
    C = L.shape[0]
    rows, cols = np.triu_indices(C)
    pi = 1.0 / _rows(lam, L)
    grad = W - _rows(pi, LT)
    triangle = _rows(pi * pi, pairs)
    hess = np.empty((lam.shape[0], C, C))
    hess[:, rows, cols] = triangle
    hess[:, cols, rows] = triangle
    scale = 1.0 / np.sqrt(np.diagonal(hess, axis1=1, axis2=2))
    scaled = hess * scale[:, :, None] * scale[:, None, :]
    step = -scale * _solved(scaled, grad * scale)
    return step, -(grad * step).sum(axis=1)


def _solved(A: FloatArray, b: FloatArray) -> FloatArray:
    """Each row's ``A x = b`` (LAPACK per row); NaN for a matrix that rounding left singular."""
    try:
        return np.asarray(np.linalg.solve(A, b[:, :, None])[:, :, 0], dtype=np.float64)
    except np.linalg.LinAlgError:
        out = np.full(b.shape, np.nan)
        for i in range(b.shape[0]):
            with contextlib.suppress(np.linalg.LinAlgError):
                out[i] = np.linalg.solve(A[i : i + 1], b[i : i + 1, :, None])[0, :, 0]
        return out


def _sizes(
    L: FloatArray, W: FloatArray, lam: FloatArray, step: FloatArray, decrement: FloatArray
) -> FloatArray:
    """Each row's step size: 1 below :data:`_FULL_STEP`, else halved from 1 until g falls by a quarter of
    what the Newton model promises."""
    size = np.ones(lam.shape[0])
    far = np.flatnonzero(decrement >= _FULL_STEP**2)
    before = _dual(L, W[far], lam[far])
    while far.size:
        worse = (
            _dual(L, W[far], lam[far] + size[far, None] * step[far])
            > before - 0.25 * size[far] * decrement[far]
        )
        worse &= size[far] > 1e-12
        far, before = far[worse], before[worse]
        size[far] *= 0.5
    return size


def _solve(L: FloatArray, LT: FloatArray, pairs: FloatArray, W: FloatArray) -> tuple[FloatArray, BoolArray]:
    """Newton's method from ``Lᵀλ = grid size`` (equal masses) for each row; the final λ, and which rows met
    the stopping rule (not those shown to lie outside the mixtures, nor those out of steps)."""
    lam = np.full(W.shape, float(L.shape[1]))
    converged = np.zeros(W.shape[0], dtype=bool)
    active = np.arange(W.shape[0])
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # a NaN ends its row
        for _ in range(_MAX_STEPS):
            if active.size == 0:
                break
            w, now = W[active], lam[active]
            step, decrement = _newton(L, LT, pairs, w, now)
            outside = (now * w).sum(axis=1) <= 0.0
            # NaN, or a decrement below −tol: rounding has left the Hessian indefinite (many cells, whose
            # binomials are nearly dependent).
            lost = ~(decrement >= -_NEWTON_TOL)
            done = (decrement <= _NEWTON_TOL) & ~outside & ~lost
            lam[active] = now + _sizes(L, w, now, step, decrement)[:, None] * step
            converged[active[done]] = True
            active = active[~done & ~outside & ~lost]
    return lam, converged


def _masses(L: FloatArray, LT: FloatArray, W: FloatArray, lam: FloatArray) -> tuple[FloatArray, BoolArray]:
    """Each row's masses ``π_i = 1 / (Lᵀλ)_i``, normalised, and whether they are a face centre: their fitted
    histogram the row's to :data:`sigmatool.prior.fit.FIT_TOL` relative, and their KKT gap
    ``max_i D(p_i) − 1`` within it (a row outside the mixtures can stop where some ``Lᵀλ`` nears 0, on
    masses that fit it less well)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        pi = 1.0 / _rows(lam, L)
        mass = pi / pi.sum(axis=1, keepdims=True)
        fitted = _rows(mass, LT)
        gap = _rows(W / fitted, L).max(axis=1) - 1.0
        misfit = np.abs(fitted / W - 1.0).max(axis=1)
    return mass, (gap <= FIT_TOL) & (misfit <= FIT_TOL)


def applies(L: FloatArray) -> bool:
    """Whether the cells of ``L`` can have face centres here: every column sums to 1 (every count k of one
    n, so that ``L π = w`` puts the masses on the simplex), and the grid's products of pairs fit in
    :data:`sigmatool.prior.batched._START_FLOATS` (at most about 140 cells)."""
    C, M = L.shape
    return bool(np.abs(L.sum(axis=0) - 1.0).max() <= 1e-9) and C * (C + 1) // 2 * M <= _START_FLOATS


def face_centres(L: FloatArray, W: FloatArray) -> tuple[FloatArray, BoolArray]:
    """The analytic centre of the optimal face for each row of ``W`` (replicates × cells, rows summing to 1),
    and which rows have one: every cell weighted, Newton's method converged, and the masses' KKT gap within
    the estimate's stopping rule; the other rows' masses are zero, and every row's where the cells do not
    allow centres (:func:`applies`). Rows go in batches of :data:`_BATCH_FLOATS`."""
    C, M = L.shape
    out = np.zeros((W.shape[0], M), dtype=np.float64)
    found = np.zeros(W.shape[0], dtype=bool)
    if not applies(L):
        return out, found
    pairs, LT = _pairs(L), np.ascontiguousarray(L.T)
    candidates = np.flatnonzero((W > 0).all(axis=1))
    batch = max(1, _BATCH_FLOATS // (C * C + C * (C + 1) // 2 + 4 * M))
    for first in range(0, candidates.size, batch):
        rows = candidates[first : first + batch]
        lam, converged = _solve(L, LT, pairs, W[rows])
        mass, centred = _masses(L, LT, W[rows], lam)
        good = converged & centred
        out[rows[good]] = mass[good]
        found[rows[good]] = True
    return out, found

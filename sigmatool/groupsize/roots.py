"""Roots of many increasing functions at once: Chandrupatla's bracketing method, vectorised in numpy."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
MAX_STEPS = 200


def bracketed_roots(
    f: Callable[[FloatArray, IntArray], FloatArray],
    lo: FloatArray,
    hi: FloatArray,
    xrtol: float,
    f_lo: FloatArray | None = None,
    f_hi: FloatArray | None = None,
) -> FloatArray:
    """Per element i, the upper end of a bracket [a, b] of a root of ``f(·, i)`` with ``b − a ≤ xrtol · b``.

    ``f(x, rows)`` evaluates the functions of elements ``rows`` at ``x``; each must satisfy
    ``f(lo) < 0 ≤ f(hi)`` (``f_lo`` and ``f_hi``, when given, are those values). Each step takes the inverse quadratic interpolation through the last three
    points where it is safe and bisects otherwise (T. R. Chandrupatla, "A new hybrid quadratic/bisection
    algorithm for finding the zero of a nonlinear function without using derivatives", Advances in
    Engineering Software 28 (1997) 145–149). The returned end is always one where ``f ≥ 0``.

    >>> roots = bracketed_roots(lambda x, rows: x * x - np.array([2.0, 9.0])[rows], np.ones(2), np.full(2, 4.0), 1e-15)
    >>> [round(float(r), 12) for r in roots]
    [1.414213562373, 3.0]
    """
    every = np.arange(lo.size)
    a, b = lo.astype(np.float64).copy(), hi.astype(np.float64).copy()
    fa = f(a, every) if f_lo is None else f_lo.astype(np.float64).copy()
    fb = f(b, every) if f_hi is None else f_hi.astype(np.float64).copy()
    c, fc = a.copy(), fa.copy()
    t = np.full(a.shape, 0.5)
    up = b.copy()  # the end where f ≥ 0
    rows = every
    for _ in range(MAX_STEPS):
        if not rows.size:
            break
        xt = a[rows] + t[rows] * (b[rows] - a[rows])
        ft = f(xt, rows)
        same = np.sign(ft) == np.sign(fa[rows])
        c[rows] = np.where(same, a[rows], b[rows])
        fc[rows] = np.where(same, fa[rows], fb[rows])
        b[rows] = np.where(same, b[rows], a[rows])
        fb[rows] = np.where(same, fb[rows], fa[rows])
        a[rows], fa[rows] = xt, ft
        ar, br, cr, far, fbr, fcr = a[rows], b[rows], c[rows], fa[rows], fb[rows], fc[rows]
        up[rows] = np.where(far >= 0, ar, br)
        low = np.where(far >= 0, br, ar)
        width = np.abs(br - ar)
        done = (width <= xrtol * np.abs(up[rows])) | (ft == 0) | (up[rows] == low)
        tol = 0.5 * xrtol * np.abs(up[rows])
        with np.errstate(divide="ignore", invalid="ignore"):
            tlim = tol / np.abs(br - cr)
            xi = (ar - br) / (cr - br)
            phi = (far - fbr) / (fcr - fbr)
            quad = (phi * phi < xi) & ((1.0 - phi) ** 2 < 1.0 - xi)
            step = far / (fbr - far) * fcr / (fbr - fcr) + (cr - ar) / (br - ar) * far / (fcr - far) * fbr / (
                fcr - fbr
            )
        step = np.where(quad & np.isfinite(step), step, 0.5)
        tlim = np.where(np.isfinite(tlim), np.minimum(tlim, 0.5), 0.5)
        t[rows] = np.clip(step, tlim, 1.0 - tlim)
        rows = rows[~done]
    return np.asarray(up, dtype=np.float64)

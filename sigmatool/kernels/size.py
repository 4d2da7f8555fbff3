"""§4 of docs/theory.md: the group size a prompt needs, in closed form and for a silent-rate cap."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from sigmatool.kernels._common import (
    FloatArray,
    floats,
    is_probability,
    option_count,
)
from sigmatool.kernels.silent import silent_probability


def group_size_law(p: ArrayLike, target: ArrayLike) -> FloatArray:
    """Closed-form group size for a target fidelity φ* = 1 − ε: ``G* = 1 / (8 ε p (1 − p))``.

    Real-valued, not rounded (the exact integer answer is the smallest G with ``fidelity(p, G) ≥ φ*``).
    Valid for p in [0, 1] and target in (0, 1); NaN elsewhere; inf at p ∈ {0, 1}, where no finite G
    exists. Returns float64. docs/theory.md §4 (p = 0.5: 5, 10, 50 at φ* = 0.90, 0.95, 0.99).

    >>> round(float(group_size_law(0.5, 0.95)), 4)
    10.0
    """
    p_arr, t_arr = np.broadcast_arrays(floats(p), floats(target))
    valid = is_probability(p_arr) & (t_arr > 0.0) & (t_arr < 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = 1.0 / (8.0 * (1.0 - t_arr) * p_arr * (1.0 - p_arr))
    return np.asarray(np.where(valid, value, np.nan), dtype=np.float64)


def silent_group_size(p: ArrayLike, max_silent: ArrayLike, max_G: int, min_G: int = 2) -> FloatArray:
    """Smallest integer G in [min_G, max_G] with ``silent_probability(p, G) ≤ max_silent``.

    With q = max(p, 1 − p), ``q^G ≤ P_silent ≤ 2 q^G`` brackets the answer between
    ``log(s) / log(q)`` and ``log(s/2) / log(q)``; a bisection against the exact formula inside that
    bracket (one step or a few) makes it exact. Valid for p and max_silent in [0, 1] (broadcast); NaN
    elsewhere and where no G ≤ max_G works, e.g. p ∈ {0, 1} with max_silent < 1. Returns float64
    (integer-valued). Raises ValueError unless 1 ≤ min_G ≤ max_G are integers. docs/theory.md §4.

    >>> silent_group_size([0.5, 0.1, 0.0], 0.1, 1000).tolist()
    [5.0, 22.0, nan]
    """
    max_G = option_count(max_G, "max_G")
    min_G = option_count(min_G, "min_G")
    if min_G > max_G:
        raise ValueError(f"min_G must not exceed max_G, got min_G={min_G}, max_G={max_G}")
    p_arr, s_arr = np.broadcast_arrays(floats(p), floats(max_silent))
    valid = is_probability(p_arr) & is_probability(s_arr)
    out = np.full(p_arr.shape, np.nan)
    p_v, s_v = p_arr[valid], s_arr[valid]
    none = float(max_G + 1)  # "no G ≤ max_G works"
    with np.errstate(divide="ignore", invalid="ignore"):
        log_q = np.log1p(-np.minimum(p_v, 1.0 - p_v))
        log_s = np.log(s_v)
        lower = np.floor(log_s / log_q * (1.0 - 1e-9)) - 1.0
        upper = np.ceil((log_s - math.log(2.0)) / log_q * (1.0 + 1e-9)) + 1.0
    # Cases the logs cannot bracket: every G works (s ≥ 1), or none does (s = 0, or p ∈ {0, 1}).
    lower = np.where(s_v >= 1.0, min_G, np.where((s_v <= 0.0) | (log_q == 0.0), none, lower))
    upper = np.where(s_v >= 1.0, min_G, np.where((s_v <= 0.0) | (log_q == 0.0), none, upper))
    lo = np.clip(lower, min_G, none).astype(np.int64)
    hi = np.clip(upper, min_G, none).astype(np.int64)
    # The upper bracket is only trusted once the exact formula confirms it.
    confirmed = (hi <= max_G) & (silent_probability(p_v, np.minimum(hi, max_G)) <= s_v)
    hi = np.where(confirmed, hi, max_G + 1)
    lo = np.minimum(lo, hi)
    while (searching := lo < hi).any():
        mid = (lo + hi) // 2
        ok = silent_probability(p_v, mid) <= s_v
        hi = np.where(searching & ok, mid, hi)
        lo = np.where(searching & ~ok, mid + 1, lo)
    out[valid] = np.where(lo <= max_G, lo, np.nan)
    return out

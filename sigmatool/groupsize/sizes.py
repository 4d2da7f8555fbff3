"""The exact group size of each distinct pass rate: thresholds per G, bisection, the closed-form law."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sigmatool import kernels
from sigmatool.groupsize.roots import bracketed_roots
from sigmatool.options import GroupSizeOptions

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

# The law's ceiling forgives this relative excess over an integer (1/(8·(1 − 0.9)·0.25) = 5.000000000000001).
LAW_ALLOWANCE = 1e-9
# Beyond this, float64 no longer holds every integer: the law's value is reported as null.
LAW_MAX = 2.0**53
# Thresholds q*(G) are tabulated up to this G; the rare values that need more are found by bisection.
TABLE_MAX_G = 8192
# Each threshold's final bracket is at most this wide, relative: far inside the check below.
THRESHOLD_TOLERANCE = 1e-13
# Thresholds of every G up to DENSE_G and of every COARSE_STEP-th G above are found from a wide bracket;
# the others from a bracket this wide (relative) around an interpolated guess.
DENSE_G = 64
COARSE_STEP = 16
GUESS_WIDTH = 1e-3
# A value whose q lies within this relative distance of a threshold is checked by the kernel itself.
THRESHOLD_CHECK = 1e-9
# From this many values on, each is sized as given rather than once per distinct value.
ALL_VALUES = 1 << 16
# Kernel calls per threshold (the root finder's iterations, about): to weigh a table against bisection.
ROOT_STEPS = 12


def _reaches(p: FloatArray, G: IntArray, target: float, std: str) -> BoolArray:
    """φ(G, p) ≥ φ* as the kernel evaluates it, for 1-D p and G."""
    return np.asarray(kernels.fidelity(p, G, std=std) >= target, dtype=np.bool_)


def _settle(p: FloatArray, G: IntArray, target: float, std: str, min_G: int, max_G: int) -> IntArray:
    """Walk each G to the exact answer: φ(G) ≥ φ* and (G = min_G or φ(G − 1) < φ*); max_G + 1 if none."""
    G = G.copy()
    while True:
        inside = G <= max_G
        up = inside & ~_reaches(p, np.minimum(G, max_G), target, std)
        lower = np.maximum(G - 1, 1)
        down = ~up & (G > min_G) & (G - 1 <= max_G) & _reaches(p, np.minimum(lower, max_G), target, std)
        if not (up.any() or down.any()):
            return G
        G = G + up.astype(np.int64) - down.astype(np.int64)


def _gap(g: FloatArray, target: float, std: str) -> Callable[[FloatArray, IntArray], FloatArray]:
    """φ(g[rows], q) − φ*, for the root finder."""

    def gap(q: FloatArray, rows: IntArray) -> FloatArray:
        return np.asarray(kernels.fidelity(q, g[rows], std=std) - target, dtype=np.float64)

    return gap


def _wide_roots(g: FloatArray, target: float, std: str) -> FloatArray:
    """q*(g) for sizes with φ(g, ½) ≥ φ*, bracketed by the law's q (where the large-G expansion, which
    overstates φ, reaches φ*: the exact φ is still below) and ½."""
    # The law: 8 ε G q (1 − q) = 1; where it has no root below ½, start from a small q and halve below.
    disc = 1.0 - 0.5 / ((1.0 - target) * g)
    lo = np.where(disc > 0, (1.0 - np.sqrt(np.maximum(disc, 0.0))) / 2.0, 0.25)
    while (reached := kernels.fidelity(lo, g, std=std) >= target).any():
        lo = np.where(reached, lo / 2.0, lo)
    return bracketed_roots(_gap(g, target, std), lo, np.full(g.shape, 0.5), THRESHOLD_TOLERANCE)


def _near_roots(g: FloatArray, guess: FloatArray, target: float, std: str) -> FloatArray:
    """q*(g) from a close guess: bracketed within ``GUESS_WIDTH`` of it where the signs allow, else wide."""
    lo, hi = guess * (1.0 - GUESS_WIDTH), np.minimum(guess * (1.0 + GUESS_WIDTH), 0.5)
    gap, every = _gap(g, target, std), np.arange(g.size)
    f_lo, f_hi = gap(lo, every), gap(hi, every)
    ok = (f_lo < 0.0) & (f_hi >= 0.0)
    roots = np.empty(g.shape)
    roots[ok] = bracketed_roots(
        _gap(g[ok], target, std), lo[ok], hi[ok], THRESHOLD_TOLERANCE, f_lo[ok], f_hi[ok]
    )
    if not ok.all():
        roots[~ok] = _wide_roots(g[~ok], target, std)
    return roots


def _thresholds(G: IntArray, target: float, std: str) -> FloatArray:
    """q*(G) for consecutive G: the smallest q in (0, ½] with φ(G, q) ≥ φ*, to 1e-13 relative; inf where
    φ(G, ½) < φ*.

    φ(G, ·) rises on (0, ½], so q*(G) is the root of φ(G, q) − φ*; a vectorised bracketing solver finds
    them all at once and returns the end of each final bracket where φ ≥ φ*. Every G up to
    ``DENSE_G`` and every ``COARSE_STEP``-th above starts from a wide bracket; G·q*(G) varies slowly, so
    its interpolation between those gives the others a bracket a few steps wide.
    """
    out = np.full(G.shape, np.inf)
    # φ(·, ½) rises with G: the sizes that reach φ* at all are those from the first that does.
    first = int(_bisect(np.array([0.5]), int(G[0]), int(G[-1]), target, std)[0])
    top = G >= first
    g = G[top].astype(np.float64)
    if not g.size:
        return out
    coarse = (g <= DENSE_G) | (np.arange(g.size) % COARSE_STEP == 0)
    coarse[-1] = True
    roots = np.empty(g.shape)
    roots[coarse] = _wide_roots(g[coarse], target, std)
    fine = ~coarse
    if fine.any():
        guess = np.interp(g[fine], g[coarse], g[coarse] * roots[coarse]) / g[fine]
        roots[fine] = _near_roots(g[fine], guess, target, std)
    out[top] = roots
    return out


@functools.lru_cache(maxsize=8)
def _threshold_table(target: float, std: str, min_G: int, top: int) -> FloatArray:
    """The running minimum of q*(G) for G = min_G … top (kept: streamed batches ask for the same table)."""
    table = np.minimum.accumulate(_thresholds(np.arange(min_G, top + 1, dtype=np.int64), target, std))
    table.flags.writeable = False
    return table


def _grpo_group_sizes(p: FloatArray, target: float, std: str, min_G: int, max_G: int) -> IntArray:
    """Smallest G in [min_G, max_G] with φ(G, p) ≥ φ* for distinct p in (0, 1); max_G + 1 where none.

    φ rises with G, so each value's answer can be found by bisection over G: exact by construction, and the
    cheaper way for a few distinct values (k-of-n data). For many values, φ also rises with
    q = min(p, 1 − p) at each G, so a threshold per G, q*(G), decides every value at once: the answer is
    the smallest G whose threshold lies at or below q (a ``searchsorted`` over the thresholds' running
    minimum). Thresholds are tabulated only up to the answer of the hardest value (at most
    ``TABLE_MAX_G``; beyond, bisection). The kernel itself then checks each value whose q lies within
    ``THRESHOLD_CHECK`` of the thresholds around it, so every answer is the smallest G that the kernel says
    reaches φ*.
    """
    q = np.minimum(p, 1.0 - p)
    hardest = p[np.argmin(q)]
    top = min(int(_bisect(np.array([hardest]), min_G, max_G, target, std)[0]), max_G, TABLE_MAX_G)
    span = max(top - min_G + 1, 1)
    if p.size * math.log2(max_G - min_G + 2) <= span * ROOT_STEPS:
        return _bisect(p, min_G, max_G, target, std)
    sizes = np.arange(min_G, top + 1, dtype=np.int64)
    reach = _threshold_table(target, std, min_G, top)
    # reach is non-increasing; the answer is the first G with reach ≤ q.
    index = sizes.size - np.searchsorted(reach[::-1], q, side="right")
    answer = (min_G + index).astype(np.int64)
    below = np.where(index > 0, reach[np.maximum(index - 1, 0)], np.inf)
    at = np.where(index < sizes.size, reach[np.minimum(index, sizes.size - 1)], 0.0)
    near = (np.abs(q - at) <= THRESHOLD_CHECK * q) | (np.abs(q - below) <= THRESHOLD_CHECK * q)
    if near.any():
        answer[near] = _settle(p[near], answer[near], target, std, min_G, max_G)
    beyond = answer > top
    if beyond.any() and top < max_G:
        answer[beyond] = _bisect(p[beyond], top + 1, max_G, target, std)
    return answer


def _bisect(p: FloatArray, lo_G: int, hi_G: int, target: float, std: str) -> IntArray:
    """Smallest G in [lo_G, hi_G] with φ(G, p) ≥ φ* (φ rises with G); hi_G + 1 where none."""
    lo = np.full(p.shape, lo_G, dtype=np.int64)
    hi = np.full(p.shape, hi_G + 1, dtype=np.int64)
    while (active := lo < hi).any():
        mid = (lo + hi) // 2
        ok = active & (mid <= hi_G) & _reaches(p, np.minimum(mid, hi_G), target, std)
        hi = np.where(ok, mid, hi)
        lo = np.where(active & ~ok, mid + 1, lo)
    return lo


def _drgrpo_group_size(target: float, min_G: int, max_G: int) -> int:
    """Smallest G in [min_G, max_G] with 1 − 1/G ≥ φ*, by the kernel; max_G + 1 if none."""
    G = max(min_G, min(max_G + 1, math.ceil(1.0 / (1.0 - target))))
    while G <= max_G and float(kernels.drgrpo_fidelity(G)) < target:
        G += 1
    while G > min_G and float(kernels.drgrpo_fidelity(G - 1)) >= target:
        G -= 1
    return G


def group_sizes(
    p: ArrayLike,
    target: float,
    *,
    objective: str = "grpo",
    std: str = "population",
    min_G: int = 2,
    max_G: int = 4096,
    max_silent: float | None = None,
) -> FloatArray:
    """Smallest integer G in [min_G, max_G] with fidelity ``φ(G, p) ≥ target`` (and ``P_silent ≤ max_silent``).

    NaN where no such G exists: p ∈ {0, 1}, an answer above max_G, or p outside [0, 1]. Each distinct p is
    solved once (below 65,536 values; more are sized one by one, by the same rule). Returns float64
    (integer-valued). docs/theory.md §4: p = 0.5 needs 7, 11, 51 at φ* = 0.90, 0.95, 0.99.

    >>> group_sizes([0.5, 0.3, 0.1, 0.05, 0.0], 0.9).tolist()
    [7.0, 9.0, 22.0, 42.0, nan]
    """
    GroupSizeOptions(target, objective, std, min_G, max_G, max_silent)
    p_arr = np.asarray(p, dtype=np.float64)
    if p_arr.size >= ALL_VALUES:
        # Many values take the threshold table, one lookup each: sorting them out first would cost more.
        values, inverse = p_arr.reshape(-1), None
    else:
        values, inverse = np.unique(p_arr.reshape(-1), return_inverse=True)
    interior = (values > 0.0) & (values < 1.0)
    sizes = np.full(values.shape, max_G + 1, dtype=np.int64)
    if objective == "drgrpo":
        sizes[interior] = _drgrpo_group_size(target, min_G, max_G)
    elif interior.any():
        sizes[interior] = _grpo_group_sizes(values[interior], target, std, min_G, max_G)
    if max_silent is not None and interior.any():
        silent = kernels.silent_group_size(values[interior], max_silent, max_G, min_G)
        sizes[interior] = np.maximum(sizes[interior], np.nan_to_num(silent, nan=max_G + 1).astype(np.int64))
    out = np.where(interior & (sizes <= max_G), sizes.astype(np.float64), np.nan)
    return np.asarray((out if inverse is None else out[inverse]).reshape(p_arr.shape), dtype=np.float64)


def law_group_sizes(p: ArrayLike, target: float) -> FloatArray:
    """The closed-form law rounded up: ``⌈1/(8 ε p (1 − p))⌉``, ε = 1 − target; NaN at p ∈ {0, 1}.

    >>> law_group_sizes([0.5, 0.3, 0.05], 0.99).tolist()
    [50.0, 60.0, 264.0]
    """
    law = kernels.group_size_law(p, target)
    with np.errstate(invalid="ignore"):
        rounded = np.ceil(law * (1.0 - LAW_ALLOWANCE))
    return np.asarray(np.where(np.isfinite(law) & (law < LAW_MAX), rounded, np.nan), dtype=np.float64)


def fidelity_at(p: ArrayLike, G: ArrayLike, objective: str = "grpo", std: str = "population") -> FloatArray:
    """The objective's fidelity at G: ``kernels.fidelity`` (GRPO) or ``kernels.drgrpo_fidelity`` (Dr. GRPO)."""
    p_arr, G_arr = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(G, dtype=np.float64))
    out = np.full(p_arr.shape, np.nan)
    ok = np.isfinite(G_arr) & (p_arr > 0.0) & (p_arr < 1.0)
    if objective == "drgrpo":
        out[ok] = kernels.drgrpo_fidelity(G_arr[ok])
    elif ok.any():
        out[ok] = kernels.fidelity(p_arr[ok], G_arr[ok], std=std)
    return out

"""The greedy allocation: rollouts go to hull segments in order of value per rollout, under a budget.

This is the LP relaxation of a multiple-choice knapsack (each prompt picks one size; Sinha & Zoltners
1979): over each prompt's upper concave hull, taking segments in falling slope until the budget is spent,
with the last one taken fractionally, is the LP optimum. The integer plan takes the same segments whole, gives
the fractional segment to as many prompts of its value as fit, then fills what is left with any next segment
that still fits. Hence the certificate ``gap`` = LP bound − plan value ≥ OPT − plan value, and ``gap`` is at
most one prompt's value gain on that fractional segment. ``gap = 0`` proves the plan optimal.

At scale the threshold slope (the Lagrange multiplier of the budget) is found without sorting every
segment: positive float64 slopes order like their bit patterns, so one weighted histogram of the top 21
bits finds the bucket where the budget runs out, and only that bucket's segments are sorted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from sigmatool.plan.hull import Index, segment_costs, upper_hull

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class Values(Protocol):
    """The rows being planned: how many, and a block of them (the plan's curves read the rest)."""

    @property
    def size(self) -> int: ...

    def __getitem__(self, rows: slice) -> Any: ...


Curve = Callable[[Any], FloatArray]
OnBlock = Callable[[slice, Any, FloatArray], None]

BLOCK = 1 << 16  # rows per block: the curves of one block stay in cache
_SHIFT = 43  # keep sign, exponent and 9 mantissa bits of a slope's bit pattern
_BUCKETS = 1 << 20


Small = NDArray[np.int16]  # size indices and segment counts: at most MAX_SIZES


@dataclass
class Hulls:
    """Every row's hull segments: ``end`` and ``slope`` (rows × sizes), ``count`` and ``base`` per row."""

    end: Small
    slope: FloatArray
    count: Small
    base: Small
    hist: FloatArray  # rollouts (prompts × segment cost) per slope bucket


@dataclass
class Assignment:
    """Per row, ``lo``: the size index of its prompts (−1 = left out); for the few split rows, the first
    ``split_prompts`` prompts in id order get size index ``split_size`` instead. ``gap``: LP bound − plan value."""

    lo: Small
    split_rows: IntArray
    split_size: IntArray
    split_prompts: IntArray
    gap: float
    binding: bool

    def split(self, row: int, size: int, prompts: int) -> None:
        """Give ``prompts`` prompts of ``row`` (the first in id order) the size index ``size``."""
        self.split_rows = np.append(self.split_rows, row)
        self.split_size = np.append(self.split_size, size)
        self.split_prompts = np.append(self.split_prompts, prompts)

    def dense(self) -> tuple[IntArray, IntArray, IntArray]:
        """(lo, hi, n_hi) as full int64 arrays: hi = −1 and n_hi = 0 where the row is not split."""
        hi = np.full(self.lo.size, -1, dtype=np.int64)
        n_hi = np.zeros(self.lo.size, dtype=np.int64)
        hi[self.split_rows] = self.split_size
        n_hi[self.split_rows] = self.split_prompts
        return self.lo.astype(np.int64), hi, n_hi


def build_hulls(
    p: Values, counts: IntArray, base: Index, sizes: IntArray, curve: Curve, on_block: OnBlock | None
) -> Hulls:
    """Evaluate ``curve`` block by block, keep only each row's hull segments, and histogram their slopes."""
    rows, width = p.size, sizes.size
    end = np.full((rows, width), -1, dtype=np.int16)
    slope = np.zeros((rows, width), dtype=np.float64)
    count = np.zeros(rows, dtype=np.int16)
    hist = np.zeros(_BUCKETS, dtype=np.float64)
    one_base = int(base[0]) if rows and bool(np.all(base == base[0])) else None
    for start in range(0, rows, BLOCK):
        block = slice(start, min(start + BLOCK, rows))
        values = curve(p[block])
        if on_block is not None:
            on_block(block, p[block], values)
        segments = upper_hull(values, sizes, base[block] if one_base is None else one_base)
        end[block], slope[block], count[block] = segments.end, segments.slope, segments.count
        hist += _histogram(segments.end, segments.slope, base[block], counts[block], sizes)
    return Hulls(end=end, slope=slope, count=count, base=base.astype(np.int16), hist=hist)


def _blocks(rows: int) -> range:
    return range(0, rows, BLOCK)


def _histogram(end: Small, slope: FloatArray, base: Index, counts: IntArray, sizes: IntArray) -> FloatArray:
    """Rollouts (prompts × segment cost) per slope bucket; float64 sums of integers stay exact below 2⁵³."""
    valid = end >= 0
    keys = slope.view(np.int64)[valid] >> _SHIFT
    spend = counts[:, None] * segment_costs(end, base, sizes)
    return np.asarray(
        np.bincount(keys, weights=spend[valid].astype(np.float64), minlength=_BUCKETS), dtype=np.float64
    )


def freeze(h: Hulls, row: int, counts: IntArray, sizes: IntArray) -> None:
    """Take every segment of ``row`` out of the hulls (and out of the slope histogram)."""
    one = slice(row, row + 1)
    h.hist -= _histogram(h.end[one], h.slope[one], h.base[one], counts[one], sizes)
    h.count[row], h.end[row], h.slope[row] = 0, -1, 0.0


def _bucket_rows(h: Hulls, counts: IntArray, sizes: IntArray, bucket: int) -> tuple[Small, IntArray]:
    """Segments taken whole (their bucket lies above ``bucket``) per row, and the segments in ``bucket``."""
    full = np.zeros(counts.size, dtype=np.int16)
    found: list[IntArray] = []
    for start in _blocks(counts.size):
        block = slice(start, start + BLOCK)
        keys = np.where(h.end[block] >= 0, h.slope[block].view(np.int64) >> _SHIFT, -1)
        full[block] = (keys > bucket).sum(axis=1)
        r, t = np.nonzero(keys == bucket)
        found.append(np.stack((r + start, t)))
    pairs = np.concatenate(found, axis=1) if found else np.zeros((2, 0), dtype=np.int64)
    return full, pairs


def greedy(h: Hulls, counts: IntArray, sizes: IntArray, budget: int) -> Assignment:
    """Spend ``budget`` rollouts (beyond each row's base) over the hulls, as the module docstring says."""
    rows = counts.size
    hist = h.hist
    total = float(hist.sum())
    if total <= budget:
        return _assignment(h, h.count.copy(), [], 0.0, binding=False)
    from_top = np.cumsum(hist[::-1])
    i = int(np.searchsorted(from_top, budget, side="right"))
    bucket = _BUCKETS - 1 - i
    left = budget - (int(from_top[i - 1]) if i > 0 else 0)
    full, (r, t) = _bucket_rows(h, counts, sizes, bucket)
    cost = segment_costs(h.end[r], h.base[r], sizes)[np.arange(r.size), t]
    slope = h.slope[r, t]
    order = np.lexsort((t, r, -slope))
    r, t, cost, slope = r[order], t[order], cost[order], slope[order]
    spend = np.cumsum(counts[r] * cost)
    whole = int(np.searchsorted(spend, left, side="right"))
    np.add.at(full, r[:whole], 1)
    left -= int(spend[whole - 1]) if whole else 0
    if whole == r.size:  # the bucket's segments all fit after all: nothing is fractional
        return _assignment(h, full, [], 0.0, binding=True)
    # The LP takes the rest of the budget from the next segment, fractionally.
    lp_rest = left * float(slope[whole])
    moved = min(int(counts[r[whole]]) - 1, left // int(cost[whole]))
    splits = [(int(r[whole]), moved)] if moved > 0 else []
    left -= moved * int(cost[whole])
    gained = moved * int(cost[whole]) * float(slope[whole])
    frozen = np.zeros(rows, dtype=np.bool_)
    frozen[r[whole]] = True
    gained += _fill(h, counts, sizes, full, frozen, left, splits)
    return _assignment(h, full, splits, max(0.0, lp_rest - gained), binding=True)


def _fill(
    h: Hulls,
    counts: IntArray,
    sizes: IntArray,
    full: Small,
    frozen: NDArray[np.bool_],
    left: int,
    splits: list[tuple[int, int]],
) -> float:
    """Spend the remainder on any row's next segment that still fits, best slope first; returns the value."""
    if left <= 0:
        return 0.0
    pool_rows: list[IntArray] = []
    for start in _blocks(counts.size):
        block = slice(start, start + BLOCK)
        nxt = _next_segment(h, sizes, full, np.arange(start, min(start + BLOCK, counts.size)))
        fits = (nxt[1] > 0) & (nxt[1] <= left) & ~frozen[block]
        pool_rows.append(np.flatnonzero(fits) + start)
    pool = np.concatenate(pool_rows)
    gained = 0.0
    while pool.size:
        slope, cost = _next_segment(h, sizes, full, pool)
        fits = (cost > 0) & (cost <= left)
        if not fits.any():
            break
        pool, slope, cost = pool[fits], slope[fits], cost[fits]
        i = int(np.argmax(slope))
        row, c = int(pool[i]), int(cost[i])
        moved = min(int(counts[row]), left // c)
        left -= moved * c
        gained += moved * c * float(slope[i])
        if moved == counts[row]:
            full[row] += 1
        else:
            splits.append((row, moved))
            pool = np.delete(pool, i)
    return gained


def _next_segment(h: Hulls, sizes: IntArray, full: Small, rows: IntArray) -> tuple[FloatArray, IntArray]:
    """(slope, cost) of each row's first segment not taken; cost 0 when there is none."""
    xs = np.concatenate(([0], sizes)).astype(np.int64)
    taken = full[rows].astype(np.int64)
    has = taken < h.count[rows]
    t = np.minimum(taken, h.end.shape[1] - 1)
    start = np.where(taken > 0, h.end[rows, np.maximum(taken - 1, 0)], h.base[rows]).astype(np.int64)
    cost = xs[h.end[rows, t].astype(np.int64) + 1] - xs[start + 1]
    return np.where(has, h.slope[rows, t], 0.0), np.where(has, cost, 0)


def _assignment(
    h: Hulls, full: Index, splits: list[tuple[int, int]], gap: float, *, binding: bool
) -> Assignment:
    lo = np.empty(full.size, dtype=np.int16)
    for start in _blocks(full.size):
        block = slice(start, start + BLOCK)
        f = full[block].astype(np.int64)
        last = np.take_along_axis(h.end[block], np.maximum(f - 1, 0)[:, None], axis=1)[:, 0]
        lo[block] = np.where(f > 0, last, h.base[block])
    rows = np.array([r for r, _ in splits], dtype=np.int64)
    return Assignment(
        lo=lo,
        split_rows=rows,
        split_size=h.end[rows, full[rows]].astype(np.int64),
        split_prompts=np.array([m for _, m in splits], dtype=np.int64),
        gap=gap,
        binding=binding,
    )

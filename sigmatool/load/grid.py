"""Pass rates on a 1/n grid: a rate column that is really k right of n samples, read row by row.

Most difficulty files store k/n as a float. When the values lie on the 1/n grid for one n ≤ 128, the column
says how many samples stand behind each rate, and reading it as counts lets the unbiased estimator, the
priors and the bounds work on it (docs/prior.md). The check is exact up to the rounding of the number the
file holds: ``k / n`` in double precision (as Python and polars compute it), the same rounded to single
precision for a float32 column, or a couple of units in the last place away (``k * (1 / n)``, a mean of
n grades). A grid of 128 has a spacing of 1/128, so no rounding can put a value on the wrong grid.

The grid is the column's (how many samples the file logged per prompt); which rows lie on it is each row's
own. A row on the grid is read as k of n; a row off it is a bare rate, for that row alone (:func:`column_grid`):

1. A grid n is *filled* when the distinct values on it fill it (:func:`fills`: at least
   :data:`GRID_VALUES`, and half of its n + 1 points). One value (a million rows of 0.25) or two lie on
   many grids and say nothing of n.
2. The grid is the coarsest filled n, moved to a finer filled m only where the rows ask for it: the values
   on m and off the grid so far fill half of the points m adds (those not on the grid so far), are held by
   :data:`EVIDENCE` prompts or more, and by more prompts than the grid so far holds off m. One row of
   0.01 among multiples of 1/50 is one row off the grid of 50, not a grid of 100; a file of 100 samples
   has thousands of odd k.
3. A grid is taken only where its rows are most of the column: the prompts off it with 0 < p̂ < 1 must be
   fewer than those on it (a column of bare rates with a few round values is bare rates). The histogram
   reads it as counts only where at least :data:`EVIDENCE` prompts on it lie strictly between 0 and 1.

So a row off the grid, or a few, leave the grid where it is and are read as what they are: no other row's
reading moves with them, and a mean over N prompts moves by at most 1/N. Only as many rows as count as
evidence move the grid.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

# The largest n looked for: difficulty files log from 4 to 128 answers per prompt.
MAX_GRID = 128
# A --samples N that the grid contradicts is an error only when this many prompts have 0 < p < 1: with
# fewer, a coarser grid can be chance (8 samples of 5 prompts may all give an even k). A grid is read from
# the rates only where this many prompts on it have 0 < p < 1, and a finer grid only where this many need it.
EVIDENCE = 30
ULPS = 2
# A grid is read from the rates only where they fill it: at least this many distinct values, and half of the
# grid's n + 1 points. One value (a million rows of 0.25) or two lie on many grids and say nothing of n.
GRID_VALUES = 3

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def fills(distinct: int, n: int) -> bool:
    """Whether ``distinct`` values on the 1/n grid are evidence of it (:data:`GRID_VALUES`, half its points).

    >>> fills(1, 4), fills(3, 4), fills(20, 64), fills(40, 64)
    (False, True, False, True)
    """
    return distinct >= GRID_VALUES and 2 * distinct >= n + 1


def on_grid_mask(p: FloatArray, n: int, single: bool = False) -> BoolArray:
    """Per value of ``p``: whether it is k/n for a whole k in 0…n, up to the rounding of its type.

    >>> on_grid_mask(np.array([0.0, 0.125, 0.3, 1.0, np.nan]), 8).tolist()
    [True, True, False, True, False]
    """
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        exact = np.round(p * n) / n
        close = np.abs(p - exact) <= ULPS * np.spacing(exact)
        if single:
            close |= p == exact.astype(np.float32).astype(np.float64)
        inside = (p >= 0) & (p <= 1)
    return np.asarray(close & inside & np.isfinite(p), dtype=np.bool_)


def on_grid(p: FloatArray, n: int, single: bool = False) -> bool:
    """Whether every value of ``p`` is k/n for a whole k, up to the rounding of its type.

    >>> on_grid(np.array([0.0, 0.125, 0.375, 1.0]), 8)
    True
    >>> on_grid(np.array([3 * (1 / 10), 0.7]), 10)
    True
    >>> on_grid(np.array([0.125, 0.3]), 8)
    False
    """
    return bool(on_grid_mask(p, n, single).all())


def rate_grid(p: FloatArray, single: bool = False, most: int = MAX_GRID) -> int | None:
    """The smallest n in 2…``most`` such that every rate is a multiple of 1/n; None if there is none, or if
    every rate is 0 or 1 (any n would do). (Whether a ``--samples N`` contradicts the rates; the reading of
    a column is :func:`column_grid`'s.)

    ``single``: the rates were stored in single precision (float32).

    >>> rate_grid(np.array([k / 50 for k in (0, 3, 17, 50)]))
    50
    >>> rate_grid(np.array([0.0, 0.5, 1.0]))
    2
    >>> rate_grid(np.array([1 / 9, 1 / 64])) is None
    True
    >>> rate_grid(np.array([0.0, 1.0])) is None
    True
    """
    values = np.unique(np.asarray(p, dtype=np.float64))
    values = values[np.isfinite(values)]
    if values.size == 0 or values.size > most + 1 or bool(((values == 0) | (values == 1)).all()):
        return None
    for n in range(2, most + 1):
        if on_grid(values, n, single):
            return n
    return None


def column_grid(
    p: FloatArray, prompts: FloatArray | None = None, single: bool = False, most: int = MAX_GRID
) -> int | None:
    """The grid of a column of rates ``p`` (distinct values, ``prompts`` behind each, 1 each by default) by
    the rule in the module's docstring; None where the rows ask for none.

    Every multiple of 1/50, 40 prompts each, with one row of 0.123 and one of 0.01: a grid of 50, those two
    rows off it:

    >>> fifty = np.array([k / 50 for k in range(51)])
    >>> column_grid(np.append(fifty, [0.123, 0.01]), np.append(np.full(51, 40.0), [1.0, 1.0]))
    50

    Samples of 100 with odd k all through are a grid of 100; a few odd values are not:

    >>> column_grid(np.array([k / 100 for k in range(101)]), np.full(101, 40.0))
    100
    >>> column_grid(np.append(fifty, [0.01, 0.03, 0.07]), np.append(np.full(51, 40.0), [5.0, 5.0, 5.0]))
    50

    Four samples fill the grid of 4 (the two points it adds to the grid of 2 are both there); mostly bare
    rates, a few of them round, are bare rates:

    >>> column_grid(np.array([0.0, 0.25, 0.5, 0.75, 1.0]), np.full(5, 40.0))
    4
    >>> rng = np.random.default_rng(0)
    >>> column_grid(np.append(rng.random(300), [0.0, 0.5, 0.25, 0.75, 1.0])) is None
    True
    """
    p = np.asarray(p, dtype=np.float64)
    w = np.ones(p.size) if prompts is None else np.asarray(prompts, dtype=np.float64)
    keep = np.isfinite(p) & (p >= 0) & (p <= 1)
    p, w = p[keep], w[keep]
    interior = (p > 0) & (p < 1)
    if not interior.any():
        return None  # every rate 0 or 1: any n would do
    best: int | None = None
    held = np.zeros(p.size, dtype=np.bool_)
    for n in range(2, most + 1):
        on = on_grid_mask(p, n, single)
        if not fills(int(on.sum()), n):
            continue
        if best is None:
            best, held = n, on
            continue
        new, lost = on & ~held, held & ~on
        added = n - math.gcd(n, best)  # the points of the 1/n grid off the 1/best one
        if 2 * int(new.sum()) >= added and w[new].sum() >= EVIDENCE and w[new].sum() > w[lost].sum():
            best, held = n, on
    if best is None or w[~held & interior].sum() >= w[held & interior].sum():
        return None
    return best

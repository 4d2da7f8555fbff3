"""Pass rates on a 1/n grid: a rate column that is really k right of n samples.

Most difficulty files store k/n as a float. When every value is a multiple of 1/n for one n ≤ 128, the
column says how many samples stand behind each rate, and reading it as counts lets the unbiased estimator,
the priors and the bounds work on it (docs/prior.md). The check is exact up to the rounding of the number
the file holds: ``k / n`` in double precision (as Python and polars compute it), the same rounded to single
precision for a float32 column, or a couple of units in the last place away (``k * (1 / n)``, a mean of
n grades). A grid of 128 has a spacing of 1/128, so no rounding can put a value on the wrong grid.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

# The largest n looked for: difficulty files log from 4 to 128 answers per prompt.
MAX_GRID = 128
# A --samples N that the grid contradicts is an error only when this many prompts have 0 < p < 1: with
# fewer, a coarser grid can be chance (8 samples of 5 prompts may all give an even k).
EVIDENCE = 30
ULPS = 2
# A grid is read from the rates only where they fill it: at least this many distinct values, and half of the
# grid's n + 1 points. One value (a million rows of 0.25) or two lie on many grids and say nothing of n.
GRID_VALUES = 3


def fills(distinct: int, n: int) -> bool:
    """Whether ``distinct`` values on the 1/n grid are evidence of it (:data:`GRID_VALUES`, half its points).

    >>> fills(1, 4), fills(3, 4), fills(20, 64), fills(40, 64)
    (False, True, False, True)
    """
    return distinct >= GRID_VALUES and 2 * distinct >= n + 1


def on_grid(p: NDArray[np.float64], n: int, single: bool = False) -> bool:
    """Whether every value of ``p`` is k/n for a whole k, up to the rounding of its type.

    >>> on_grid(np.array([0.0, 0.125, 0.375, 1.0]), 8)
    True
    >>> on_grid(np.array([3 * (1 / 10), 0.7]), 10)
    True
    >>> on_grid(np.array([0.125, 0.3]), 8)
    False
    """
    exact = np.round(p * n) / n
    close = np.abs(p - exact) <= ULPS * np.spacing(exact)
    if single:
        close |= p == exact.astype(np.float32).astype(np.float64)
    return bool(close.all())


def rate_grid(p: NDArray[np.float64], single: bool = False, most: int = MAX_GRID) -> int | None:
    """The smallest n in 2…``most`` such that every rate is a multiple of 1/n; None if there is none, or if
    every rate is 0 or 1 (any n would do).

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

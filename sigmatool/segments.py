"""Cuts shared by every analysis: equal-width bins of p with exact edges, and --by groups.

A bin's edges are the floats nearest to b/N and (b+1)/N, and a pass rate belongs to the bin whose edges
bracket it as floats: 0.29 with 100 bins lies in [0.29, 0.3), although 0.29 × 100 rounds to 28.999….
Every command uses these functions, so tables from different commands join on ``p_lo`` and ``p_hi``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def bin_index(p: ArrayLike, bins: int) -> IntArray:
    """Bin b of each p: the largest b < bins with fl(b / bins) ≤ p (the last bin closed at 1).

    >>> bin_index([0.0, 0.29, 0.3, 0.999, 1.0], 100).tolist()
    [0, 29, 30, 99, 99]
    """
    p_arr = np.asarray(p, dtype=np.float64)
    # p × bins is within one rounding of the exact product, so the first guess is off by at most one.
    guess = np.clip(np.floor(p_arr * bins), 0, bins - 1).astype(np.int64)
    up = (guess < bins - 1) & (p_arr >= (guess + 1) / bins)
    down = (guess > 0) & (p_arr < guess / bins)
    return np.asarray(guess + up - down, dtype=np.int64)


def bin_edges(index: ArrayLike, bins: int) -> tuple[FloatArray, FloatArray]:
    """(p_lo, p_hi) of each bin index: the floats nearest to b / bins and (b + 1) / bins."""
    b = np.asarray(index, dtype=np.int64)
    return np.asarray(b / bins, dtype=np.float64), np.asarray((b + 1) / bins, dtype=np.float64)


def group_index(frame: pl.DataFrame, by: Sequence[str]) -> tuple[IntArray, pl.DataFrame]:
    """Each row's --by group (0 without --by), and the groups' labels in order of appearance (one row each).

    Nulls form a group of their own, as in a polars group-by.
    """
    if not by:
        return np.zeros(frame.height, dtype=np.int64), pl.DataFrame()
    labels = frame.select(by).unique(maintain_order=True)
    index = labels.with_row_index("__group")
    ids = frame.select(by).join(index, on=list(by), how="left", nulls_equal=True, maintain_order="left")
    return ids["__group"].cast(pl.Int64).to_numpy(), labels

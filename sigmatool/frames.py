"""numpy results as polars columns, the short ones (a summary's) by way of Python lists.

polars builds a column from a numpy array through ``numpy.ma``, whose import alone (about 8 ms) costs more
than the whole analysis of a small file; a summary of a few rows is cheaper as a list. The values are the
same either way: float64, int64 and bool convert exactly, and NaN stays NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from sigmatool.options import COLUMN

# Columns up to this length go through a list; longer ones through numpy.
SHORT = 4096
_DTYPES = {"f": pl.Float64, "i": pl.Int64, "u": pl.UInt64, "b": pl.Boolean}


def series(name: str, values: ArrayLike | pl.Series) -> pl.Series:
    """``values`` (a numpy array, a list or a polars column) as a polars column named ``name``."""
    if isinstance(values, pl.Series):
        return values.alias(name)
    if isinstance(values, list):
        return pl.Series(name, values)
    array = np.asarray(values)
    dtype = _DTYPES.get(array.dtype.kind)
    if dtype is None or array.size > SHORT or array.ndim != 1:
        return pl.Series(name, array)
    return pl.Series(name, array.tolist(), dtype=dtype)


def frame(columns: Mapping[str, ArrayLike | pl.Series]) -> pl.DataFrame:
    """A frame of the named columns, each as :func:`series` makes it."""
    return pl.DataFrame([series(name, values) for name, values in columns.items()])


def last(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    """``frame`` with its column ``name`` moved to the end (where it is one)."""
    return frame.select(pl.exclude(name), name) if name in frame.columns else frame


def sort_by(frame: pl.DataFrame, keys: Sequence[str], **kwargs: Any) -> pl.DataFrame:
    """``frame.sort(keys)``, but the pass-rate columns (the ``column`` key, with several ``--col``) stay in
    the order they come in, the order the user gave them; the other keys ascend."""
    if COLUMN not in keys or COLUMN not in frame.columns:
        return frame.sort(list(keys), **kwargs)
    given = frame[COLUMN].unique(maintain_order=True).to_list()
    rank = "__given"
    while rank in frame.columns:
        rank += "_"
    ranked = frame.with_columns(
        pl.col(COLUMN).replace_strict(given, list(range(len(given))), return_dtype=pl.Int64).alias(rank)
    )
    return ranked.sort([rank if key == COLUMN else key for key in keys], **kwargs).drop(rank)

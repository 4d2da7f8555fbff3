"""Plug-in values of streamed rows: each kernel as an elementwise polars expression on the column ``p``.

When the rows stream (many distinct pass rates, :mod:`sigmatool.load.rows`), every row is its own value:
the kernel runs on each batch of rows as polars reads it, in the streaming engine's threads, and the
analyses add the results up per cell. The numbers are the kernels', row by row.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.estimators.value import plugin_values

FloatArray = NDArray[np.float64]


def elementwise(function: Callable[[FloatArray], NDArray[np.generic]], dtype: pl.DataType) -> pl.Expr:
    """``function`` of the column ``p``, batch by batch (it must treat each element on its own)."""

    def apply(series: pl.Series) -> pl.Series:
        return pl.Series(series.name, function(series.cast(pl.Float64).to_numpy()), dtype=dtype)

    return pl.col("p").map_batches(apply, return_dtype=dtype, is_elementwise=True)


def row_value(quantity: str, G: float | None = None, std: str = "population") -> pl.Expr:
    """The plug-in value of each row's p (the names of :func:`~sigmatool.estimators.value.plugin_values`)."""
    return elementwise(lambda p: plugin_values(p, quantity, G, std), pl.Float64())

"""Per-prompt rows joined with the table of their distinct values, and the check that every row found one.

A per-prompt export (``silent``, ``groupsize`` and ``plan`` with ``--per-prompt``) evaluates each distinct
value once and joins the rows with that table. The join is on what the user gave: the integers (k, n), or
the input's own pass rate read by the same expression that built the histogram; never on a pass rate
computed again. ``k / n`` is not one float: polars divides a column by a constant as a product with its
reciprocal, so 35 / 50 is 0.7 in a histogram (n a column) and 0.7000000000000001 in the rows (n the
constant of ``--samples 50``), and a join on it loses the prompt.

A row that must find a value and does not is a bug in sigmatool, never a fault of the data: it raises
:class:`UnmatchedRowsError` (not a :class:`~sigmatool.errors.SigmaError`, so it shows its traceback) instead of
leaving a blank cell. Both ways of joining stream, batch by batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

FOUND = "__found"  # true on every row of a table, so null on a row that found none

Raise = Callable[[str], Exception]


class UnmatchedRowsError(AssertionError):
    """Usable per-prompt rows found no row of their value's table: a bug in sigmatool."""


def counts_key(k: pl.Expr, n: pl.Expr, n_max: int) -> pl.Expr:
    """One Int64 per count pair, ``k·(n_max + 1) + n``: a join on one integer column is about twice as fast
    as on two. Null where n is past ``n_max`` or k is not in 0…n, where it could meet another pair's key."""
    fits = (n >= 0) & (n <= n_max) & (k >= 0) & (k <= n)
    return pl.when(fits).then(k.cast(pl.Int64) * (n_max + 1) + n.cast(pl.Int64))


def join_values(
    rows: pl.LazyFrame,
    table: pl.DataFrame,
    on: Sequence[str],
    *,
    needed: pl.Expr | None = None,
    error: Raise = UnmatchedRowsError,
) -> pl.LazyFrame:
    """``rows`` with the other columns of ``table`` (one row per distinct ``on``), in the rows' order.

    Every row for which ``needed`` is true (every row, without it) must find its value; a row that does
    not raises ``error`` (default :class:`UnmatchedRowsError`) while the rows stream. A single float key is found
    by binary search, batch by batch (no hash table: 10⁷ distinct pass rates cost their own columns and no
    more); other keys by a hash join, nulls matching nulls (a null ``--by`` group is a group).
    """
    on = list(on)
    if len(on) == 1 and table.schema[on[0]].is_float():
        return _searched(rows, table, on[0], needed, error)
    marked = table.with_columns(pl.lit(True).alias(FOUND)).lazy()
    joined = rows.join(marked, on=on, how="left", maintain_order="left", nulls_equal=True)
    schema = {**rows.collect_schema(), **table.drop(on).schema}

    def check(batch: pl.DataFrame) -> pl.DataFrame:
        _check(batch, batch[FOUND].is_not_null().to_numpy(), needed, error)
        return batch.drop(FOUND)

    return _batchwise(joined, check, schema)


def join_frame(frame: pl.DataFrame, table: pl.DataFrame, on: Sequence[str]) -> pl.DataFrame:
    """:func:`join_values` on a frame in memory (a batch of rows), every row needing its value."""
    joined = frame.join(
        table.with_columns(pl.lit(True).alias(FOUND)), on=list(on), how="left", nulls_equal=True
    )
    _check(joined, joined[FOUND].is_not_null().to_numpy(), None, UnmatchedRowsError)
    return joined.drop(FOUND)


def _searched(
    rows: pl.LazyFrame, table: pl.DataFrame, key: str, needed: pl.Expr | None, error: Raise
) -> pl.LazyFrame:
    """:func:`join_values` on one float key, by ``searchsorted`` in the table's ascending keys."""
    table = table.filter(pl.col(key).is_not_null()).sort(key)
    values = table[key].cast(pl.Float64).to_numpy()
    if values.size > 1 and not bool(np.all(values[1:] > values[:-1])):
        raise ValueError(f"join_values: the table repeats values of {key!r}")
    columns = table.drop(key)
    last = max(values.size - 1, 0)

    def add(batch: pl.DataFrame) -> pl.DataFrame:
        wanted = batch[key].cast(pl.Float64).to_numpy()  # a null key is NaN here, and NaN is found nowhere
        # Searching in ascending order walks the values once: several times faster than random order.
        order = np.argsort(wanted, kind="stable")
        index = np.empty(wanted.size, dtype=np.int64)
        index[order] = np.minimum(np.searchsorted(values, wanted[order]), last)
        found = values[index] == wanted if values.size else np.zeros(batch.height, dtype=np.bool_)
        _check(batch, found, needed, error)
        looked_up = columns.select(pl.all().gather(index)) if values.size else columns.clear(batch.height)
        kept = looked_up.select(pl.when(pl.Series(found)).then(pl.all()).name.keep())
        return pl.concat([batch, kept], how="horizontal")

    return _batchwise(rows, add, {**rows.collect_schema(), **columns.schema})


def _check(batch: pl.DataFrame, found: NDArray[np.bool_], needed: pl.Expr | None, error: Raise) -> None:
    """Raise ``error`` when a row of ``batch`` that needs a value (``needed``, or every row) found none."""
    missing = ~found
    if needed is not None:
        missing &= batch.select(needed.fill_null(False)).to_series().to_numpy()
    if bool(missing.any()):
        first = batch.filter(pl.Series(missing)).row(0, named=True)
        shown = ", ".join(f"{c} = {v!r}" for c, v in first.items() if not c.startswith("__"))
        raise error(f"{int(missing.sum()):,} row(s) without a value, the first: {shown}")


def _batchwise(
    lf: pl.LazyFrame, function: Callable[[pl.DataFrame], pl.DataFrame], schema: dict[str, pl.DataType]
) -> pl.LazyFrame:
    """``lf`` through ``function`` batch by batch, streaming. The function reads columns that the caller
    may drop: polars 1.x pushes projections into ``map_batches`` unless told not to."""
    return lf.map_batches(
        function,
        schema=schema,
        streamable=True,
        predicate_pushdown=False,
        projection_pushdown=False,
        slice_pushdown=False,
    )

"""The plan per prompt: the user's rows, unchanged and in their order, with the plan's columns added.

Added columns, in order: ``group_size`` (Int64; 0 = left out, null when the row's p is not in the plan),
``keep`` (group_size > 0), ``p_used`` (the pass rate the plan used), ``p_silent_at_G``, ``expected_sigma``
(E[σ] at G, with the plan's std convention) and ``fidelity_at_G`` (null when left out).

Prompts that share a value split between two sizes (at most two, adjacent on the value's hull) take them in
id order: the first ``n`` by the id column (then by row) get the size ``Plan.values`` lists first (the
larger), as its ``first_rank`` says. The rows are joined with the per-value table on the value (and the
``--by`` keys), so any number of rows streams through.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.errors import UsageError
from sigmatool.plan.core import METRICS, Plan

ADDED_COLUMNS = ("group_size", "keep", "p_used", "p_silent_at_G", "expected_sigma", "fidelity_at_G")
ROW = "__plan_row"  # the rows' order
KEY = "__plan_key"  # the value a row is planned by (null: not planned)
CELL_K, CELL_N = "__plan_k", "__plan_n"  # and its counts, when the plan was made on counts


def export(rows: pl.LazyFrame, plan: Plan, *, p_col: str = "p", id_col: str | None = None) -> pl.LazyFrame:
    """``rows`` with the plan's columns added (lazy; joins on the value, so it streams)."""
    columns = rows.collect_schema().names()
    clash = [c for c in (*ADDED_COLUMNS, ROW, KEY) if c in columns]
    if clash:
        raise UsageError(f"the input already has column(s) {', '.join(map(repr, clash))}; rename them first")
    missing = [c for c in (p_col, id_col) if c is not None and c not in columns]
    if missing:
        raise UsageError(
            f"no column {', '.join(map(repr, missing))} in the input; it has {', '.join(columns)}"
        )
    lf = rows.with_row_index(ROW).with_columns(pl.col(p_col).cast(pl.Float64).alias(KEY))
    every, split = (t.with_columns(pl.col("p").alias(KEY)) for t in plan.tables())
    order = [id_col, ROW] if id_col else [ROW]
    return annotate(lf, every, split, keys=(), order=order).select(*columns, *ADDED_COLUMNS)


def annotate(
    lf: pl.LazyFrame, every: pl.DataFrame, split: pl.DataFrame, keys: Sequence[str], order: Sequence[str]
) -> pl.LazyFrame:
    """Add the plan's columns to rows that carry ``keys``, the value ``KEY`` and their ``order`` columns.

    ``every`` and ``split`` are :meth:`Plan.tables` with ``keys`` and ``KEY`` (``p`` is the pass rate used).
    One join on the value gives every row its size; the few rows of split values that take the other size
    are joined again, by row, with a table as small as they are.
    """
    on = [*keys, KEY] if KEY in every.columns else list(keys)
    planned = ["group_size", "p_used", *METRICS]
    single = every.select(*on, "group_size", pl.col("p").alias("p_used"), *METRICS)
    joined = _lookup(lf, single, planned) if not keys else _join(lf, single, on)
    if split.height == 0:
        return joined.with_columns((pl.col("group_size") > 0).fill_null(False).alias("keep"))
    chosen = _split_rows(lf, split, on, order)
    return (
        joined.join(chosen.lazy(), on=ROW, how="left", maintain_order="left")
        .with_columns(
            *[pl.coalesce(f"__split_{c}", c).alias(c) for c in planned],
            (pl.coalesce("__split_group_size", "group_size") > 0).fill_null(False).alias("keep"),
        )
        .drop([f"__split_{c}" for c in planned])
    )


def _join(lf: pl.LazyFrame, single: pl.DataFrame, on: list[str]) -> pl.LazyFrame:
    """Each row's columns from its value's row of ``single``, by a hash join on the keys and the value."""
    return lf.join(single.lazy(), on=on, how="left", maintain_order="left", nulls_equal=True)


def _lookup(lf: pl.LazyFrame, single: pl.DataFrame, planned: list[str]) -> pl.LazyFrame:
    """The same as :func:`_join` without keys, by binary search in the ascending values, batch by batch: no
    hash table, so 10⁷ distinct values cost their own columns and no more."""
    values = single[KEY].to_numpy()
    columns = single.select(planned)
    last = max(values.size - 1, 0)

    def add(batch: pl.DataFrame) -> pl.DataFrame:
        wanted = batch[KEY].to_numpy()  # a null key is NaN here, and NaN is found nowhere
        # Searching in ascending order walks the values once: several times faster than random order.
        order = np.argsort(wanted, kind="stable")
        index = np.empty(wanted.size, dtype=np.int64)
        index[order] = np.minimum(np.searchsorted(values, wanted[order]), last)
        found = pl.Series(values[index] == wanted) if values.size else pl.Series([False] * batch.height)
        looked_up = columns.select(pl.all().gather(index)) if values.size else columns.clear(batch.height)
        return pl.concat(
            [batch, looked_up.select(pl.when(found).then(pl.all()).name.keep())], how="horizontal"
        )

    schema = {**lf.collect_schema(), **columns.schema}
    # The function reads KEY, which the final select drops: polars 1.x pushes projections into map_batches
    # unless told not to (polars 2 does not by default).
    return lf.map_batches(
        add,
        schema=schema,
        streamable=True,
        predicate_pushdown=False,
        projection_pushdown=False,
        slice_pushdown=False,
    )


def _split_rows(lf: pl.LazyFrame, split: pl.DataFrame, on: list[str], order: Sequence[str]) -> pl.DataFrame:
    """The rows that take a split value's other size (the first ``prompts`` in ``order``), with its columns."""
    row_type = lf.collect_schema()[ROW]
    members = (
        lf.select(ROW, *on, *[c for c in order if c not in (ROW, *on)])
        .join(split.select(on).lazy(), on=on, how="semi", nulls_equal=True)
        .collect(engine="streaming")
        .sort([*on, *order], nulls_last=True)
        .with_columns(pl.int_range(pl.len()).over(on).alias("__rank"))
    )
    other = split.select(
        *on,
        "prompts",
        *[pl.col(c).alias(f"__split_{c}") for c in ("group_size", *METRICS)],
        pl.col("p").alias("__split_p_used"),
    )
    return (
        members.join(other, on=on, how="inner", nulls_equal=True)
        .filter(pl.col("__rank") < pl.col("prompts"))
        .select(
            pl.col(ROW).cast(row_type),
            *[f"__split_{c}" for c in ("group_size", "p_used", *METRICS)],
        )
    )


def group_sizes_for(plan: Plan, p: NDArray[np.float64]) -> NDArray[np.int64]:
    """The planned G of each prompt of a per-prompt array of pass rates (id order = array order)."""
    rates = np.asarray(p, dtype=np.float64)
    index = np.searchsorted(plan.p, rates)
    found = (index < plan.p.size) & (plan.p[np.minimum(index, plan.p.size - 1)] == rates)
    if not found.all():
        raise UsageError("these pass rates are not the ones the plan was made for")
    lo, hi, n_hi = plan.group_sizes()
    order = np.argsort(index, kind="stable")
    starts = np.searchsorted(index[order], np.arange(plan.p.size))
    rank = np.empty(rates.size, dtype=np.int64)
    rank[order] = np.arange(rates.size) - starts[index[order]]
    return np.where(rank < n_hi[index], hi[index], lo[index])

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
from sigmatool.plan.core import Plan

ADDED_COLUMNS = ("group_size", "keep", "p_used", "p_silent_at_G", "expected_sigma", "fidelity_at_G")
METRICS = ("p_silent_at_G", "expected_sigma", "fidelity_at_G")
ROW = "__plan_row"  # the rows' order
KEY = "__plan_key"  # the value a row is planned by (null: not planned)


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
    values = plan.values.with_columns(pl.col("p").alias(KEY))
    return annotate(lf, values, keys=(), order=[id_col, ROW] if id_col else [ROW]).select(
        *columns, *ADDED_COLUMNS
    )


def annotate(
    lf: pl.LazyFrame, values: pl.DataFrame, keys: Sequence[str], order: Sequence[str]
) -> pl.LazyFrame:
    """Add the plan's columns to rows that carry ``keys``, the value ``KEY`` and their ``order`` columns.

    ``values``: ``keys``, ``KEY``, and the columns of ``Plan.values`` (``p`` is the pass rate used).
    """
    on = [*keys, KEY]
    split = values.filter(pl.len().over(on) > 1)
    single = values.filter(pl.len().over(on) == 1).select(*on, pl.col("group_size").alias("__single_G"))
    metrics = values.select(*on, pl.col("p").alias("p_used"), "group_size", *METRICS)
    out = (
        lf.join(single.lazy(), on=on, how="left", maintain_order="left", nulls_equal=True)
        .join(_split_rows(lf, split, on, order).lazy(), on=ROW, how="left", maintain_order="left")
        .with_columns(pl.coalesce("__split_G", "__single_G").alias("group_size"))
        .join(metrics.lazy(), on=[*on, "group_size"], how="left", maintain_order="left", nulls_equal=True)
        .with_columns((pl.col("group_size") > 0).fill_null(False).alias("keep"))
    )
    return out


def _split_rows(lf: pl.LazyFrame, split: pl.DataFrame, on: list[str], order: Sequence[str]) -> pl.DataFrame:
    """Group size of each row whose value is split, by its rank in ``order`` within the value."""
    row_type = lf.collect_schema()[ROW]
    schema: dict[str, pl.DataType] = {ROW: row_type, "__split_G": pl.Int64()}
    if split.height == 0:
        return pl.DataFrame(schema=schema)
    wanted = split.select(on).unique()
    members = (
        lf.select(ROW, *on, *[c for c in order if c not in (ROW, *on)])
        .join(wanted.lazy(), on=on, how="semi", nulls_equal=True)
        .collect()
        .sort([*on, *order], nulls_last=True)
        .with_columns(pl.int_range(pl.len()).over(on).alias("__rank"))
    )
    bounds = split.select(
        *on,
        pl.col("group_size").alias("__split_G"),
        pl.col("first_rank"),
        (pl.col("first_rank") + pl.col("prompts")).alias("__end"),
    )
    return (
        members.join(bounds, on=on, how="inner", nulls_equal=True)
        .filter((pl.col("__rank") >= pl.col("first_rank")) & (pl.col("__rank") < pl.col("__end")))
        .select(pl.col(ROW).cast(row_type), "__split_G")
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

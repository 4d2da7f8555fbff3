"""The plan per prompt: the user's rows, unchanged and in their order, with the plan's columns added.

Added columns, in order: ``group_size`` (Int64; 0 = left out, null when the row's p is not in the plan),
``keep`` (group_size > 0), ``p_used`` (the pass rate the plan used), ``p_silent_at_G``, ``expected_sigma``
(E[σ] at G, with the plan's std convention) and ``fidelity_at_G`` (null when left out).

Prompts that share a value split between two sizes (at most two, adjacent on the value's hull) take them in
id order: the first ``n`` by the id column (then by row) get the larger size, as ``Plan.values`` lists.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.errors import UsageError
from sigmatool.plan.core import Plan

ADDED_COLUMNS = ("group_size", "keep", "p_used", "p_silent_at_G", "expected_sigma", "fidelity_at_G")
_ROW = "__plan_row"


def export(rows: pl.LazyFrame, plan: Plan, *, p_col: str = "p", id_col: str | None = None) -> pl.LazyFrame:
    """``rows`` with the plan's columns added (lazy; joins on the value, so it streams)."""
    columns = rows.collect_schema().names()
    clash = [c for c in (*ADDED_COLUMNS, _ROW) if c in columns]
    if clash:
        raise UsageError(f"the input already has column(s) {', '.join(map(repr, clash))}; rename them first")
    missing = [c for c in (p_col, id_col) if c is not None and c not in columns]
    if missing:
        raise UsageError(
            f"no column {', '.join(map(repr, missing))} in the input; it has {', '.join(columns)}"
        )
    values = plan.values
    metrics = values.select(
        pl.col("p").alias("p_used"), "group_size", "p_silent_at_G", "expected_sigma", "fidelity_at_G"
    ).unique(subset=["p_used", "group_size"], keep="first", maintain_order=True)
    split_p = values.filter(pl.col("p").is_duplicated()).select("p").unique()
    single = values.filter(~pl.col("p").is_in(split_p["p"].implode())).select(
        pl.col("p").alias("p_used"), pl.col("group_size").alias("__single_G")
    )
    lf = rows.with_row_index(_ROW).with_columns(pl.col(p_col).cast(pl.Float64).alias("p_used"))
    ranked = _split_rows(lf, values.filter(pl.col("p").is_in(split_p["p"].implode())), id_col)
    out = (
        lf.join(single.lazy(), on="p_used", how="left", maintain_order="left")
        .join(ranked.lazy(), on=_ROW, how="left", maintain_order="left")
        .with_columns(pl.coalesce("__split_G", "__single_G").alias("group_size"))
        .join(metrics.lazy(), on=["p_used", "group_size"], how="left", maintain_order="left")
        .with_columns((pl.col("group_size") > 0).fill_null(False).alias("keep"))
    )
    return out.select(*columns, *ADDED_COLUMNS)


def _split_rows(lf: pl.LazyFrame, split: pl.DataFrame, id_col: str | None) -> pl.DataFrame:
    """Group size of each row whose value is split, by its rank in id order (then row order) within the value."""
    schema = {_ROW: pl.UInt32, "__split_G": pl.Int64}
    if split.height == 0:
        return pl.DataFrame(schema=schema)
    order = [id_col, _ROW] if id_col else [_ROW]
    members = (
        lf.filter(pl.col("p_used").is_in(split["p"].unique().implode()))
        .select(_ROW, "p_used", *([id_col] if id_col else []))
        .collect()
        .sort(["p_used", *order])
        .with_columns(pl.int_range(pl.len()).over("p_used").alias("__rank"))
    )
    bounds = split.select(
        pl.col("p").alias("p_used"),
        pl.col("group_size").alias("__split_G"),
        pl.col("first_rank"),
        (pl.col("first_rank") + pl.col("prompts")).alias("__end"),
    )
    return (
        members.join(bounds, on="p_used", how="inner")
        .filter((pl.col("__rank") >= pl.col("first_rank")) & (pl.col("__rank") < pl.col("__end")))
        .select(pl.col(_ROW).cast(pl.UInt32), "__split_G")
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

"""The plan per prompt: the user's rows, unchanged and in their order, with the plan's columns added.

Added columns, in order: ``group_size`` (Int64; 0 = left out, null when the row has no p),
``keep`` (group_size > 0), ``p_used`` (the pass rate the plan used), ``p_silent_at_G``, ``expected_sigma``
(E[σ] at G, with the plan's std convention) and ``fidelity_at_G`` (null when left out).

Prompts that share a value split between two sizes (at most two, adjacent on the value's hull) take them in
id order: the first ``n`` by the id column (then by row) get the size ``Plan.values`` lists first (the
larger), as its ``first_rank`` says. The rows are joined with the per-value table on the value (and the
``--by`` keys), so any number of rows streams through. A row whose p is not one the plan was made for is an
error, never a blank size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.errors import UsageError
from sigmatool.joins import Raise, UnmatchedRowsError, join_values
from sigmatool.plan.core import METRICS, Plan

ADDED_COLUMNS = ("group_size", "keep", "p_used", *METRICS)
ROW = "__plan_row"  # the rows' order
KEY = "__plan_key"  # the value a row is planned by (null: not planned)
CELL_K, CELL_N = "__plan_k", "__plan_n"  # and its counts, when the plan was made on counts
BARE = "__plan_rate"  # beside counts, a rate off its column's grid (k, n null): its own rate


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
    return annotate(lf, every, split, keys=(), order=order, error=_not_planned).select(
        *columns, *ADDED_COLUMNS
    )


def _not_planned(problem: str) -> UsageError:
    return UsageError(f"these pass rates are not the ones the plan was made for: {problem}")


def annotate(
    lf: pl.LazyFrame,
    every: pl.DataFrame,
    split: pl.DataFrame,
    keys: Sequence[str],
    order: Sequence[str],
    *,
    via: pl.DataFrame | None = None,
    needed: pl.Expr | None = None,
    error: Raise = UnmatchedRowsError,
) -> pl.LazyFrame:
    """Add the plan's columns to rows that carry ``keys``, the value ``KEY`` and their ``order`` columns.

    ``every`` and ``split`` are :meth:`Plan.tables` with ``keys`` and ``KEY`` (``p`` is the pass rate used).
    With ``via`` (``keys``, the rows' own value columns such as their counts, and ``KEY``: the histogram's
    value of each) the rows are joined on their own columns and get ``KEY`` from it. One join gives every
    row its size; the few rows of split values that take the other size are joined again, by row, with a
    table as small as they are. A row that is ``needed`` (default: has a ``KEY``) and finds no value
    raises ``error``.
    """
    on = [*keys, KEY] if KEY in every.columns else list(keys)
    planned = ["group_size", "p_used", *METRICS]
    single = every.select(*on, "group_size", pl.col("p").alias("p_used"), *METRICS)
    if via is not None:
        single = via.join(single, on=on, how="left", nulls_equal=True)
        unplanned = single.filter(pl.col("group_size").is_null())
        if unplanned.height:
            raise UnmatchedRowsError(f"histogram values without a plan row: {unplanned.head(3).rows()}")
        on = [c for c in via.columns if c != KEY]
    needed = pl.col(KEY).is_not_null() if needed is None else needed
    joined = join_values(lf, single, on, needed=needed, error=error)
    if split.height == 0:
        return joined.with_columns((pl.col("group_size") > 0).fill_null(False).alias("keep"))
    # Rows keyed by their own columns get KEY from the join; the others carry it already.
    split_on = [*keys, KEY] if KEY in every.columns else list(keys)
    chosen = _split_rows(lf if via is None else joined, split, split_on, order)
    return (
        joined.join(chosen.lazy(), on=ROW, how="left", maintain_order="left")
        .with_columns(
            *[pl.coalesce(f"__split_{c}", c).alias(c) for c in planned],
            (pl.coalesce("__split_group_size", "group_size") > 0).fill_null(False).alias("keep"),
        )
        .drop([f"__split_{c}" for c in planned])
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

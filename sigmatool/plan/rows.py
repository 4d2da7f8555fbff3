"""The plan on the user's own rows: every input row, unchanged and in order, with the plan's columns.

The rows are read again with all their columns (:func:`sigmatool.load.with_originals`) and each meets its
plan row in a streaming join on what the user gave: with counts, on its (--by group, k, n), integers, by
way of the histogram's value of those counts; for a rate column, on the rate read by the same expression
that read it into the histogram. Never on k/n computed again (see :mod:`sigmatool.joins`): a usable row
that finds no plan row is a bug and raises. A row the analysis skipped (a null or, with
``--skip-invalid``, an invalid value) gets no size. A rollout log (``--rollouts``, ``--from``) has one row
per answer, so there the rows are its prompts: the ``--by`` columns, the prompt id, ``k`` and ``n``, in
order of first appearance.
"""

from __future__ import annotations

import polars as pl

from sigmatool.errors import DataError
from sigmatool.joins import counts_key
from sigmatool.load import Dataset, Histogram, usable_expr, with_originals
from sigmatool.load.dataset import k_expr, n_expr, p_expr, rate_value
from sigmatool.load.logs import rollout_aggregates
from sigmatool.load.names import RAW_ID, RAW_N
from sigmatool.options import COLUMN
from sigmatool.plan.export import ADDED_COLUMNS, BARE, CELL_K, CELL_N, KEY, ROW, annotate
from sigmatool.plan.groups import Plans

USABLE = "__plan_usable"  # the row takes part in the plan (not null, not skipped as invalid)
COUNTS = "__plan_counts"  # a usable row's (k, n) as one integer (the user's own k and n stay as they are)


def dataset_rows(hist: Histogram, plans: Plans) -> pl.LazyFrame:
    """The input's rows with ``group_size``, ``keep``, ``p_used``, ``p_silent_at_G``, ``expected_sigma``,
    ``fidelity_at_G`` added (lazy: sink it). Split values go by ``--id-col``, then row order. With several
    pass-rate columns, every row once per column, ``column`` first."""
    ds = hist.dataset
    ds.options.check_rows_readable()
    if ds.is_log:
        return _rollout_prompts(hist, plans)
    full = with_originals(ds)
    added = (*ADDED_COLUMNS, COLUMN) if full.parts else ADDED_COLUMNS
    clash = [c for c in added if c in full.columns]
    if clash:
        raise DataError(
            f"the input already has column(s) {', '.join(map(repr, clash))}, which the plan adds; rename them"
        )
    if not full.parts:
        return _planned_rows(full, hist.frame, plans)
    parts = [_planned_rows(part, hist.frame, plans, part.options.col) for part in full.parts]
    return pl.concat(parts)


def _planned_rows(full: Dataset, hist: pl.DataFrame, plans: Plans, column: str | None = None) -> pl.LazyFrame:
    """The rows of one pass-rate column with the plan's columns; keyed by ``column`` when it is given."""
    lf = full.frame.with_row_index(ROW).with_columns(usable_expr(full).alias(USABLE))
    key = [] if column is None else [pl.lit(column, dtype=pl.String).alias(COLUMN)]
    lf = lf.with_columns(key)
    order = [RAW_ID, ROW] if full.options.id_col else [ROW]
    # Rates off the grid beside counts, or a column of bare rates beside columns of counts: met on their
    # own rate, their k and n null.
    bare = full.grid is not None or (plans.cells and not full.has_counts)
    none = pl.lit(None, dtype=pl.Int64)
    k, n = (k_expr(full), n_expr(full)) if full.has_counts else (none, none)
    if bare:
        lf = lf.with_columns(pl.when(pl.col(USABLE) & k.is_null()).then(rate_value(full)).alias(BARE))
    if plans.cells:
        out = _cells(lf, plans, order, k, n, bare)
    elif full.has_counts:
        out = _counted(lf, hist, plans, order, k, n, bare)
    else:
        # The histogram's p of a rate column is this same expression of the same value: the input's own.
        lf = lf.with_columns(pl.when(pl.col(USABLE)).then(p_expr(full)).alias(KEY))
        out = annotate(lf, *plans.tables(), plans.by, order)
    return out.select(*([COLUMN] if key else []), *full.columns, *ADDED_COLUMNS)


def _counted(
    lf: pl.LazyFrame,
    hist: pl.DataFrame,
    plans: Plans,
    order: list[str],
    k: pl.Expr,
    n: pl.Expr,
    bare: bool = False,
) -> pl.LazyFrame:
    """:func:`annotate` for rows with counts: each usable row meets its plan row on its (--by group, k, n),
    integers, by way of the histogram's value of those counts; never by a p̂ computed again."""
    n_max = int(hist["n"].max() or 0)  # type: ignore[arg-type]
    lf = lf.with_columns(pl.when(pl.col(USABLE)).then(counts_key(k, n, n_max)).alias(COUNTS))
    via = hist.select(
        *plans.by, counts_key(pl.col("k"), pl.col("n"), n_max).alias(COUNTS), pl.col("p").alias(KEY)
    )
    if bare:
        via = via.with_columns(pl.when(pl.col(COUNTS).is_null()).then(pl.col(KEY)).alias(BARE))
    return annotate(lf, *plans.tables(), plans.by, order, via=via, needed=pl.col(USABLE))


def _cells(
    lf: pl.LazyFrame, plans: Plans, order: list[str], k: pl.Expr, n: pl.Expr, bare: bool = False
) -> pl.LazyFrame:
    """:func:`annotate` for a plan made on the counts themselves (a prior, or the unbiased estimator): each
    usable row meets its plan row on its (--by group, k, n), integers, directly."""
    lf = lf.with_columns(
        pl.when(pl.col(USABLE)).then(k).alias(CELL_K), pl.when(pl.col(USABLE)).then(n).alias(CELL_N)
    )
    keys = (*plans.by, CELL_K, CELL_N, *([BARE] if bare else []))
    return annotate(lf, *plans.tables(), keys, order, needed=pl.col(USABLE))


def _rollout_prompts(hist: Histogram, plans: Plans) -> pl.LazyFrame:
    """One row per prompt of a rollout log (``--rollouts`` or a trainer's dumps): ``--by`` columns, the prompt
    id, k, n and the plan's columns."""
    ds = hist.dataset
    assert ds.raw is not None
    prompt = ds.options.prompt_col or "prompt"
    per_prompt = (
        ds.raw.group_by([*ds.by, RAW_ID], maintain_order=True)
        .agg(rollout_aggregates())
        .with_row_index(ROW)
        .with_columns(k_expr(ds), pl.when(pl.col(RAW_N) > 0).then(n_expr(ds)).otherwise(0).alias("n"))
        .with_columns((pl.col("n") > 0).alias(USABLE))
    )
    if plans.cells:
        out = _cells(per_prompt, plans, [RAW_ID, ROW], pl.col("k"), pl.col("n"))
    else:
        out = _counted(per_prompt, hist.frame, plans, [RAW_ID, ROW], pl.col("k"), pl.col("n"))
    return out.select(*ds.by, pl.col(RAW_ID).alias(prompt), "k", "n", *ADDED_COLUMNS)


def split_notes(plans: Plans, id_col: str | None) -> list[str]:
    """One line per value whose prompts split between two sizes, saying which prompts get which."""
    order = f"by {id_col!r}, then row order" if id_col else "in row order"
    every, split = plans.tables()
    on = [*plans.by, CELL_K, CELL_N] if plans.cells else [*plans.by, KEY]
    notes = []
    for r in split.join(every, on=on, suffix="_rest", nulls_equal=True).iter_rows(named=True):
        where = "".join(f"{b} = {r[b]}, " for b in plans.by)
        notes.append(
            f"{where}{_value(r, plans.cells)}: the first {r['prompts']:,} of its prompts ({order}) get "
            f"G = {r['group_size']}, the others G = {r['group_size_rest']}"
        )
    return notes


def _value(row: dict[str, object], cells: bool) -> str:
    if cells and row[CELL_N] is not None:
        return f"k = {row[CELL_K]} of n = {row[CELL_N]}"
    return f"p̂ = {row['p']:.6g}"

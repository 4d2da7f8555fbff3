"""The plan on the user's own rows: every input row, unchanged and in order, with the plan's columns.

The rows are read again with all their columns (:func:`sigmatool.load.with_originals`) and each is keyed by
the value the histogram gave it (its ``--by`` group and p̂, computed by the same expression), so that it
meets its plan row in a streaming join. A row the analysis skipped (a null or, with ``--skip-invalid``,
an invalid value) gets no size. A rollout log has one row per answer, so there the rows are its prompts:
the ``--by`` columns, the prompt id, ``k`` and ``n``, in order of first appearance.
"""

from __future__ import annotations

import polars as pl

from sigmatool.errors import DataError
from sigmatool.load import Dataset, usable_expr, with_originals
from sigmatool.load.columns import rollout_aggregates
from sigmatool.load.dataset import k_expr, n_expr, p_expr
from sigmatool.load.names import RAW_ID, RAW_N
from sigmatool.plan.export import ADDED_COLUMNS, CELL_K, CELL_N, KEY, ROW, annotate
from sigmatool.plan.groups import Plans


def dataset_rows(ds: Dataset, plans: Plans) -> pl.LazyFrame:
    """The input's rows with ``group_size``, ``keep``, ``p_used``, ``p_silent_at_G``, ``expected_sigma``,
    ``fidelity_at_G`` added (lazy: sink it). Split values go by ``--id-col``, then row order."""
    if ds.options.rollouts:
        return _rollout_prompts(ds, plans)
    full = with_originals(ds)
    clash = [c for c in ADDED_COLUMNS if c in full.columns]
    if clash:
        raise DataError(
            f"the input already has column(s) {', '.join(map(repr, clash))}, which the plan adds; rename them"
        )
    usable = usable_expr(full)
    key = pl.when(usable).then(p_expr(full)).otherwise(None).alias(KEY)
    lf = full.frame.with_row_index(ROW).with_columns(key)
    keys: tuple[str, ...] = plans.by
    if plans.cells:
        lf = lf.with_columns(
            pl.when(usable).then(k_expr(full)).alias(CELL_K), pl.when(usable).then(n_expr(full)).alias(CELL_N)
        )
        keys = (*keys, CELL_K, CELL_N)
    order = [RAW_ID, ROW] if ds.options.id_col else [ROW]
    return annotate(lf, *plans.tables(), keys, order).select(*full.columns, *ADDED_COLUMNS)


def _rollout_prompts(ds: Dataset, plans: Plans) -> pl.LazyFrame:
    """One row per prompt of a rollout log: ``--by`` columns, the prompt id, k, n and the plan's columns."""
    assert ds.raw is not None
    prompt = ds.options.prompt_col or "prompt"
    per_prompt = (
        ds.raw.group_by([*ds.by, RAW_ID], maintain_order=True)
        .agg(rollout_aggregates())
        .with_row_index(ROW)
        .with_columns(
            pl.when(pl.col(RAW_N) > 0).then(p_expr(ds)).otherwise(None).alias(KEY),
            k_expr(ds),
            pl.when(pl.col(RAW_N) > 0).then(n_expr(ds)).otherwise(0).alias("n"),
        )
    )
    keys: tuple[str, ...] = plans.by
    if plans.cells:
        per_prompt = per_prompt.with_columns(pl.col("k").alias(CELL_K), pl.col("n").alias(CELL_N))
        keys = (*keys, CELL_K, CELL_N)
    out = annotate(per_prompt, *plans.tables(), keys, [RAW_ID, ROW])
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
    if cells:
        return f"k = {row[CELL_K]} of n = {row[CELL_N]}"
    return f"p̂ = {row['p']:.6g}"

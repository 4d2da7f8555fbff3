"""The schedule on the user's own rows: each row's weight (static schedules), and the order a run draws.

The rows are read again with all their columns and each meets its histogram row on what the user gave, as
the plan's rows do (:mod:`sigmatool.plan.rows`): with counts on its (--by group, k, n), integers; for a
rate column on the rate read by the expression that read it into the histogram. A usable row that finds
no histogram row is a bug and raises; a row the analysis skipped (a null, an invalid value) is never drawn.

- :func:`weighted`: every input row, in order, with ``weight`` (its chance per draw: π / B; 0 for a prompt
  the schedule never draws, null for a row without a usable pass rate) and its ``pool`` or ``bucket``
  (pools and buckets) — the form a weighted sampler takes.
- :func:`order`: T × B rows, the prompts each step draws (distinct within a step, randomized systematic
  sampling with the schedule's π, :mod:`.sampling`; easy-first in its order), with ``step``, the input row
  ``row`` (0-based) and every input column: the file a dataloader reads in order with shuffle off. An
  added column whose name the input already has is named ``curriculum_<name>`` (:func:`added_name`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from sigmatool.curriculum.result import CurriculumResult
from sigmatool.curriculum.sampling import systematic
from sigmatool.curriculum.schedule import IntArray
from sigmatool.errors import DataError, UsageError
from sigmatool.joins import counts_key
from sigmatool.load import Dataset, usable_expr, with_originals
from sigmatool.load.dataset import k_expr, n_expr, p_expr, rate_value
from sigmatool.options.curriculum import Schedule

VALUE = "__curriculum_value"  # the histogram row a usable input row belongs to
ROW = "__curriculum_row"


def added_name(name: str, taken: Sequence[str]) -> str:
    """The name of a column curriculum adds: ``name``, or where the input has a column of that name,
    ``curriculum_name`` (then ``curriculum_name_2``, …): the input's own columns keep their names.

    >>> added_name("row", ["id", "row"])
    'curriculum_row'
    """
    if name not in taken:
        return name
    found, i = f"curriculum_{name}", 2
    while found in taken:
        found, i = f"curriculum_{name}_{i}", i + 1
    return found


def _read(ds: Dataset, hist: pl.DataFrame) -> tuple[pl.DataFrame, list[str], IntArray]:
    """Every input row with all its columns, the originals' names, and each row's histogram row (−1: not
    usable)."""
    if ds.is_log:
        raise UsageError(
            "a rollout log has one row per answer: write its prompts' pass rates first "
            "(silent --export-pass-rates FILE), then schedule that file"
        )
    if ds.parts:
        raise UsageError("curriculum schedules one pass-rate column: give one --col")
    full = with_originals(ds)
    by = list(ds.by)
    lf = full.frame.with_row_index(ROW).with_columns(usable_expr(full).alias("__usable"))
    cells = hist.select(*by, "k", "n", "p") if "n" in hist.columns else hist.select(*by, "p")
    values = cells.with_row_index(VALUE).with_columns(pl.col(VALUE).cast(pl.Int64))
    if full.has_counts:
        n_max = int(hist["n"].max() or 0)  # type: ignore[arg-type]
        lf = lf.with_columns(
            pl.when(pl.col("__usable")).then(counts_key(k_expr(full), n_expr(full), n_max)).alias("__key")
        )
        if full.grid is not None:  # a rate off its column's grid (k, n null) is met on its own rate
            values = values.with_columns(pl.when(pl.col("n").is_null()).then(pl.col("p")).alias("__bare"))
            bare = pl.when(pl.col("__usable") & k_expr(full).is_null()).then(rate_value(full))
            lf, by = lf.with_columns(bare.alias("__bare")), [*by, "__bare"]
        values = values.select(*by, counts_key(pl.col("k"), pl.col("n"), n_max).alias("__key"), VALUE)
    else:
        lf = lf.with_columns(pl.when(pl.col("__usable")).then(p_expr(full)).alias("__key"))
        values = values.select(*by, pl.col("p").alias("__key"), VALUE)
    found = lf.join(values.lazy(), on=[*by, "__key"], how="left", nulls_equal=True, maintain_order="left")
    frame = found.collect()
    missing = frame.filter(pl.col("__usable") & pl.col(VALUE).is_null())
    if missing.height:
        raise DataError(
            f"{missing.height:,} usable rows found no value of the histogram (a bug: please report)"
        )
    value = frame[VALUE].fill_null(-1).to_numpy().astype(np.int64)
    return frame.select(ROW, *full.columns), list(full.columns), value


def weighted(ds: Dataset, result: CurriculumResult) -> pl.DataFrame:
    """Every input row with ``weight`` (the chance per draw, π / B; 0 for prompts never drawn, null for rows
    without a usable pass rate) and, for pools and buckets, the row's ``pool`` or ``bucket`` (null: in
    none)."""
    options = result.options
    if result.weights is None or result.plan is None:
        raise UsageError(
            f"--per-prompt writes one weight per prompt, and a {options.schedule.value} schedule's weights "
            "change with the step: use --export-order FILE (the prompts each step draws)"
        )
    frame, names, value = _read(ds, result.weights)
    per_value = result.weights["weight"].to_numpy()
    weight = np.where(value >= 0, per_value[np.maximum(value, 0)], np.nan)  # a row with no pass rate: null
    out = frame.select(*names).with_columns(pl.Series(added_name("weight", names), weight).fill_nan(None))
    if options.schedule in (Schedule.pools, Schedule.buckets):
        name = added_name("pool" if options.schedule is Schedule.pools else "bucket", [*names, "weight"])
        unit = result.plan.unit[np.maximum(value, 0)]
        labels = [
            result.plan.units[u] if v >= 0 and u >= 0 else None for u, v in zip(unit, value, strict=True)
        ]
        out = out.with_columns(pl.Series(name, labels, dtype=pl.String))
    return out


def order(ds: Dataset, hist: pl.DataFrame, result: CurriculumResult) -> pl.DataFrame:
    """The T × B rows the run draws, step by step: ``step``, ``row`` and every input column."""
    if ds.options.weight_col:
        raise UsageError(
            "--export-order draws prompts, and with --weight-col a row stands for several: give one row "
            "per prompt"
        )
    assert result.plan is not None
    frame, names, value = _read(ds, hist)
    options, plan = result.options, result.plan
    T, B = options.steps, options.batch
    rng = np.random.default_rng(options.seed)
    usable = value >= 0
    picked = []
    if options.schedule is Schedule.easy_first:
        stream = _easy_first(plan.order, value)
        for t in range(T):
            picked.append(stream[np.arange(t * B, (t + 1) * B) % stream.size])
    else:
        pi = np.zeros(0)
        for t in range(T):
            if t == 0 or not options.static:  # a static schedule's π is every step's
                pi = np.where(usable, plan.step(t)[np.maximum(value, 0)], 0.0)
            picked.append(systematic(pi, B, rng))
    rows = np.concatenate(picked)
    step = np.repeat(np.arange(T, dtype=np.int64), B)
    taken = frame[rows]
    return taken.select(
        pl.Series(added_name("step", names), step),
        pl.col(ROW).cast(pl.Int64).alias(added_name("row", names)),
        *[pl.col(c) for c in names],
    )


def _easy_first(values: IntArray, value: IntArray) -> IntArray:
    """The input rows in easy-first order: by the schedule's order of histogram rows, then input row."""
    rank = np.full(int(value.max(initial=-1)) + 1, -1, dtype=np.int64)
    rank[values] = np.arange(values.size)
    row_rank = np.where(value >= 0, rank[np.maximum(value, 0)], -1)
    drawn = np.flatnonzero(row_rank >= 0)
    return np.asarray(drawn[np.lexsort((drawn, row_rank[drawn]))], dtype=np.int64)

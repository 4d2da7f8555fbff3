"""Many distinct pass rates: the checked rows themselves, streamed, instead of a histogram of distinct values.

When (almost) every prompt has its own pass rate, grouping the rows by value builds a table as large as the
input and saves nothing: the analyses then stream the usable rows through their kernels and add up per
cell. The rows are checked exactly as the histogram checks them: the rows that are not usable (a bad or
missing value, usually none) are grouped by value and go through the histogram's own checks and notes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from sigmatool.errors import DataError, first_line
from sigmatool.load.dataset import Dataset, rate_value, weight_expr
from sigmatool.load.grid import MAX_GRID
from sigmatool.load.histogram import Reload, check_rows, finish_group, suspect_query, text_columns
from sigmatool.load.names import RAW_P
from sigmatool.load.validate import usable_expr
from sigmatool.sums import Stage, with_stages

# The first rows decide: this many are read, and if more than this share of them are distinct (a distinct
# (--by group, p̂) pair with --by), the rows stream, unless the rates take few values (at most one more than
# the largest grid): those may be counts k of n, read as such from the histogram. Either way the answers
# agree (to 1e-15); only the time and memory differ.
SAMPLE_ROWS = 100_000
MIN_ROWS = 20_000
DISTINCT_SHARE = 0.5


UNUSABLE = "__unusable_rows"


@dataclass(frozen=True)
class Totals:
    """What an analysis adds up over the rows, asked for before they are read so that the pass that checks
    them computes it too: ``stages`` of named columns made from each row's ``p``, each step from the ones
    before (see :func:`sigmatool.sums.with_stages`), then ``aggregates`` of them."""

    stages: tuple[Stage, ...]
    aggregates: tuple[pl.Expr, ...]


@dataclass(frozen=True)
class Rows:
    """The usable rows, lazily: the ``--by`` columns, ``p`` (Float64) and ``prompts`` (each row's weight, the
    histogram's column name); with notes for people, and the :class:`Totals` asked for (a one-row frame of
    its aggregates) when the pass that checked the rows computed them."""

    frame: pl.LazyFrame
    dataset: Dataset
    notes: tuple[str, ...] = ()
    totals: pl.DataFrame | None = None


def streams(ds: Dataset) -> bool:
    """Whether to stream the rows: plain pass rates (no counts) whose histogram would hold most of the first
    rows, each distinct pass rate (with ``--by``, each distinct pair of group and pass rate) a row of it."""
    if ds.form != "rate" or ds.has_counts or ds.is_log:
        return False
    keys = [*ds.by, RAW_P]
    try:
        first = ds.frame.select(keys).head(SAMPLE_ROWS).collect()
    except pl.exceptions.PolarsError:
        return False  # the histogram's pass reports it
    if first.height < MIN_ROWS or first[RAW_P].n_unique() <= MAX_GRID + 1:
        return False  # few distinct rates may be k of n on a grid: counts, which the histogram reads
    return first.n_unique() > DISTINCT_SHARE * first.height


def _suspects(ds: Dataset) -> tuple[pl.DataFrame, float]:
    """The rows that are not usable, grouped by value as the histogram groups them; the usable weight."""
    usable = usable_expr(ds)
    suspects = suspect_query(ds.frame.filter(~usable), ds)
    weight = ds.frame.filter(usable).select(weight_expr().sum())
    # One read of the input serves both queries.
    grouped, total = pl.collect_all([suspects, weight], engine="streaming")
    return finish_group(grouped, ds), float(total.item() or 0.0)


def checked_totals(ds: Dataset, totals: Totals) -> pl.DataFrame | None:
    """``totals`` over the rows of unweighted pass rates with no ``--by``, in the one pass that checks them:
    their aggregates when every row is usable, else None (and the rows are read again to name or note the
    others; no aggregate of an unusable row is ever used)."""
    if ds.by or ds.options.weight_col or ds.form != "rate" or ds.has_counts:
        return None
    rates = ds.frame.select(rate_value(ds).alias("p"), (~usable_expr(ds)).alias(UNUSABLE))
    query = with_stages(rates, totals.stages).select(
        pl.len().alias("__rows"), pl.col(UNUSABLE).sum(), *totals.aggregates
    )
    try:
        found = query.collect(engine="streaming")
    except pl.exceptions.PolarsError:
        return None  # text past the type guess, say: the checking pass reports it
    if found[UNUSABLE].item() or not found["__rows"].item():
        return None
    return found.drop(UNUSABLE)


def _usable(ds: Dataset) -> pl.LazyFrame:
    return ds.frame.filter(usable_expr(ds)).select(
        *[pl.col(b) for b in ds.by], rate_value(ds).alias("p"), weight_expr()
    )


def rows(
    ds: Dataset, reload: Reload, on_rows: Callable[[int], None] | None = None, totals: Totals | None = None
) -> Rows:
    """The checked usable rows of a plain pass-rate dataset (see :class:`Rows`); bad values raise as in
    :func:`~sigmatool.load.histogram.histogram`, and a column holding text past the type guess is read
    again as text. ``totals``: computed in the same pass as the checks where :func:`checked_totals` can."""
    found = None if totals is None else checked_totals(ds, totals)
    if found is not None:
        return Rows(_usable(ds), ds, ds.notes, found)
    try:
        suspects, weight = _suspects(ds)
    except pl.exceptions.PolarsError as exc:
        if ds.text_cols or not text_columns(ds):
            raise DataError(f"cannot read the input: {first_line(exc)}") from exc
        ds = reload(ds, text_columns(ds))
        suspects, weight = _suspects(ds)
    notes = check_rows(suspects, ds, reload)
    if weight <= 0:
        raise DataError("no usable prompts in the input (every row was empty, null or skipped)")
    return Rows(_usable(ds), ds, (*ds.notes, *notes))

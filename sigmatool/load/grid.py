"""Pass rates on a 1/n grid: a rate column that is really k right of n samples, read row by row.

Most difficulty files store k/n as a float. When the values lie on the 1/n grid for one n ≤ 128, the column
says how many samples stand behind each rate, and reading it as counts lets the unbiased estimator, the
priors and the bounds work on it (docs/prior.md). The check is exact up to the rounding of the number the
file holds: ``k / n`` in double precision (as Python and polars compute it), the same rounded to single
precision for a float32 column, or a couple of units in the last place away (``k * (1 / n)``, a mean of
n grades). A grid of 128 has a spacing of 1/128, so no rounding can put a value on the wrong grid.

The grid is the column's (how many samples the file logged per prompt); which rows lie on it is each row's
own. A row on the grid is read as k of n; a row off it is a bare rate, for that row alone (:func:`column_grid`):

1. A grid n is *filled* when the distinct values on it fill it (:func:`fills`: at least
   :data:`GRID_VALUES`, and half of its n + 1 points). One value (a million rows of 0.25) or two lie on
   many grids and say nothing of n.
2. The grid is the coarsest filled n, moved to a finer filled m only where the rows ask for it: the values
   on m and off the grid so far fill half of the points m adds (those not on the grid so far), are held by
   :data:`EVIDENCE` prompts or more, and by more prompts than the grid so far holds off m. One row of
   0.01 among multiples of 1/50 is one row off the grid of 50, not a grid of 100; a file of 100 samples
   has thousands of odd k.
3. A grid is taken only where its rows are most of the column: the prompts off it with 0 < p̂ < 1 must be
   fewer than those on it (a column of bare rates with a few round values is bare rates). The histogram
   reads it as counts only where at least :data:`EVIDENCE` prompts on it lie strictly between 0 and 1.

So a row off the grid, or a few, leave the grid where it is and are read as what they are: no other row's
reading moves with them, and a mean over N prompts moves by at most 1/N. Only as many rows as count as
evidence move the grid.

The rule reads numbers; :func:`read_grid` applies it to a column's histogram of distinct rates and gives the
dataset its :class:`~sigmatool.load.dataset.Grid` (the record the dataset's values are read by), with the
note that says so; a ``--samples N`` that the grid contradicts is refused (:func:`off_grid`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.errors import UsageError
from sigmatool.load.dataset import Dataset, Grid, rate_value, weight_expr
from sigmatool.load.names import ROW
from sigmatool.load.validate import usable_expr

# The largest n looked for: difficulty files log from 4 to 128 answers per prompt.
MAX_GRID = 128
# A --samples N that the grid contradicts is an error only when this many prompts have 0 < p < 1: with
# fewer, a coarser grid can be chance (8 samples of 5 prompts may all give an even k). A grid is read from
# the rates only where this many prompts on it have 0 < p < 1, and a finer grid only where this many need it.
EVIDENCE = 30
ULPS = 2
# A grid is read from the rates only where they fill it: at least this many distinct values, and half of the
# grid's n + 1 points. One value (a million rows of 0.25) or two lie on many grids and say nothing of n.
GRID_VALUES = 3

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def fills(distinct: int, n: int) -> bool:
    """Whether ``distinct`` values on the 1/n grid are evidence of it (:data:`GRID_VALUES`, half its points).

    >>> fills(1, 4), fills(3, 4), fills(20, 64), fills(40, 64)
    (False, True, False, True)
    """
    return distinct >= GRID_VALUES and 2 * distinct >= n + 1


def on_grid_mask(p: FloatArray, n: int, single: bool = False) -> BoolArray:
    """Per value of ``p``: whether it is k/n for a whole k in 0…n, up to the rounding of its type.

    >>> on_grid_mask(np.array([0.0, 0.125, 0.3, 1.0, np.nan]), 8).tolist()
    [True, True, False, True, False]
    """
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        exact = np.round(p * n) / n
        close = np.abs(p - exact) <= ULPS * np.spacing(exact)
        if single:
            close |= p == exact.astype(np.float32).astype(np.float64)
        inside = (p >= 0) & (p <= 1)
    return np.asarray(close & inside & np.isfinite(p), dtype=np.bool_)


def on_grid(p: FloatArray, n: int, single: bool = False) -> bool:
    """Whether every value of ``p`` is k/n for a whole k, up to the rounding of its type.

    >>> on_grid(np.array([0.0, 0.125, 0.375, 1.0]), 8)
    True
    >>> on_grid(np.array([3 * (1 / 10), 0.7]), 10)
    True
    >>> on_grid(np.array([0.125, 0.3]), 8)
    False
    """
    return bool(on_grid_mask(p, n, single).all())


def rate_grid(p: FloatArray, single: bool = False, most: int = MAX_GRID) -> int | None:
    """The smallest n in 2…``most`` such that every rate is a multiple of 1/n; None if there is none, or if
    every rate is 0 or 1 (any n would do). (Whether a ``--samples N`` contradicts the rates; the reading of
    a column is :func:`column_grid`'s.)

    ``single``: the rates were stored in single precision (float32).

    >>> rate_grid(np.array([k / 50 for k in (0, 3, 17, 50)]))
    50
    >>> rate_grid(np.array([0.0, 0.5, 1.0]))
    2
    >>> rate_grid(np.array([1 / 9, 1 / 64])) is None
    True
    >>> rate_grid(np.array([0.0, 1.0])) is None
    True
    """
    values = np.unique(np.asarray(p, dtype=np.float64))
    values = values[np.isfinite(values)]
    if values.size == 0 or values.size > most + 1 or bool(((values == 0) | (values == 1)).all()):
        return None
    for n in range(2, most + 1):
        if on_grid(values, n, single):
            return n
    return None


def column_grid(
    p: FloatArray, prompts: FloatArray | None = None, single: bool = False, most: int = MAX_GRID
) -> int | None:
    """The grid of a column of rates ``p`` (distinct values, ``prompts`` behind each, 1 each by default) by
    the rule in the module's docstring; None where the rows ask for none.

    Every multiple of 1/50, 40 prompts each, with one row of 0.123 and one of 0.01: a grid of 50, those two
    rows off it:

    >>> fifty = np.array([k / 50 for k in range(51)])
    >>> column_grid(np.append(fifty, [0.123, 0.01]), np.append(np.full(51, 40.0), [1.0, 1.0]))
    50

    Samples of 100 with odd k all through are a grid of 100; a few odd values are not:

    >>> column_grid(np.array([k / 100 for k in range(101)]), np.full(101, 40.0))
    100
    >>> column_grid(np.append(fifty, [0.01, 0.03, 0.07]), np.append(np.full(51, 40.0), [5.0, 5.0, 5.0]))
    50

    Four samples fill the grid of 4 (the two points it adds to the grid of 2 are both there); mostly bare
    rates, a few of them round, are bare rates:

    >>> column_grid(np.array([0.0, 0.25, 0.5, 0.75, 1.0]), np.full(5, 40.0))
    4
    >>> rng = np.random.default_rng(0)
    >>> column_grid(np.append(rng.random(300), [0.0, 0.5, 0.25, 0.75, 1.0])) is None
    True
    """
    p = np.asarray(p, dtype=np.float64)
    w = np.ones(p.size) if prompts is None else np.asarray(prompts, dtype=np.float64)
    keep = np.isfinite(p) & (p >= 0) & (p <= 1)
    p, w = p[keep], w[keep]
    interior = (p > 0) & (p < 1)
    if not interior.any():
        return None  # every rate 0 or 1: any n would do
    best: int | None = None
    held = np.zeros(p.size, dtype=np.bool_)
    for n in range(2, most + 1):
        on = on_grid_mask(p, n, single)
        if not fills(int(on.sum()), n):
            continue
        if best is None:
            best, held = n, on
            continue
        new, lost = on & ~held, held & ~on
        added = n - math.gcd(n, best)  # the points of the 1/n grid off the 1/best one
        if 2 * int(new.sum()) >= added and w[new].sum() >= EVIDENCE and w[new].sum() > w[lost].sum():
            best, held = n, on
    if best is None or w[~held & interior].sum() >= w[held & interior].sum():
        return None
    return best


# -------------------------------------------------------------------------- a column read on its grid


def read_grid(frame: pl.DataFrame, ds: Dataset) -> Dataset:
    """A rate column on a 1/n grid read as counts of n row by row (with a note), or ``ds`` as it is.

    The grid is the column's, by the rule of :func:`sigmatool.load.grid.column_grid`, over every --by group
    at once (how many samples the file logged); each row is then read by what it shows: k of n on the grid,
    a bare rate off it (:class:`~sigmatool.load.dataset.Grid`), and the note counts and shows the rows off
    it. A ``--samples N`` that the grid contradicts (N a multiple of the grid's n, so that only some k
    occur) is a usage error naming the grid; see :mod:`sigmatool.load.grid`.
    """
    opts = ds.options
    if ds.form != "rate" or "p" not in frame.columns:
        return ds
    column = repr(opts.col)
    single = ds.rate_is_float32 and not opts.percent
    if opts.samples is not None:
        _check_samples(frame, ds, column, single)
        return ds
    values = frame.group_by("p").agg(pl.col("prompts").cast(pl.Float64).sum()).sort("p")
    p, w = values["p"].cast(pl.Float64).to_numpy(), values["prompts"].to_numpy()
    n = column_grid(p, w, single)
    if n is None:
        whole = rate_grid(p, single)
        distinct = int(values.height)
        if whole is not None and not fills(distinct, whole):
            note = (
                f"the pass rates in {column} take {distinct} distinct value(s), all multiples of 1/{whole}: too "
                f"few to read them as counts (a grid is taken from at least {GRID_VALUES} values filling half of "
                "it), so they are read as pass rates; --samples N reads them as counts of N"
            )
            return replace(ds, notes=(*ds.notes, note))
        return ds
    on = on_grid_mask(p, n, single)
    interior = (p > 0) & (p < 1)
    inside = float(w[on & interior].sum())
    if inside < EVIDENCE:
        note = (
            f"the pass rates in {column} lie on the 1/{n} grid, but {inside:,.0f} prompt(s) on it with "
            "0 < p̂ < 1 are too few to tell how many samples stand behind them: --samples N reads them as "
            "counts of N"
        )
        return replace(ds, notes=(*ds.notes, note))
    off = float(w[~on].sum())
    grid = Grid(n, tuple(float(x) for x in p[on]), off)
    if off:
        grid = replace(grid, examples=_off_grid_rows(ds, grid))
    return replace(
        ds,
        frame=ds.frame.with_columns(grid.counts(rate_value(ds))),
        notes=(*ds.notes, grid_note(grid, column)),
        grid=grid,
    )


def _off_grid_rows(ds: Dataset, grid: Grid) -> tuple[tuple[int, float], ...]:
    """The first usable rows off the grid (row number, rate), for the note: one more read of the input,
    made only when some rows are off it, and stopped at the first few."""
    rate = rate_value(ds)
    found = (
        ds.frame.filter(usable_expr(ds) & ~grid.on(rate) & (weight_expr() > 0))
        .select(pl.col(ROW), rate.alias("p"))
        .head(EXAMPLES)
        .collect()
    )
    one = len(ds.sources) == 1
    return tuple((int(row) if one else 0, float(value)) for row, value in found.iter_rows())


# How many values off a grid its note shows.
EXAMPLES = 3


def grid_note(grid: Grid, column: str) -> str:
    """What a :class:`~sigmatool.load.dataset.Grid` reading says: the grid, and the rows off it."""
    n = grid.n
    if not grid.off:
        return (
            f"the pass rates in {column} are all multiples of 1/{n}: read as k right of n = {n} samples "
            f"(--samples {n} confirms it)"
        )
    # Rows are numbered within each file: with several files, the values alone.
    shown = ", ".join(f"{value:.6g}" + (f" at row {row:,}" if row else "") for row, value in grid.examples)
    more = ", …" if grid.off > len(grid.examples) else ""
    return (
        f"the pass rates in {column} are multiples of 1/{n}, read as k right of n = {n} samples, except "
        f"{grid.off:,.0f} prompt(s) off that grid ({shown}{more}): each is read as a bare pass rate, valued at "
        f"its own rate; --samples {n} reads every row as k of {n} and refuses one off its grid "
        "(--skip-invalid then leaves it out)"
    )


def _check_samples(frame: pl.DataFrame, ds: Dataset, column: str, single: bool) -> None:
    """With ``--samples N`` every row is k of N (a value off the 1/N grid was refused as invalid); N a
    multiple of the grid the rates all lie on is a confirmation unless so many prompts lie between 0 and 1
    that N samples would have shown some k off the coarser grid (each does so with a chance of about a half
    or more: 30 such prompts miss it with a chance below 1e-9)."""
    samples = ds.options.samples
    p = frame["p"].cast(pl.Float64).to_numpy()
    n = rate_grid(p, single)
    interior = float(frame.filter((pl.col("p") > 0) & (pl.col("p") < 1))["prompts"].sum())
    if n is None or samples is None or samples == n or interior < EVIDENCE:
        return
    raise UsageError(
        f"--samples {samples}: the pass rates in {column} are all multiples of 1/{n}, so each "
        f"is k of n = {n} samples (with {samples} samples, some of the {interior:,.0f} prompts "
        f"with 0 < p̂ < 1 would have a k that is not a multiple of {samples // n}); give "
        f"--samples {n}, or leave --samples out"
    )


def off_grid(flagged: pl.DataFrame, ds: Dataset) -> None:
    """A ``--samples N`` whose 1/N grid the rates are not on, where they all lie on the grid of another n
    and enough prompts lie between 0 and 1 to tell (:data:`~sigmatool.load.grid.EVIDENCE`), is a usage
    error naming that grid: N is wrong, not the rows. With fewer, the rows off the 1/N grid are named."""
    rates = (
        flagged.select(rate_value(ds).alias("p"), pl.col("__wsum")).drop_nulls().filter(~pl.col("p").is_nan())
    )
    p = rates["p"].to_numpy()
    opts = ds.options
    if p.size == 0 or ((p < 0) | (p > 1)).any() or opts.samples is None:
        return
    interior = float(rates.filter((pl.col("p") > 0) & (pl.col("p") < 1))["__wsum"].sum())
    n = rate_grid(p, single=ds.rate_is_float32 and not opts.percent)
    if n is not None and opts.samples % n and interior >= EVIDENCE:
        raise UsageError(
            f"--samples {opts.samples}: the pass rates in {opts.col!r} are all multiples of 1/{n}, not of "
            f"1/{opts.samples}, so they are not k of {opts.samples} samples; give --samples {n}, or leave "
            "--samples out"
        )

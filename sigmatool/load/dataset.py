"""The checked, lazy dataset every analysis starts from, and the canonical values of its rows.

The values step of the walk begins here (the face of :mod:`sigmatool.load` lists the steps): the raw
columns of the scan (:mod:`sigmatool.load.scan`), a rate (a percentage with ``--percent``), counts k of n
(given, from ``--samples N``, or on the 1/n grid a rate column shows: :class:`Grid`) and a weight, read as
the numbers p, k, n and ``prompts`` the analyses use. Rollout rows are pooled into k, n per prompt by
:mod:`sigmatool.load.logs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.errors import DataError, UsageError
from sigmatool.load.names import PROBLEM, RAW_ID, RAW_K, RAW_N, RAW_P, RAW_W
from sigmatool.load.sources import Source, source_schema
from sigmatool.options import InputOptions

if TYPE_CHECKING:
    from sigmatool.trainers.dumps import TrainerLog

# How each prompt's value is given: a rate column (with --samples: counts), k/n columns, one of the counted
# forms of a pass-rate column, rollout rows, or a trainer's rollout dumps.
FORMS = ("rate", "counts", "fraction", "list", "count", "rollouts", "trainer")
COUNTED = ("fraction", "list", "count")
LOGS = ("rollouts", "trainer")

# A count read from a float column is a whole number within this.
INTEGER_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Grid:
    """A rate column read on the 1/n grid its rows show (:mod:`sigmatool.load.grid`), row by row: a rate
    among ``values`` (the distinct rates on the grid, as the input holds them) is k of n; any other rate is a
    bare rate, for that row alone (its k and n are null). ``off`` counts the prompts off the grid and
    ``examples`` shows the first few of their rows (row number, rate; for the note that says so)."""

    n: int
    values: tuple[float, ...]
    off: float = 0.0
    examples: tuple[tuple[int, float], ...] = ()

    def on(self, rate: pl.Expr) -> pl.Expr:
        """Whether a rate (the Float64 raw rate, :func:`rate_value`) lies on the grid."""
        return rate.is_in(pl.Series(self.values, dtype=pl.Float64).implode())

    def counts(self, rate: pl.Expr) -> list[pl.Expr]:
        """k = rate × n rounded and n on the grid, null off it, as raw columns."""
        on = self.on(rate)
        return [
            pl.when(on).then((rate * self.n).round(0)).alias(RAW_K),
            pl.when(on).then(pl.lit(float(self.n))).alias(RAW_N),
        ]


@dataclass(frozen=True)
class Dataset:
    """A checked, lazy difficulty dataset.

    ``frame`` has the ``--by`` columns, ``__id`` (for per-prompt output), ``__row`` and the raw value columns
    ``__rate`` or ``__k``/``__n``, plus ``__w`` (weight); for a rollout log it is the per-prompt aggregate of
    ``raw``, the graded rows. The canonical values are :func:`p_expr`, :func:`k_expr`, :func:`n_expr`.
    Loaded with its originals, ``frame`` also has every input column, named in ``columns``.
    """

    frame: pl.LazyFrame
    sources: tuple[Source, ...]
    options: InputOptions
    notes: tuple[str, ...] = ()
    text_cols: tuple[str, ...] = ()
    raw: pl.LazyFrame | None = None
    rate_dtype: pl.DataType | None = None
    form: str = "rate"
    log: TrainerLog | None = None
    columns: tuple[str, ...] = ()  # the input's own columns, when loaded with them (load.with_originals)
    # Several pass-rate columns (--col repeated or a glob): one dataset per column, in the order of
    # ``options.cols``; this one's ``frame`` is then empty and every reader goes through the parts.
    parts: tuple[Dataset, ...] = ()
    # A rate column read on the 1/n grid its rows show, each row by itself (see :class:`Grid`).
    grid: Grid | None = None

    @property
    def by(self) -> tuple[str, ...]:
        """The columns the rows are grouped by: ``column`` first with several pass-rate columns, then --by."""
        return self.options.groups

    @property
    def has_counts(self) -> bool:
        """Whether some rows are counts k of n (with a :class:`Grid`, the rows off it are bare rates)."""
        if self.parts:
            return any(part.has_counts for part in self.parts)
        return self.options.has_counts or self.counted or self.grid is not None

    @property
    def gridded(self) -> bool:
        """Whether a rate column (or, with several, some column) was read on its grid row by row: a row off
        it is then a bare rate beside the counts, with k and n null (:class:`Grid`)."""
        return self.grid is not None or any(part.gridded for part in self.parts)

    @property
    def counted(self) -> bool:
        """A pass-rate column in one of the counted forms: "k/n" text, a list of grades, a count."""
        return self.form in COUNTED

    @property
    def is_log(self) -> bool:
        """Rows are graded answers (--rollouts, --from), aggregated to k, n per prompt."""
        return self.form in LOGS

    @property
    def rate_to_counts(self) -> bool:
        """A rate column turned into counts by --samples N, or on the grid its rows show (:class:`Grid`)."""
        return self.form == "rate" and (self.options.samples is not None or self.grid is not None)

    @property
    def value_keys(self) -> list[str]:
        """Raw columns whose distinct values determine every per-prompt quantity and its checks."""
        if self.rate_to_counts:
            return [RAW_P, RAW_K, RAW_N]
        if self.counted:
            return [RAW_K, RAW_N, PROBLEM]
        return [RAW_K, RAW_N] if self.has_counts else [RAW_P]

    @property
    def rate_is_float32(self) -> bool:
        return self.rate_dtype == pl.Float32


def numeric(col: str) -> pl.Expr:
    """A raw column as Float64: text that is not a number becomes null (and is caught as invalid)."""
    return pl.col(col).cast(pl.Float64, strict=False)


def rate_expr(opts: InputOptions, dtype: pl.DataType | None) -> pl.Expr:
    """The raw pass rate as a Float64 number (a percentage divided by 100 with ``--percent``)."""
    if not opts.percent:
        return numeric(RAW_P)
    if dtype is not None and dtype.is_numeric():
        return numeric(RAW_P) / 100.0
    text = pl.col(RAW_P).cast(pl.String).str.strip_chars().str.strip_suffix("%")
    return text.cast(pl.Float64, strict=False) / 100.0


def shown_rate(opts: InputOptions, dtype: pl.DataType | None) -> pl.Expr:
    """The pass rate as the input wrote it: a float column keeps its own dtype (0.7 in float32 prints 0.7)."""
    if not opts.percent and dtype is not None and dtype.is_float():
        return pl.col(RAW_P)
    return rate_expr(opts, dtype)


def needs_counts(ds: Dataset) -> None:
    if not ds.has_counts:
        raise UsageError("this needs counts: give --k-col and --n-col, --samples N, --rollouts or --from")


def rate_value(ds: Dataset) -> pl.Expr:
    """The raw pass rate as a Float64 number."""
    return rate_expr(ds.options, ds.rate_dtype)


def p_expr(ds: Dataset) -> pl.Expr:
    """The pass rate p̂ used by the kernels: the rate column, or k/n (on a :class:`Grid`, k/n on it and the
    rate itself off it)."""
    if ds.grid is not None:
        return pl.coalesce(k_expr(ds) / n_expr(ds), rate_value(ds)).alias("p")
    if ds.has_counts:
        return (k_expr(ds) / n_expr(ds)).alias("p")
    return rate_value(ds).alias("p")


def k_expr(ds: Dataset) -> pl.Expr:
    needs_counts(ds)
    return numeric(RAW_K).round(0).cast(pl.Int64).alias("k")


def n_expr(ds: Dataset) -> pl.Expr:
    needs_counts(ds)
    return numeric(RAW_N).round(0).cast(pl.Int64).alias("n")


def weight_expr() -> pl.Expr:
    return numeric(RAW_W).alias("prompts")


def counts_from_rate(opts: InputOptions, rate: pl.Expr) -> list[pl.Expr]:
    """With ``--samples N``: k = rate × N rounded, n = N, as raw columns."""
    samples = float(opts.samples or 1)
    return [(rate * samples).round(0).alias(RAW_K), pl.lit(samples).alias(RAW_N)]


def bare_key(table: pl.DataFrame, ds: Dataset) -> pl.DataFrame:
    """A table of the histogram's values (``p``, and ``k``, ``n``) with the key a per-prompt row off a
    :class:`Grid` is looked up by: ``__p``, its rate (null on the grid, where (k, n) are the key; the
    histogram's ``p`` of a bare rate is that rate, read by the same expression). ``table`` as it is
    without a grid."""
    if not ds.gridded:
        return table
    return table.with_columns(pl.when(pl.col("n").is_null()).then(pl.col("p")).alias("__p"))


def per_prompt_frame(ds: Dataset, usable: pl.Expr) -> pl.LazyFrame:
    """Usable rows of positive weight, one per prompt: ``--by`` columns, ``id``, ``p`` as given, the kernel
    keys, ``prompts`` (the row's weight).

    ``p`` is the input's rate as written (with counts, k/n); the kernels are looked up by ``k``/``n`` when
    there are counts and by ``p`` otherwise, so a rate such as 0.7 of 50 samples is never a bit away from
    its histogram key. On a :class:`Grid`, a row off it (k and n null) is looked up by its rate, ``__p``
    (null on the grid).
    """
    ds.options.check_rows_readable()
    cols = [*[pl.col(b) for b in ds.by], pl.col(RAW_ID).alias("id")]
    if ds.has_counts:
        shown = shown_rate(ds.options, ds.rate_dtype) if ds.rate_to_counts else p_expr(ds)
        cols += [shown.alias("p"), k_expr(ds), n_expr(ds)]
        if ds.grid is not None:
            cols.append(pl.when(pl.col(RAW_K).is_null()).then(rate_value(ds)).alias("__p"))
    else:
        cols += [shown_rate(ds.options, ds.rate_dtype).alias("p"), rate_value(ds).alias("__p")]
    cols.append(weight_expr())
    # A row of weight 0 stands for no prompt: the histogram has no value for it, and the output no row.
    return ds.frame.filter(usable & (weight_expr() > 0)).select(cols)


# Columns that name prompts in difficulty files (Big-Math's, Polaris's, DeepScaleR's and the like).
ID_NAMES = ("id", "prompt_id", "problem_id", "question_id", "uid", "unique_id", "idx")


def id_notes(ds: Dataset) -> list[str]:
    """For per-prompt output without ``--id-col``: a note when the input has a column that names prompts
    (:data:`ID_NAMES`), since the output's ``id`` is the row number from 1, not that column; a join back on
    ``id`` would be off by one row or meet other ids."""
    if ds.options.id_col or ds.options.rollouts or ds.is_log or not ds.sources:
        return []
    try:
        names = source_schema(ds.sources[0])[0].names()
    except DataError:
        return []
    found = [name for name in names if name.lower() in ID_NAMES and name not in ds.by]
    if not found:
        return []
    return [
        f"per-prompt rows are numbered from 1 in column 'id' (the row number); the input's own {found[0]!r} "
        f"is not used: --id-col {found[0]} names each row by it"
    ]

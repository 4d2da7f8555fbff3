"""Silent groups: the share of size-G groups that are all right or all wrong (σ = 0), and DAPO's cost.

Columns of the summary, in order: [--by columns], ``G``, [``p_lo``, ``p_hi`` with bins], ``prompts``,
``silent_rate``, ``all_right_rate``, ``all_wrong_rate``, ``always_silent_share``, ``dapo_draws_per_group``,
``dapo_draws_per_group_learnable``; with a DAPO cap also ``dapo_unfilled_rate``.
Per-prompt columns: [--by columns], ``id``, ``p``, ``G``, ``p_silent``, ``p_all_right``, ``p_all_wrong``,
``dapo_expected_draws``.

Under a prior (``prior=``) every per-prompt probability is its posterior mean given (k, n), and
``always_silent_share`` is the posterior mean of 1{p ∈ {0, 1}} (prompts that are silent at every G); the
learnable prompts of ``dapo_draws_per_group_learnable`` are still those with 0 < p̂ < 1, the ones a filter
on the logged answers keeps. :func:`with_ranges` adds, with bounds, ``{rate}_lo`` and ``{rate}_hi`` for
``silent_rate``, ``all_right_rate``, ``all_wrong_rate``, ``dapo_draws_per_group``,
``dapo_draws_per_group_learnable`` [, ``dapo_unfilled_rate``] and then ``identified``; with an interval,
``{rate}_ci_lo`` and ``{rate}_ci_hi`` for the same rates and ``always_silent_share`` (docs/prior.md).

:func:`analyse` returns all that ``silent`` shows as a :class:`SilentResult`, including the silent share over
a grid of G around the asked sizes (:func:`curve`) that the table's sparkline and ``--plot`` draw;
:func:`view` only formats it. Under pass@K credit (``--pass-at``) the summary and per-prompt rows add
``pass_at_k`` (docs/passk.md). Long because the summary's sums, its per-prompt rows, its ranges and its
curves share one set of cells and columns, and each change to one must reach the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool import kernels
from sigmatool.columns import labels, percent
from sigmatool.estimators import (
    ESTIMATOR,
    Bounded,
    Cut,
    Valuation,
    beyond_intervals,
    bin_of,
    bound_columns,
    contradiction,
    outside,
    range_notes,
    row_groups,
    said_once,
    unidentified,
    valuation,
    warned,
)
from sigmatool.estimators.rows import elementwise, row_value
from sigmatool.frames import last, series, sort_by
from sigmatool.joins import join_values
from sigmatool.kernels import Quantity
from sigmatool.kernels.grader import Grader
from sigmatool.load import Dataset, Totals, per_prompt_frame
from sigmatool.load.dataset import bare_key
from sigmatool.load.loaded import distinct as histogram_of
from sigmatool.options import (
    BOUNDS_LEVEL,
    MAX_G,
    BeyondOptions,
    PriorSpec,
    SilentOptions,
    by_columns,
    g_label,
    over_all_prompts,
)
from sigmatool.progress import working
from sigmatool.render import View, also_in_data, ranges
from sigmatool.render.spark import Sparkline
from sigmatool.segments import bin_edges
from sigmatool.sums import (
    Cells,
    Summaries,
    fixed_point_stages,
    fixed_point_sums,
    fixed_point_total,
    labels_of,
)
from sigmatool.sums import summaries as summed

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot
    from sigmatool.options.verifier import Measured

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
PER_GROUP = ("p_silent", "p_all_right", "p_all_wrong", "dapo_expected_draws")
# What each row adds to its cell per G: all right, all wrong, learnable silent, weight valued beyond n.
WIDTH = 4
SUMMARY_RATES = (
    "prompts",
    "silent_rate",
    "all_right_rate",
    "all_wrong_rate",
    "always_silent_share",
    "dapo_draws_per_group",
    "dapo_draws_per_group_learnable",
)


def silent_kernels(
    values: pl.DataFrame, sizes: Sequence[float], val: Valuation, cap: int | None
) -> pl.DataFrame:
    """Per row of ``values`` and G: silent, all-right, all-wrong probabilities and DAPO's expected draws.

    The kernels are elementwise, so they run on the rows as given, in their order (G-major): pass distinct
    values to compute each once.
    """
    parts = []
    for G in sizes:
        size = int(G)
        right = val.values(values, Quantity.ALL_RIGHT, size)
        wrong = val.values(values, Quantity.ALL_WRONG, size)
        silent = np.asarray(right + wrong, dtype=np.float64)
        if size <= val.pass_at:  # every K-subset is the whole group: silent exactly, not 1 − 1e-16
            silent = np.where(np.isnan(silent), np.nan, 1.0)
        parts.append(
            values.with_columns(
                pl.lit(size, dtype=pl.Int64).alias("G"),
                pl.Series("p_silent", silent),
                pl.Series("p_all_right", np.asarray(right, dtype=np.float64)),
                pl.Series("p_all_wrong", np.asarray(wrong, dtype=np.float64)),
                pl.Series(
                    "dapo_expected_draws",
                    np.asarray(kernels.dapo_expected_draws(silent, cap), dtype=np.float64),
                ),
                *([pl.Series("pass_at_k", pass_at_k(values, val))] if val.credited else []),
            )
        )
    return pl.concat(parts)


def pass_at_k(values: pl.DataFrame, val: Valuation) -> FloatArray:
    """Each row's pass@K under the valuation's credit K: ``1 − E[(1 − p)^K]`` by the one rule per cell
    (1 − (1 − p)^K at a rate, 1 − C(n − k, K)/C(n, K) from counts at K ≤ n, the posterior mean beyond)."""
    K = val.pass_at
    return np.asarray(1.0 - val.one().values(values, Quantity.ALL_WRONG, K), dtype=np.float64)


def _dapo_draws(rate: pl.Series, cap: int | None) -> pl.Series:
    return pl.Series(
        np.asarray(kernels.dapo_expected_draws(rate.fill_null(np.nan).to_numpy(), cap), dtype=np.float64)
    )


def summarize(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    sizes: Sequence[float],
    *,
    estimator: str = "auto",
    cap: int | None = None,
    bins: int | None = None,
    prior: str | PriorSpec | Valuation | None = None,
) -> pl.DataFrame:
    """Silent-group summary per G (and per ``--by`` group, and per bin of p when ``bins`` is given).

    ``hist`` is a histogram of distinct values, or streamed rows (:class:`sigmatool.load.Rows`' frame:
    ``--by`` columns, ``p``, ``prompts``; plug-in only). ``prior`` (``beta``, ``npmle``, ``A,B``, or a fitted
    :class:`~sigmatool.estimators.Valuation`) turns every per-prompt probability into its posterior mean.
    Each cell's sums are accurate to about one rounding however the rows come (:mod:`sigmatool.sums`).
    """
    return summaries(hist, by, SilentOptions(tuple(sizes), estimator, cap, bins), prior).table


def summaries(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    options: SilentOptions,
    prior: str | PriorSpec | Valuation | None = None,
    totals: pl.DataFrame | None = None,
) -> Summaries:
    """:func:`summarize`'s table, and its overall summary (the table view's headline) from the same sums:
    with ``by`` led by the ``column`` key, one per pass-rate column; from ``totals`` (the aggregates of
    :func:`totals_asked`, computed while the rows were checked) when given."""
    sizes, cap = options.sizes, options.cap
    if totals is not None:
        table = _summary(
            Cells(pl.DataFrame(), (), None), _sums_of_totals(totals, sizes), sizes, cap, Valuation()
        )
        return Summaries(table, table)
    val = valuation(hist, by, sizes, options.estimator, prior)

    def make(labels: pl.DataFrame, keys: Sequence[str], sums: FloatArray, binned: bool) -> pl.DataFrame:
        return _summary(Cells(labels, keys, options.bins if binned else None), sums, sizes, cap, val)

    cells = Cells(labels_of(hist, by), by, options.bins)
    width = _lead(val) + WIDTH * len(sizes)
    return summed(cells, hist, width, lambda batch: _cell_columns(batch, sizes, val), make)


def _whole_is_table(by: Sequence[str], options: SilentOptions) -> bool:
    """Whether the summary is already over all prompts (of each pass-rate column, with several)."""
    return options.bins is None and over_all_prompts(by)


def totals_asked(options: SilentOptions, by: Sequence[str]) -> Totals | None:
    """What a plug-in summary over all rows (no --by, no bins, whole G, no per-prompt rows) adds up, for the
    pass that checks streamed rows to compute as well (:func:`sigmatool.load.rows.checked_totals`): the
    learnable rows and, per G, the all-right and all-wrong probabilities summed in fixed point
    (:func:`sigmatool.sums.fixed_point_sums`). None for the other summaries.

    Here each row's p^G and (1 − p)^G are polars' own powers, computed in the pass without a round trip
    through numpy: below G = 10 repeated products, within G − 1 roundings of the exact power of the row's p
    (of 1 − p rounded to float64), and from 10 up ``pow``, within one. The kernels' (numpy's ``power``, and
    ``exp(G log1p(−p))``) differ from them in the last bits of many rows; rounding errors of either sign that
    small leave a sum over many rows within about one rounding of the exact one (tests/test_rows.py holds
    the rates to the exact sums of the rows' powers)."""
    whole = all(math.isfinite(G) and G == int(G) and 1 <= G <= MAX_G for G in options.sizes)
    plain = options.estimator in ("auto", "plugin")  # rows stream only as pass rates, whose plug-in is exact
    if by or options.bins is not None or not plain or options.per_prompt or not whole:
        return None
    p = pl.col("p")
    columns, aggregates = [], [((p > 0.0) & (p < 1.0)).sum().alias("learnable")]
    for G in options.sizes:
        columns.append((f"{Quantity.ALL_RIGHT}.{int(G)}", p.pow(int(G))))
        columns.append((f"{Quantity.ALL_WRONG}.{int(G)}", (1.0 - p).pow(int(G))))
    for name, _ in columns:
        aggregates += fixed_point_sums(name)
    return Totals(fixed_point_stages(columns), tuple(aggregates))


def _sums_of_totals(totals: pl.DataFrame, sizes: Sequence[float]) -> FloatArray:
    """:func:`_cell_columns`' sums over all rows (one cell) from :func:`totals_asked`'s aggregates, each
    rounded once from its exact value. A row at p = 0 or 1 is silent with certainty (p^G + (1 − p)^G = 1
    exactly), so the learnable rows' silent sum is the two sums less those rows."""
    rows, learnable = int(totals["__rows"].item()), int(totals["learnable"].item())
    always = rows - learnable
    sums = [Fraction(rows), Fraction(always), Fraction(learnable)]
    for G in sizes:
        right = fixed_point_total(totals, f"{Quantity.ALL_RIGHT}.{int(G)}")
        wrong = fixed_point_total(totals, f"{Quantity.ALL_WRONG}.{int(G)}")
        sums += [right, wrong, right + wrong - always, Fraction(0)]
    return np.array([[float(x)] for x in sums], dtype=np.float64)


def _summary(
    cells: Cells, sums: FloatArray, sizes: Sequence[float], cap: int | None, val: Valuation
) -> pl.DataFrame:
    """The summary's rows from the cells' sums: by --by values, then G, then bin."""
    out = pl.concat(_rates(cells, sums, i, G, cap, val) for i, G in enumerate(sizes))
    keys = [*cells.by, "G", *(["bin"] if cells.binned else [])]
    columns = [*cells.by, "G", *(["p_lo", "p_hi"] if cells.binned else []), *SUMMARY_RATES]
    if val.credited:
        columns.append("pass_at_k")
    if cap is not None:
        out = out.with_columns((pl.col("silent_rate") ** cap).alias("dapo_unfilled_rate"))
        columns.append("dapo_unfilled_rate")
    return sort_by(out, keys, maintain_order=True).select([*columns, ESTIMATOR])


def _cell_columns(batch: pl.DataFrame, sizes: Sequence[float], val: Valuation) -> list[FloatArray]:
    """What each row adds to its cell: weight, always-silent and learnable weight, then per G the weighted
    all-right and all-wrong probabilities and the learnable prompts' weighted silent probability."""
    w = batch["prompts"].cast(pl.Float64).to_numpy()
    p = batch["p"].cast(pl.Float64).to_numpy()
    learnable = _learnable(p)
    # Streamed rows weigh 1 each: 1.0 · x is x exactly, so the products are skipped (a pass each).
    unit = bool((w == 1.0).all())

    def weighted(x: FloatArray) -> FloatArray:
        return x if unit else w * x

    # Silent at every G: p̂ ∈ {0, 1}, or under a prior the posterior probability of p ∈ {0, 1}.
    # (1 − P(interior) is clipped at 0: a posterior with no mass at the edges gives −1e-16 in floating point.)
    always = (
        np.clip(1.0 - val.values(batch, Quantity.INTERIOR), 0.0, 1.0)
        if val.posterior
        else (~learnable).astype(np.float64)
    )
    columns = [w, weighted(always), weighted(learnable.astype(np.float64))]
    if val.credited:
        columns.append(weighted(pass_at_k(batch, val)))
    for G in sizes:
        right, wrong = (
            val.values(batch, Quantity.ALL_RIGHT, int(G)),
            val.values(batch, Quantity.ALL_WRONG, int(G)),
        )
        outside = weighted(val.outside(batch, int(G)).astype(np.float64))
        columns += [
            weighted(right),
            weighted(wrong),
            np.where(learnable, weighted(right + wrong), 0.0),
            outside,
        ]
    return columns


def _lead(val: Valuation) -> int:
    """The sums each row adds to its cell before those of each G: weight, always silent, learnable, and
    under pass@K its pass@K."""
    return 3 + val.credited


def _rates(cells: Cells, sums: FloatArray, i: int, G: float, cap: int | None, val: Valuation) -> pl.DataFrame:
    """The summary rows of one G (the ``i``-th) from the cells' sums, each named by its estimator."""
    prompts, always, learnable = sums[0], sums[1], sums[2]
    at = _lead(val) + WIDTH * i
    right, wrong, learnable_silent, outside = sums[at], sums[at + 1], sums[at + 2], sums[at + 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        silent_rate = (right + wrong) / prompts
        learnable_rate = learnable_silent / learnable
        if G <= val.pass_at:  # every K-subset is the whole group: silent exactly, not 1 − 1e-16
            silent_rate = np.where(np.isnan(silent_rate), np.nan, 1.0)
            learnable_rate = np.where(np.isnan(learnable_rate), np.nan, 1.0)
        keys = cells.frame()
        frame = keys.with_columns(
            pl.Series(ESTIMATOR, val.cell_labels(keys, outside, prompts, silent_rate), dtype=pl.String),
            pl.lit(int(G), dtype=pl.Int64).alias("G"),
            _counts(prompts),
            series("silent_rate", silent_rate),
            series("all_right_rate", right / prompts),
            series("all_wrong_rate", wrong / prompts),
            series("always_silent_share", always / prompts),
            series("dapo_draws_per_group", kernels.dapo_expected_draws(silent_rate, cap)),
            series(
                "dapo_draws_per_group_learnable",
                kernels.dapo_expected_draws(learnable_rate, cap),
            ),
        )
    if val.credited:
        with np.errstate(invalid="ignore", divide="ignore"):
            frame = frame.with_columns(series("pass_at_k", sums[3] / prompts))
    if cells.binned:
        lo, hi = bin_edges(frame["bin"].to_numpy(), cells.bins)
        frame = frame.with_columns(series("p_lo", lo), series("p_hi", hi))
    return frame.fill_nan(None)


def _counts(prompts: FloatArray) -> pl.Series:
    """The cells' prompts, as whole numbers when they are (no weights, or whole ones)."""
    if bool(np.all(prompts == np.round(prompts))) and float(prompts.max(initial=0.0)) < 2.0**53:
        return series("prompts", prompts.astype(np.int64))
    return series("prompts", prompts)


def per_prompt(
    ds: Dataset,
    hist: pl.DataFrame | pl.LazyFrame,
    sizes: Sequence[float],
    *,
    estimator: str = "auto",
    cap: int | None = None,
    prior: str | PriorSpec | Valuation | None = None,
    measured: Measured | None = None,
) -> pl.LazyFrame:
    """One row per input prompt and G, streamed: the kernels are joined onto the rows by distinct value;
    with ``measured`` (--denoise), each prompt's de-noised pass rate and its interval beside them.

    Rows are matched to the kernel table by their counts (k, n) when they have them, else by the input's
    own rate; under a prior, by their --by group and counts (each group has its own prior); a prompt that
    finds no value raises (:mod:`sigmatool.joins`). With streamed rows (``hist`` a LazyFrame) each row's
    kernels run on its own batch instead.
    """
    counted = histogram_of(hist)
    if counted is None:
        return _row_per_prompt(ds, sizes, cap)
    hist = counted
    val = valuation(hist, ds.by, sizes, estimator, prior)
    join = ["k", "n"] if ds.has_counts else ["__p"]
    distinct = hist.select(["k", "n", "p"] if ds.has_counts else ["p"]).unique(maintain_order=True)
    if val.keyed:
        join = [*val.by, "k", "n"]
        distinct = hist.select([*val.by, "k", "n", "p"])
    if ds.gridded:  # rates off the grid beside counts: looked up by their own rate too
        join, distinct = [*join, "__p"], bare_key(distinct, ds)
    table = silent_kernels(distinct, sizes, val, cap)
    extra: list[str] = []
    if measured is not None:
        from sigmatool.denoise import PROMPT_RATES, with_prompt_rates

        table, extra = with_prompt_rates(table, measured), list(PROMPT_RATES)
    if not ds.has_counts:
        table = table.rename({"p": "__p"})
    prompts = per_prompt_frame(ds).join(
        pl.LazyFrame({"G": [int(G) for G in sizes]}, schema={"G": pl.Int64}),
        how="cross",
        maintain_order="left",
    )
    joined = join_values(prompts, table.drop("p", strict=False), [*join, "G"])
    credited = ["pass_at_k"] if val.credited else []
    return joined.select([*ds.by, "id", "p", "G", *PER_GROUP, *credited, *extra])


def _draws(G: int, cap: int | None) -> Callable[[FloatArray], FloatArray]:
    def draws(p: FloatArray) -> FloatArray:
        return kernels.dapo_expected_draws(kernels.silent_probability(p, G), cap)

    return draws


def _row_per_prompt(ds: Dataset, sizes: Sequence[float], cap: int | None) -> pl.LazyFrame:
    """Per prompt and G from the rows themselves, each value computed once, in bounded memory."""
    rows = per_prompt_frame(ds).rename({"p": "__shown"}).rename({"__p": "p"})
    parts = []
    for G in sizes:
        right, wrong = row_value(Quantity.ALL_RIGHT, G), row_value(Quantity.ALL_WRONG, G)
        silent = row_value(Quantity.SILENT, G)
        draws = elementwise(_draws(int(G), cap), pl.Float64())
        parts.append(
            rows.with_columns(
                pl.lit(int(G), dtype=pl.Int64).alias("G"),
                silent.alias("p_silent"),
                right.alias("p_all_right"),
                wrong.alias("p_all_wrong"),
                draws.alias("dapo_expected_draws"),
                pl.int_range(pl.len(), dtype=pl.Int64).alias("__order"),
            )
        )
    out = pl.concat(parts) if len(parts) > 1 else parts[0]
    if len(parts) > 1:
        out = out.sort("__order", "G", maintain_order=True)
    return out.select([*ds.by, "id", pl.col("__shown").alias("p"), "G", *PER_GROUP])


def _learnable(p: FloatArray) -> BoolArray:
    return np.asarray((p > 0.0) & (p < 1.0), dtype=np.bool_)


# Bounded by linear programs; DAPO's columns follow from them, each being increasing in a silent rate.
BOUNDED = (
    Bounded("silent_rate", lambda G: Quantity.SILENT),
    Bounded("all_right_rate", lambda G: Quantity.ALL_RIGHT),
    Bounded("all_wrong_rate", lambda G: Quantity.ALL_WRONG),
    Bounded("__learnable_silent", lambda G: Quantity.SILENT, where=_learnable),
)
RATES = (
    "silent_rate",
    "all_right_rate",
    "all_wrong_rate",
    "always_silent_share",
    "dapo_draws_per_group",
    "dapo_draws_per_group_learnable",
    "dapo_unfilled_rate",
)


def _bounds(
    hist: pl.DataFrame, summary: pl.DataFrame, by: Sequence[str], cap: int | None, grader: Grader | None
) -> pl.DataFrame:
    """The bounds columns of every summary row, and whether its rates are identified."""
    groups = row_groups(summary, hist, by)
    bins = "p_lo" in summary.columns
    cuts = [
        Cut(int(g), float(r["G"]), bin_of(r["p_lo"], r["p_hi"]) if bins else None)
        for g, r in zip(groups, summary.iter_rows(named=True), strict=True)
    ]
    with working("--bounds: the range the counts allow"):
        frame, known = bound_columns(hist, by, cuts, BOUNDED, BOUNDS_LEVEL, grader)
    columns = {
        f"{c}_{end}": frame[f"{c}_{end}"]
        for c in ("silent_rate", "all_right_rate", "all_wrong_rate")
        for end in ("lo", "hi")
    }
    for name, rate in (
        ("dapo_draws_per_group", "silent_rate"),
        ("dapo_draws_per_group_learnable", "__learnable_silent"),
    ):
        for end in ("lo", "hi"):
            columns[f"{name}_{end}"] = _dapo_draws(frame[f"{rate}_{end}"], cap)
    if cap is not None:
        for end in ("lo", "hi"):
            columns[f"dapo_unfilled_rate_{end}"] = frame[f"silent_rate_{end}"] ** cap
    out = pl.DataFrame({name: series.alias(name) for name, series in columns.items()}).fill_nan(None)
    return out.with_columns(pl.Series("identified", known))


def with_ranges(
    hist: pl.DataFrame | pl.LazyFrame,
    summary: pl.DataFrame,
    by: Sequence[str],
    options: SilentOptions,
    val: Valuation,
    beyond: BeyondOptions,
) -> pl.DataFrame:
    """``summary`` with the bounds (``{rate}_lo``, ``{rate}_hi``, ``identified``) and the bootstrap interval
    (``{rate}_ci_lo``, ``{rate}_ci_hi``) of its rates, as ``beyond`` asks (docs/prior.md)."""
    counted = histogram_of(hist)
    if counted is None:
        return summary  # streamed rows: plug-in rates, no counts to bound
    hist = counted
    parts = [summary]
    if beyond.bounds:
        parts.append(_bounds(hist, summary, by, options.cap, val.grader))
    if beyond.ci is not None:

        def again(h: pl.DataFrame, keys: Sequence[str], v: Valuation) -> pl.DataFrame:
            return summarize(h, keys, options.sizes, cap=options.cap, bins=options.bins, prior=v)

        rates = [c for c in RATES if c in summary.columns]
        parts.append(beyond_intervals(hist, by, val, again, rates, beyond))
    return pl.concat(parts, how="horizontal")


def _range_text(row: dict[str, object], column: str, ends: tuple[str, str], what: str) -> str:
    lo, hi = row.get(f"{column}_{ends[0]}"), row.get(f"{column}_{ends[1]}")
    if not isinstance(lo, float) or not isinstance(hi, float):
        return ""
    return f"{what} {100 * lo:.1f}–{100 * hi:.1f}%"


def _contradicted(row: dict[str, object], who: str) -> str:
    """``: the … contradicts the data`` when the row's silent rate lies outside its identified bounds."""
    return f": {contradiction(who)}" if outside(row, "silent_rate") else ""


def headline(
    summary: pl.DataFrame,
    posterior: bool = False,
    level: float | None = None,
    bias: str = "",
    who: str = "",
) -> str:
    """One plain sentence for the table view, from an overall (no --by, no bins) summary; ``bias`` says
    which estimator answers beyond the samples (:meth:`Valuation.bias_note`); ``who`` names it
    (:attr:`Valuation.label`) where a rate lies outside the bounds the data allow. Each rate names its
    estimator (the summary's ``estimator`` column) unless it is the plug-in, and a rate that is not
    identified gives the range the data allow in its place.

    Under a prior the share of prompts silent at every G (p exactly 0 or 1) is the prior's, not the data's:
    no number of samples tells p = 0 from a small p, so it is given as not identified; from counts without
    a prior it is what the samples show, prompts never or always right in them.
    """
    parts = []
    for r in summary.iter_rows(named=True):
        allowed = _range_text(r, "silent_rate", ("lo", "hi"), "the data allow")
        ranges = [
            allowed + _contradicted(r, who),
            _range_text(r, "silent_rate", ("ci_lo", "ci_hi"), f"{100 * (level or 0):g}% CI"),
        ]
        extra = "; ".join(text for text in ranges if text)
        tag = f" [{r[ESTIMATOR]}]" if r.get(ESTIMATOR) not in (None, "plug-in") else ""
        if r["silent_rate"] is None:
            parts.append(f"not identified at G={r['G']}" + (f" ({allowed})" if allowed else ""))
            continue
        parts.append(f"{100 * r['silent_rate']:.1f}% at G={r['G']}{tag}" + (f" ({extra})" if extra else ""))
    always = float(summary["always_silent_share"][0])
    named = summary[ESTIMATOR].to_list() if ESTIMATOR in summary.columns else []
    counts = any(e not in (None, "plug-in") for e in named)  # the samples' share, not p's
    if len(parts) == 1 and not parts[0].startswith("not identified"):
        lead = f"{parts[0].replace(' at ', ' of groups are silent at ', 1)}"
    else:
        lead = "Silent groups: " + ", ".join(parts)
    tail = f" {bias}" if bias else ""
    if posterior:
        return (
            f"{lead}; the share of prompts silent at every G is not identified by the data (the prior puts "
            f"{100 * always:.1f}% at p = 0 or 1).{tail}"
        )
    if counts:
        return f"{lead}; {100 * always:.1f}% of prompts were never or always right in their samples.{tail}"
    return f"{lead}; {100 * always:.1f}% of prompts are silent at every G (never or always solved).{tail}"


def grid(sizes: Sequence[float], most: float = MAX_G) -> tuple[float, ...]:
    """The G a figure or sparkline of the silent share shows around the asked ``sizes``: the powers of two
    that span a quarter of the smallest to four times the largest (none below 2 or above ``most``), and
    ``sizes`` themselves.

    >>> grid([8])
    (2.0, 4.0, 8.0, 16.0, 32.0)
    >>> grid([6, 64], most=100)
    (2.0, 4.0, 6.0, 8.0, 16.0, 32.0, 64.0)
    """
    low = math.floor(math.log2(min(sizes))) - 2
    high = math.ceil(math.log2(max(sizes))) + 2
    powers = [float(2**e) for e in range(max(low, 1), high + 1) if 2**e <= most]
    return tuple(sorted({*powers, *(float(G) for G in sizes)}))


def grid_for(hist: pl.DataFrame | pl.LazyFrame, options: SilentOptions) -> tuple[float, ...]:
    """:func:`grid` for these options; the unbiased estimator stops at the fewest logged samples n."""
    most = float(MAX_G)
    counted = histogram_of(hist)
    if options.estimator == "unbiased" and counted is not None and "n" in counted.columns:
        most = min(most, float(counted["n"].min()))  # type: ignore[arg-type]
    return grid(options.sizes, most)


@dataclass(frozen=True)
class SilentCurve:
    """The silent summary (per ``by`` group) at every G of :func:`grid_for`: what ``--plot`` draws, with the G
    the user asked for (``marked``) and the estimator that made it."""

    summary: pl.DataFrame
    by: tuple[str, ...]
    estimator: str
    marked: tuple[float, ...]

    def sparkline(self) -> Sparkline | None:
        """The silent share against G, for the table view (of a curve over all prompts), at the G where the
        data give it; None where they give it at fewer than two."""
        known = self.summary.filter(pl.col("silent_rate").is_not_null())
        if known.height < 2:
            return None
        labels = tuple(g_label(G) for G in known["G"])
        return Sparkline("silent vs G", "G", labels, tuple(known["silent_rate"]))

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
        """Silent share against G on a grid around the asked G, with the chosen estimator (and prior), per
        ``by`` group."""
        from sigmatool.figures.silent import silent_figure

        return silent_figure(
            self.summary,
            by=self.by,
            estimator=self.estimator,
            marked=self.marked,
            source=source,
            caption=caption,
            style=style,
        )


def curve(
    hist: pl.DataFrame | pl.LazyFrame,
    options: SilentOptions,
    by: Sequence[str] = (),
    prior: PriorSpec | Valuation | None = None,
) -> SilentCurve:
    """The silent summary (per ``by`` group) at every G of :func:`grid_for`, with the options' estimator;
    ``prior`` a spec to fit, or the analysis' valuation for the same ``by`` (its fit is reused)."""
    summary = summarize(hist, by, grid_for(hist, options), estimator=options.estimator, prior=prior)
    spec = prior.prior if isinstance(prior, Valuation) else prior
    posterior = prior.posterior if isinstance(prior, Valuation) else spec is not None and spec.active
    estimator = f"prior {spec.label}" if posterior and spec is not None else options.estimator
    if isinstance(prior, Valuation):
        estimator = prior.label  # with several pass-rate columns, each column's estimator
    return SilentCurve(summary, tuple(by), estimator, tuple(options.sizes))


@dataclass(frozen=True)
class SilentResult:
    """``silent``'s answer: the summary as asked (with its ranges), the same over all prompts, the sentence
    and notes that go with them, and, when asked for, the silent share over a grid of G for the table's
    sparkline (over all prompts; a histogram only) and for the figure (per --by group)."""

    summary: pl.DataFrame
    overall: pl.DataFrame
    by: tuple[str, ...]
    headline: str
    notes: tuple[str, ...]
    spark: Sparkline | None = None
    curve: SilentCurve | None = None
    trust: tuple[str, ...] = ()  # what the headline says of the numbers' trust, for every format

    def frame(self) -> pl.DataFrame:
        return self.summary

    def view(self) -> View:
        """The table view: its headline over all prompts, labels, percentages, bars, sparkline; the
        range of the silent share in one column (``lo–hi``) with --bounds or --ci."""
        names = self.summary.columns
        shown = ranges(
            View(
                headline=self.headline,
                percent=percent(names),
                bars=("silent_rate",),
                labels=labels(names),
                keys=list(self.by),
                spark=self.spark,
                footer=list(self.notes),
            ),
            names,
            show=("silent_rate", "always_silent_share"),
        )
        shown.hide = (*shown.hide, *said_once(self.summary))
        draws = [c for c in DAPO_DRAWS if c in names]
        if shown.spans and draws:
            shown.hide = (*shown.hide, *draws)
            shown.footer = [*(line for line in shown.footer if line != FOOTER), also_in_data(draws)]
        return shown

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None:
        return None if self.curve is None else self.curve.figure(source, caption, style)

    def warnings(self) -> tuple[str, ...]:
        return self.trust


FOOTER = (
    "DAPO draws per group: groups drawn per usable group when silent groups are redrawn from fresh "
    "prompts; …learnable: the same once never- and always-solved prompts are dropped"
)


def analyse(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    options: SilentOptions,
    val: Valuation,
    beyond: BeyondOptions = BeyondOptions(),
    *,
    spark: bool = False,
    figure: bool = False,
    totals: pl.DataFrame | None = None,
) -> SilentResult:
    """Everything ``silent`` shows: :func:`summaries` with :func:`with_ranges`, the headline over all prompts,
    the notes, and with ``spark`` and ``figure`` the curves of the table's sparkline and of ``--plot``;
    ``totals`` as :func:`summaries` takes them."""
    drawn = curve(hist, options, by, val) if figure else None
    summary, overall = summaries(hist, by, options, val, totals)
    beyond = beyond.bounding(unidentified(summary))
    summary = last(with_ranges(hist, summary, by, options, val, beyond), ESTIMATOR)
    whole = summary if _whole_is_table(by, options) else overall  # with no --by and no bins, its ranges
    notes = [FOOTER]
    counted = histogram_of(hist)
    if counted is not None:
        notes += range_notes(counted, summary, beyond, val)
    line = None
    # Streamed rows would have to be read a second time; several columns have a headline line each.
    # (With --by and --grader-error the sparkline over all prompts would be refitted without the grader.)
    if spark and counted is not None and not by_columns(by) and not (by and val.grader is not None):
        line = (drawn if drawn is not None and not by else curve(hist, options, (), val.prior)).sparkline()

    def lead(frame: pl.DataFrame, v: Valuation) -> str:
        return headline(frame, v.posterior, beyond.ci, v.bias_note(), v.label)

    said = val.headlines(whole, lead)
    trust = warned(summary, val, hist=counted)
    return SilentResult(summary, overall, tuple(by), said, tuple(notes), line, drawn, trust)


# The DAPO draws follow from the silent share; with --bounds or --ci its range takes their room in the table.
DAPO_DRAWS = ("dapo_draws_per_group", "dapo_draws_per_group_learnable")

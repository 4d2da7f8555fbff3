"""Group-size frames: the per-value table, the summary per --by group and bin, per-prompt rows, the view."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.columns import labels, percent
from sigmatool.estimators import NOT_IDENTIFIED, Valuation
from sigmatool.estimators.report import warned
from sigmatool.frames import sort_by
from sigmatool.groupsize.curve import GroupSizeCurve, curve
from sigmatool.groupsize.table import PLUGIN, sized_rows
from sigmatool.load.loaded import distinct
from sigmatool.options import GroupSizeOptions
from sigmatool.render import View, also_in_data, compared_note
from sigmatool.segments import bin_edges, bin_index, group_index

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

DEFAULT_BINS = 10
COLUMNS = (
    "segment",
    "p_lo",
    "p_hi",
    "prompts",
    "unreachable",
    "not_identified",
    "g_min",
    "g_median",
    "g_p90",
    "g_max",
    "mean_rollouts_schedule",
    "uniform_g_needed",
    "savings",
    "share_at_target_uniform",
)
LAW_COLUMNS = ("g_median_law", "g_p90_law")
# Weighted CDFs are compared with this relative allowance, so weights such as 0.1 sum to a clean quantile.
CDF_ALLOWANCE = 1e-12


def _quantiles(
    cell: IntArray, cells: int, value: FloatArray, weight: FloatArray, qs: Sequence[float]
) -> list[FloatArray]:
    """Per cell: the smallest value, the smallest value whose weighted CDF reaches each q, the largest.

    One sort by (cell, value) and one cumulative sum serve every cell and every q; NaN for an empty cell.
    """
    order = np.lexsort((value, cell))
    cs, vs = cell[order], value[order]
    cum = np.cumsum(weight[order])
    starts = np.searchsorted(cs, np.arange(cells), side="left")
    ends = np.searchsorted(cs, np.arange(cells), side="right")
    filled = ends > starts
    if not vs.size:
        return [np.full(cells, np.nan) for _ in range(len(qs) + 2)]
    first, last = np.minimum(starts, vs.size - 1), np.maximum(ends - 1, 0)
    base = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0.0)
    total = cum[last] - base
    out = [np.where(filled, vs[first], np.nan)]
    for q in qs:
        at = np.clip(np.searchsorted(cum, base + q * total * (1.0 - CDF_ALLOWANCE), side="left"), first, last)
        out.append(np.where(filled, vs[at], np.nan))
    out.append(np.where(filled, vs[last], np.nan))
    return out


def _cell_stats(
    cell: IntArray, cells: int, rows: dict[str, NDArray[np.generic]], law: bool
) -> dict[str, FloatArray]:
    """The summary's statistics of every (--by group, segment) cell, from the rows that fall in each."""
    w = rows["prompts"].astype(np.float64)
    reach = rows["reachable"].astype(np.bool_)
    known = rows["identified"].astype(np.bool_)
    g = rows["group_size"].astype(np.float64)
    lost = ~reach & known
    out: dict[str, FloatArray] = {
        "prompts": np.bincount(cell, w, cells).astype(np.float64),
        "unreachable": np.bincount(cell[lost], w[lost], cells).astype(np.float64),
        "not_identified": np.bincount(cell[~known], w[~known], cells).astype(np.float64),
    }
    cr, wr, gr = cell[reach], w[reach], g[reach]
    total = np.bincount(cr, wr, cells)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["mean_rollouts_schedule"] = np.where(total > 0, np.bincount(cr, wr * gr, cells) / total, np.nan)
        at = rows["at_uniform"].astype(np.bool_)[reach]
        out["share_at_target_uniform"] = np.where(total > 0, np.bincount(cr, wr * at, cells) / total, np.nan)
    out["g_min"], out["g_median"], out["g_p90"], out["g_max"] = _quantiles(cr, cells, gr, wr, (0.5, 0.9))
    out["uniform_g_needed"] = out["g_max"]
    if law:
        lr = rows["group_size_law"].astype(np.float64)[reach]
        _, out["g_median_law"], out["g_p90_law"], _ = _quantiles(cr, cells, lr, wr, (0.5, 0.9))
    return out


def summary_columns(options: GroupSizeOptions) -> list[str]:
    """The summary's columns after the ``--by`` columns."""
    return [*COLUMNS, *(LAW_COLUMNS if options.law else ())]


def summarize(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    options: GroupSizeOptions,
    *,
    bins: int | None = DEFAULT_BINS,
    table: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Group-size summary: an ``all`` row and (unless ``bins`` is None or 0) one row per bin of p, per
    ``--by`` group, all computed in one pass. ``table`` is :func:`group_size_table` of ``hist`` if already
    computed; ``hist`` may be streamed rows (a LazyFrame: --by columns, p, weight).
    """
    return summarize_sized(sized_rows(hist, by, options, table, bins), by, options, bins=bins)


def summarize_sized(
    rows: pl.DataFrame,
    by: Sequence[str],
    options: GroupSizeOptions,
    *,
    bins: int | None = DEFAULT_BINS,
    estimator: bool = False,
) -> pl.DataFrame:
    """:func:`summarize` from rows that already carry their group sizes (:func:`sized_rows`); with
    ``estimator``, a last column naming what sized each row's prompts."""
    law = ["group_size_law"] if options.law else []
    group, labels = group_index(rows, by)
    segments = 1 + (bins or 0)
    groups = max(labels.height, 1)
    # Each row counts in its group's `all` cell and in its bin's cell.
    cell = group * segments
    columns = {
        c: rows[c].fill_null(np.nan).to_numpy() if c in ("group_size", *law) else rows[c].to_numpy()
        for c in ("prompts", "group_size", "reachable", "at_uniform", *law)
    }
    columns["identified"] = (
        rows["identified"].to_numpy()
        if "identified" in rows.columns
        else np.ones(rows.height, dtype=np.bool_)
    )
    sized_by = rows["sized_by"] if "sized_by" in rows.columns else pl.repeat(PLUGIN, rows.height, eager=True)
    columns["sized_by"] = sized_by.to_numpy()
    if bins:
        cell = np.concatenate([cell, cell + 1 + bin_index(rows["p"].to_numpy(), bins)])
        columns = {c: np.concatenate([v, v]) for c, v in columns.items()}
    stats = _cell_stats(cell, groups * segments, columns, options.law)
    named = _estimators(cell, groups * segments, columns) if estimator else None
    lo, hi = bin_edges(np.arange(bins or 0), bins or 1)
    frame = pl.DataFrame(
        {
            "segment": (["all"] + ["bin"] * (bins or 0)) * groups,
            "p_lo": np.tile(np.concatenate([[0.0], lo]), groups),
            "p_hi": np.tile(np.concatenate([[1.0], hi]), groups),
            **stats,
        }
    ).fill_nan(None)
    integers = [
        "g_min",
        "g_median",
        "g_p90",
        "g_max",
        "uniform_g_needed",
        *(LAW_COLUMNS if options.law else ()),
    ]
    frame = frame.with_columns(
        pl.col(integers).cast(pl.Int64),
        (pl.col("uniform_g_needed") / pl.col("mean_rollouts_schedule")).alias("savings"),
        # Counts stay whole numbers when the input's are (no --weight-col, or integer weights).
        pl.col("prompts", "unreachable", "not_identified").cast(_count_dtype(rows["prompts"])),
    )
    kept = [*by, *summary_columns(options)]
    if named is not None:
        frame, kept = frame.with_columns(pl.Series("estimator", named, dtype=pl.String)), [*kept, "estimator"]
    return _with_labels(frame, labels, segments).select(kept)


def _estimators(cell: IntArray, cells: int, rows: dict[str, NDArray[np.generic]]) -> list[str | None]:
    """Per cell, what sized its prompts (``plug-in``, a prior, ``not identified``), each once, in that
    order, joined by `` + ``; None for an empty cell."""
    w = rows["prompts"].astype(np.float64)
    kinds = rows["sized_by"].astype(str)
    order = sorted(set(kinds.tolist()), key=lambda k: (k == NOT_IDENTIFIED, k != PLUGIN, k))
    present = {kind: np.bincount(cell[kinds == kind], w[kinds == kind], cells) > 0 for kind in order}
    out: list[str | None] = []
    for c in range(cells):
        found = [kind for kind in order if present[kind][c]]
        out.append(" + ".join(found) if found else None)
    return out


def _count_dtype(prompts: pl.Series) -> pl.DataType:
    """Whole-number prompt counts stay integers."""
    whole = prompts.dtype.is_integer() or bool((prompts == prompts.round(0)).all())
    return pl.Int64() if whole and float(prompts.max() or 0) < 2**53 else pl.Float64()  # type: ignore[arg-type]


def _with_labels(frame: pl.DataFrame, labels: pl.DataFrame, segments: int) -> pl.DataFrame:
    """Each cell's --by values in front, ordered by them (cells are group-major, ``segments`` per group)."""
    if not labels.width:
        return frame
    rows = labels.select(pl.all().gather(np.repeat(np.arange(labels.height), segments)))
    frame = pl.concat([rows, frame], how="horizontal")
    return sort_by(frame.with_row_index("__order"), [*labels.columns, "__order"], maintain_order=True)


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def headline(sized: pl.DataFrame, options: GroupSizeOptions) -> str:
    """One sentence for the table view, over all prompts (whatever the ``--by`` grouping)."""
    row = summarize_sized(sized, (), options, bins=None).row(0, named=True)
    total = float(row["prompts"])
    # p̂ ∈ {0, 1} is unreachable without a prior; under one, only where the posterior keeps p at 0 or 1.
    known = pl.col("identified") if "identified" in sized.columns else pl.lit(True)
    always = float(
        sized.filter(pl.col("p").is_in([0.0, 1.0]) & ~pl.col("reachable") & known)["prompts"].sum()
    )
    beyond = float(row["unreachable"]) - always
    unknown = float(row["not_identified"])
    lead = f"To reach {100 * options.target:g}% fidelity"
    lead += " (σ: Bessel's std)" if options.std == "bessel" and options.method == "grpo" else ""
    if options.max_silent is not None:
        lead += f" with at most {100 * options.max_silent:g}% silent groups"
    why = ["always or never solved"] if always > 0 else []
    if beyond > 0:
        why.append(f"{_percent(beyond / total)} need G > {options.max_size}")
        if always > 0:
            why[0] = f"{_percent(always / total)} always or never solved"
    unreachable = f"{_percent(float(row['unreachable']) / total)} of prompts are unreachable"
    if why:
        unreachable += f" ({', '.join(why)})"
    if unknown > 0:
        unreachable += (
            f"; {_percent(unknown / total)} would need G beyond their n samples, where no prior answers: "
            "not identified"
        )
    if row["g_median"] is None:
        if unknown > 0:
            return f"{lead}: no prompt has a size the data identify; {unreachable}."
        return f"{lead}: no prompt is reachable with G ≤ {options.max_size}; {unreachable}."
    if row["g_min"] == row["g_max"]:
        schedule = f"every reachable prompt needs the same G = {row['g_max']}, so a schedule saves nothing"
    else:
        schedule = (
            f"a per-prompt schedule needs {row['savings']:.1f}× fewer rollouts than the uniform "
            f"G = {row['uniform_g_needed']}"
        )
    return (
        f"{lead}: median G = {row['g_median']}, 90th percentile G = {row['g_p90']}; {unreachable}; "
        f"{schedule}; a uniform G = {options.uniform} brings {_percent(row['share_at_target_uniform'])} of the "
        "reachable prompts there."
    )


def _sizing(named: Sequence[str]) -> str:
    """The footer's line on what sized the prompts (docs/prior.md, "One rule for every cell")."""
    said = []
    for name in named:
        if name == PLUGIN:
            said.append("plug-in: sized at p̂")
        elif name == NOT_IDENTIFIED:
            said.append("not identified: a G beyond the prompt's n samples, where no prior answers")
        else:
            said.append(f"{name}: by the posterior given (k, n)")
    return f"estimator: {', '.join(named)} ({'; '.join(said)})"


# Left to the data formats, so that the table fits 80 columns: the others give them (uniform_g_needed is
# g_max; savings is g_max over mean_rollouts_schedule).
TABLE_HIDES = ("g_min", "mean_rollouts_schedule", "uniform_g_needed")
# With --law, the law's two columns take the room of these (the headline gives them over all prompts).
LAW_HIDES = ("savings", "share_at_target_uniform")


def footer(options: GroupSizeOptions, posterior: bool = False) -> list[str]:
    """Lines under the table view: what the columns mean."""
    fid = "1 − 1/G (Dr. GRPO)" if options.method == "drgrpo" else f"E[σ]/sqrt(p(1−p)), {options.std} std"
    if posterior:
        fid += ", of posterior means given (k, n) under the prior (never- and always-solved prompts included)"
    return [
        f"fidelity: {fid}; G from {options.min_size} to {options.max_size} (--min-G, --max-G)",
        "G median, G p90: prompt-weighted percentiles over reachable prompts; G max: the uniform G that brings "
        "every reachable prompt to the target",
        "law G median, law G p90: the same percentiles of the closed-form law's G, ⌈1/(8 ε p(1−p))⌉ with "
        "ε = 1 − φ* (population std)"
        if options.law
        else "savings: G max ÷ the mean G of a per-prompt schedule; "
        f"at target: reachable prompts already at the target with G = {options.uniform} (--uniform)",
    ]


@dataclass(frozen=True)
class GroupSizeResult:
    """``groupsize``'s answer: the summary, its headline over all prompts and notes, and with ``--plot``
    the figure's curve and histogram."""

    summary: pl.DataFrame
    by: tuple[str, ...]
    headline: str
    notes: tuple[str, ...]
    curve: GroupSizeCurve | None = None
    trust: tuple[str, ...] = ()  # what the headline says of the numbers' trust, for every format

    def frame(self) -> pl.DataFrame:
        return self.summary

    def view(self) -> View:
        """The table view: the headline over all prompts, short headers, what the columns mean."""
        names = self.summary.columns
        hides = [c for c in TABLE_HIDES + (LAW_HIDES if set(LAW_COLUMNS) <= set(names) else ()) if c in names]
        found = self.summary["estimator"].drop_nulls().to_list() if "estimator" in names else []
        named = list(dict.fromkeys(part for line in found for part in line.split(" + ")))
        sizing = [_sizing(named)]
        quiet = "not_identified" in names and not (self.summary["not_identified"].fill_null(0) > 0).any()
        return View(
            headline=self.headline,
            percent=percent(names),
            labels=labels(names),
            keys=list(self.by),
            footer=[*self.notes, *(sizing if named else []), also_in_data(hides)],
            hide=[*hides, *(["not_identified"] if quiet else []), "estimator"],
            compact=_compared(self.summary, self.by),
            compact_note=compared_note(self.by),
        )

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None:
        return None if self.curve is None else self.curve.figure(source, caption, style)

    def warnings(self) -> tuple[str, ...]:
        return self.trust


def plotted(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    options: GroupSizeOptions,
    val: Valuation,
    sized: pl.DataFrame | None = None,
) -> GroupSizeCurve:
    """What ``--plot`` draws: the exact G against p and, under a prior, each count's posterior G (from
    ``sized``, the rows with their sizes, when already made); by the rule of each cell (counts, no prior
    named), the posterior G of the counts sized beyond their n."""
    if not (val.posterior or (val.keyed and isinstance(hist, pl.DataFrame) and "n" in hist.columns)):
        return curve(hist, by, options, grader=val.grader)
    rows = sized_rows(hist, by, options, prior=val) if sized is None else sized
    if val.posterior:
        return curve(hist, by, options, rows, f"prior {val.prior.label}", grader=val.grader)
    beyond = rows.filter(pl.col("sized_by") != PLUGIN) if "sized_by" in rows.columns else rows.clear()
    if beyond.is_empty():
        return curve(hist, by, options, grader=val.grader)
    return curve(hist, by, options, beyond, "prior npmle, beyond n", grader=val.grader)


def analyse(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    options: GroupSizeOptions,
    val: Valuation,
    *,
    bins: int | None = DEFAULT_BINS,
    figure: bool = False,
) -> GroupSizeResult:
    """Everything ``groupsize`` shows: the summary (``bins`` bins of p), its headline and notes, and with
    ``figure`` the curve that ``--plot`` draws."""
    sized = sized_rows(hist, by, options, bins=bins, prior=val)
    drawn = plotted(hist, by, options, val, sized) if figure else None
    summary = summarize_sized(sized, by, options, bins=bins, estimator=True)
    notes = footer(options, val.posterior)
    lead = val.headlines(sized, lambda frame, _: headline(frame, options))
    trust = warned(summary, val, (), distinct(hist), "g_max")
    return GroupSizeResult(summary, tuple(by), lead, tuple(notes), drawn, trust)


def _compared(summary: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame | None:
    """With several pass-rate columns or --by groups: each one's row over all its prompts, side by side."""
    if not by or "segment" not in summary.columns:
        return None
    return summary.filter(pl.col("segment") == "all")

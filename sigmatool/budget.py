"""Gradient budget: the share of GRPO's and Dr. GRPO's update that each difficulty segment receives.

Per prompt, GRPO's expected update weight is ``E[σ](p, G)`` and Dr. GRPO's is ``E[σ²](p, G)`` (docs/theory.md §3,
§5); at ``G = inf`` the limits ``sqrt(p (1 − p))`` and ``p (1 − p)``. A segment's share is
``Σ_segment prompts·w / Σ_all prompts·w`` within its ``--by`` group and G. Prompts with p̂ ∈ {0, 1} weigh 0
but are counted in ``prompts``. DAPO's shares equal GRPO's (silent groups weigh 0 in both), so they are not
a column.

Columns of the summary, in order: [--by columns], ``G``, ``segment``, ``p_lo``, ``p_hi``, ``prompts``,
``prompt_share``, ``grpo_share``, ``drgrpo_share``, ``grpo_over_drgrpo``, ``silent_rate``.

- ``G`` is a string label, ``"8"`` or ``"inf"``, in every format (a float column would turn ∞ into null);
  CSV readers usually parse it back as a number, ``inf`` as infinity.
- ``segment`` is ``bin`` (``p_lo ≤ p < p_hi``, the last bin closed; every bin appears, empty ones with
  ``prompts`` 0), ``extreme`` (``p < p_lo`` or ``p > p_hi``, i.e. ``p_lo = x`` and ``p_hi = 1 − x``),
  ``medium`` (``p_lo ≤ p ≤ p_hi``) or ``all`` (0 to 1), in that order within each ``--by`` group and G.
- ``grpo_over_drgrpo`` is ``grpo_share / drgrpo_share``: null when Dr. GRPO's share is 0.
- ``silent_rate`` is the prompt-weighted mean of ``P_silent(p, G)`` over the segment; null at ``G = inf``
  and for an empty segment. Shares are null when no prompt of the group carries any weight.

Under a prior (``prior=``) every prompt weighs the posterior means of its weights given (k, n), p̂ ∈ {0, 1}
included; segments are still cut by p̂. :func:`with_ranges` adds ``grpo_share_lo``, ``grpo_share_hi``,
``drgrpo_share_lo``, ``drgrpo_share_hi`` (bounds) and ``{rate}_ci_lo``, ``{rate}_ci_hi`` for
``prompt_share``, ``grpo_share``, ``drgrpo_share``, ``grpo_over_drgrpo``, ``silent_rate`` (docs/prior.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool import frames
from sigmatool.columns import labels, percent
from sigmatool.estimators import (
    ESTIMATOR,
    NOT_IDENTIFIED,
    Bounded,
    Cut,
    Valuation,
    beyond_intervals,
    bin_of,
    bound_columns,
    range_notes,
    row_groups,
    said_once,
    unidentified,
    valuation,
    warned,
)
from sigmatool.estimators.bounds import Inside
from sigmatool.frames import last
from sigmatool.kernels import Quantity
from sigmatool.load.loaded import distinct as histogram_of
from sigmatool.options import (
    BOUNDS_LEVEL,
    DEFAULT_BINS,
    DEFAULT_EXTREME,
    DEFAULT_MEDIUM,
    BeyondOptions,
    BudgetOptions,
    PriorSpec,
    Segments,
    g_label,
    over_all_prompts,
)
from sigmatool.progress import working
from sigmatool.render import View, also_in_data, compared_note, ranges
from sigmatool.segments import bin_edges, bin_index
from sigmatool.sums import Cells, Summaries, labels_of
from sigmatool.sums import summaries as summed

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot

COLUMNS = (
    "G",
    "segment",
    "p_lo",
    "p_hi",
    "prompts",
    "prompt_share",
    "grpo_share",
    "drgrpo_share",
    "grpo_over_drgrpo",
    "silent_rate",
    "estimator",
)
# What each row adds to its piece per G: GRPO, Dr. GRPO and silent weights, and its weight valued beyond n.
WIDTH = 4

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Weights = tuple[FloatArray, FloatArray, FloatArray]


def _kernel_values(val: Valuation, rows: pl.DataFrame, G: float) -> Weights:
    """GRPO weight, Dr. GRPO weight and P_silent (0 at G = inf, where it is not reported) of each row."""
    if math.isinf(G):
        return (
            val.values(rows, Quantity.GRPO_LIMIT),
            val.values(rows, Quantity.DRGRPO_LIMIT),
            np.zeros(rows.height),
        )  # no silent rate at ∞
    return (
        val.values(rows, Quantity.SIGMA, G),
        val.values(rows, Quantity.SIGMA_SQUARED, G),
        val.values(rows, Quantity.SILENT, G),
    )


def _codes(p: FloatArray, seg: Segments) -> IntArray:
    """Each value's code, 4 · bin + 2 · extreme + medium: every segment is a union of codes."""
    x, (lo, hi) = seg.extreme, seg.medium
    extreme = (p < x) | (p > 1.0 - x)
    medium = (p >= lo) & (p <= hi)
    return np.asarray(4 * bin_index(p, seg.bins) + 2 * extreme + medium, dtype=np.int64)


class Pieces:
    """The codes some p in [0, 1] can have, numbered in increasing order: at most ``bins + 4`` of them.

    A code is constant between cuts (bin edges, x, 1 − x, lo, hi), so each of its stretches of [0, 1] starts
    at 0, at a cut or at the float just above one: evaluating those finds every code that occurs.
    """

    def __init__(self, seg: Segments) -> None:
        self.seg = seg
        x, (lo, hi) = seg.extreme, seg.medium
        cuts = np.concatenate([bin_edges(np.arange(seg.bins + 1), seg.bins)[0], [x, 1.0 - x, lo, hi]])
        probes = np.clip(np.concatenate([[0.0], cuts, np.nextafter(cuts, 2.0)]), 0.0, 1.0)
        self.codes = np.unique(_codes(probes, seg))
        self._number = np.full(4 * seg.bins, -1, dtype=np.int64)
        self._number[self.codes] = np.arange(self.codes.size)

    def of(self, p: FloatArray) -> IntArray:
        """Each value's piece."""
        piece = self._number[_codes(p, self.seg)]
        if piece.size and int(piece.min()) < 0:
            raise AssertionError(f"a pass rate fell outside the pieces of {self.seg}")
        return piece

    def segment_sums(self, piece_sums: FloatArray) -> FloatArray:
        """(groups × pieces) sums → (groups × segments): the bins, extreme, medium and all, in output order."""
        bins = self.codes // 4
        by_bin = np.add.reduceat(piece_sums, np.searchsorted(bins, np.arange(self.seg.bins)), axis=1)
        extreme = piece_sums[:, (self.codes & 2) > 0].sum(axis=1)
        medium = piece_sums[:, (self.codes & 1) > 0].sum(axis=1)
        return np.column_stack([by_bin, extreme, medium, by_bin.sum(axis=1)])


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(den > 0, num / den, np.nan), dtype=np.float64)


def _segment_columns(
    prompts: FloatArray, weights: tuple[FloatArray, FloatArray, FloatArray | None]
) -> dict[str, FloatArray]:
    """The summary's numbers for one G, each (groups × segments), from the segment sums."""
    grpo, drgrpo, silent = weights
    grpo_share = _ratio(grpo, grpo[:, -1:])
    drgrpo_share = _ratio(drgrpo, drgrpo[:, -1:])
    return {
        "prompts": prompts,
        "prompt_share": _ratio(prompts, prompts[:, -1:]),
        "grpo_share": grpo_share,
        "drgrpo_share": drgrpo_share,
        "grpo_over_drgrpo": _ratio(grpo_share, drgrpo_share),
        "silent_rate": _ratio(silent, prompts) if silent is not None else np.full_like(prompts, np.nan),
    }


def _summary_frame(
    labels: pl.DataFrame, sizes: Sequence[float], seg: Segments, blocks: Sequence[dict[str, FloatArray]]
) -> pl.DataFrame:
    """The summary rows in their order, --by group, then G (``sizes``, ascending), then segment: built in
    place from each G's (groups × segments) ``blocks``."""
    groups, count = blocks[0]["prompts"].shape
    lo, hi = bin_edges(np.arange(seg.bins), seg.bins)
    names = ["bin"] * seg.bins + ["extreme", "medium", "all"]
    per_group = len(sizes) * count
    columns: dict[str, FloatArray | pl.Series] = {
        "G": pl.Series([g_label(G) for G in sizes]).gather(
            np.tile(np.repeat(np.arange(len(sizes)), count), groups)
        ),
        "segment": pl.Series(names).gather(np.tile(np.arange(count), groups * len(sizes))),
        "p_lo": np.tile(np.concatenate([lo, [np.nan, seg.medium[0], 0.0]]), groups * len(sizes)),
        "p_hi": np.tile(np.concatenate([hi, [np.nan, seg.medium[1], 1.0]]), groups * len(sizes)),
    }
    for name in blocks[0]:
        parts = [block[name] for block in blocks]
        columns[name] = parts[0].ravel() if len(parts) == 1 else np.stack(parts, axis=1).ravel()
    frame = frames.frame(columns).fill_nan(None)
    if labels.width:
        keys = labels.select(pl.all().gather(np.repeat(np.arange(groups), per_group)))
        frame = pl.concat([keys, frame], how="horizontal")
    return frame


def summarize(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    sizes: Sequence[float],
    *,
    estimator: str = "auto",
    segments: Segments | None = None,
    bins: int = DEFAULT_BINS,
    extreme: float = DEFAULT_EXTREME,
    medium: tuple[float, float] = DEFAULT_MEDIUM,
    prior: str | PriorSpec | Valuation | None = None,
) -> pl.DataFrame:
    """Gradient-budget shares per ``--by`` group, G and segment (bins, extreme, medium, all).

    Segments come from ``segments`` if given, else from ``bins``, ``extreme`` and ``medium``. Sums run over
    the histogram's rows in their fixed order, so every form of the same data (rows, a weighted histogram,
    a rollout log) gives the same bits; every --by group is computed in the same pass. ``prior`` turns
    every prompt's weights into their posterior means given (k, n); segments stay those of p̂.
    """
    options = BudgetOptions(tuple(sizes), estimator, segments or Segments(bins, extreme, medium))
    return summaries(hist, by, options, prior).table


def summaries(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    options: BudgetOptions,
    prior: str | PriorSpec | Valuation | None = None,
) -> Summaries:
    """:func:`summarize`'s table, and its overall summary (the table view's headline) from the same sums."""
    sizes = options.sizes
    val = valuation(hist, by, sizes, options.estimator, prior)
    pieces = Pieces(options.segments)
    cells = Cells(labels_of(hist, by), by, pieces.codes.size, pieces.of)

    def make(labels: pl.DataFrame, keys: Sequence[str], sums: FloatArray, binned: bool) -> pl.DataFrame:
        return _summary(labels, sums, sizes, pieces, val)

    width = 1 + WIDTH * len(sizes)
    return summed(cells, hist, width, lambda batch: _cell_columns(val, batch, sizes), make, segments=True)


def _summary(
    labels: pl.DataFrame, sums: FloatArray, sizes: Sequence[float], pieces: Pieces, val: Valuation
) -> pl.DataFrame:
    """The summary's rows from the sums per (group, piece): by --by values, then G, then segment, each
    named by the estimator behind it."""
    groups = max(labels.height, 1)
    per_piece = sums.reshape(len(sums), groups, pieces.codes.size)
    prompt_sums = pieces.segment_sums(per_piece[0])
    keys = labels.select(pl.all().gather(np.repeat(np.arange(groups), prompt_sums.shape[1])))
    ascending = sorted(range(len(sizes)), key=lambda i: float(sizes[i]))
    blocks, named = [], []
    for i in ascending:
        grpo, drgrpo, silent, outside = (
            pieces.segment_sums(per_piece[1 + WIDTH * i + j]) for j in range(WIDTH)
        )
        block = _segment_columns(prompt_sums, (grpo, drgrpo, None if math.isinf(sizes[i]) else silent))
        blocks.append(block)
        found = val.cell_labels(keys, outside.ravel(), prompt_sums.ravel(), block["grpo_share"].ravel())
        named.append(np.array(found, dtype=object).reshape(prompt_sums.shape))
    out = _summary_frame(labels, [sizes[i] for i in ascending], pieces.seg, blocks)
    out = out.with_columns(pl.Series("estimator", np.stack(named, axis=1).ravel().tolist(), dtype=pl.String))
    whole = bool(np.all(sums[0] == np.round(sums[0]))) and float(sums[0].max(initial=0.0)) < 2.0**53
    # Rows come by --by values (the labels are sorted), then G; segments keep their fixed order.
    return out.with_columns(pl.col("prompts").cast(pl.Int64 if whole else pl.Float64)).select(
        [*labels.columns, *COLUMNS]
    )


def _cell_columns(val: Valuation, batch: pl.DataFrame, sizes: Sequence[float]) -> list[FloatArray]:
    """What each row adds to its piece: its weight, then per G its weighted GRPO, Dr. GRPO and silent weight.

    The kernels give p̂ ∈ {0, 1} a weight of exactly 0, so those prompts count in ``prompts`` only (under a
    prior they weigh their posterior mean).
    """
    w = batch["prompts"].cast(pl.Float64).to_numpy()
    columns = [w]
    for G in sizes:
        columns += [w * values for values in _kernel_values(val, batch, G)]
        columns.append(w * val.outside(batch, None if math.isinf(G) else G))
    return columns


def headline(overall: pl.DataFrame) -> str:
    """One sentence from an overall (no --by) summary: the extreme prompts' share under each method."""
    parts = []
    extreme = overall.filter(pl.col("segment") == "extreme")
    for row in extreme.iter_rows(named=True):
        label = "∞" if row["G"] == "inf" else row["G"]
        if row.get(ESTIMATOR) == NOT_IDENTIFIED:
            parts.append(f"at G={label}, the shares are not identified by the data (their range: the table)")
            continue
        if row.get(ESTIMATOR) not in (None, "plug-in"):
            label = f"{label} [{row[ESTIMATOR]}]"
        grpo, dr, ratio = row["grpo_share"], row["drgrpo_share"], row["grpo_over_drgrpo"]
        if grpo is None or dr is None:
            parts.append(f"at G={label}, no prompt carries any gradient")
            continue
        times = f" (×{ratio:.2f})" if ratio is not None else ""
        if not parts:
            parts.append(
                f"At G={label}, GRPO gives {100 * grpo:.1f}% of its gradient to extreme prompts, "
                f"against {100 * dr:.1f}% for Dr. GRPO{times}"
            )
        else:
            parts.append(f"at G={label}, {100 * grpo:.1f}% against {100 * dr:.1f}%{times}")
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "." if parts else ""


def notes(seg: Segments, posterior: bool = False, beyond: bool = False) -> list[str]:
    """Lines under the table view: what the segments are, and DAPO; ``beyond``: a prior answers the cells
    beyond n (the one rule), the others are the samples'."""
    (lo, hi), x = seg.medium, seg.extreme
    edges = "prompts with p̂ = 0 or 1 weigh nothing but are counted"
    if posterior:
        edges = "prompts are placed by p̂; under the prior, those with p̂ = 0 or 1 weigh their posterior means"
    elif beyond:
        edges = (
            "prompts are placed by p̂; those with p̂ = 0 or 1 weigh nothing at G ≤ n and their posterior "
            "means beyond"
        )
    return [
        f"extreme: p < {x:g} or p > {1 - x:g}; medium: {lo:g} ≤ p ≤ {hi:g}; {edges}",
        "DAPO: its shares equal GRPO's (silent groups weigh nothing in either); DAPO changes the cost, "
        "not the direction",
    ]


def bar_scale(summary: pl.DataFrame) -> float:
    """The share that fills a bar in the table view: the largest share of any segment but ``all``."""
    parts = summary.filter(pl.col("segment") != "all").select(pl.max_horizontal("grpo_share", "drgrpo_share"))
    top = parts.to_series().fill_null(0.0).max()
    return float(top) if isinstance(top, float) and top > 0 else 1.0


def _inside(row: dict[str, object], seg: Segments) -> Inside | None:
    """Which p̂ belong to a summary row's segment (as :func:`_codes` cuts them); None for ``all``."""
    name = row["segment"]
    if name == "all":
        return None
    if name == "extreme":
        x = seg.extreme
        return lambda p: np.asarray((p < x) | (p > 1.0 - x), dtype=np.bool_)
    if name == "medium":
        lo, hi = seg.medium
        return lambda p: np.asarray((p >= lo) & (p <= hi), dtype=np.bool_)
    return bin_of(float(row["p_lo"]), float(row["p_hi"]))  # type: ignore[arg-type]


# The shares only: each costs two linear programs per segment and G (silent rates per bin: `silent --by-bins`).
BOUNDED = (
    Bounded("grpo_share", lambda G: Quantity.GRPO_LIMIT if math.isinf(G) else Quantity.SIGMA, share=True),
    Bounded(
        "drgrpo_share",
        lambda G: Quantity.DRGRPO_LIMIT if math.isinf(G) else Quantity.SIGMA_SQUARED,
        share=True,
    ),
)
RATES = ("prompt_share", "grpo_share", "drgrpo_share", "grpo_over_drgrpo", "silent_rate")


def with_ranges(
    hist: pl.DataFrame | pl.LazyFrame,
    summary: pl.DataFrame,
    by: Sequence[str],
    options: BudgetOptions,
    val: Valuation,
    beyond: BeyondOptions,
) -> pl.DataFrame:
    """``summary`` with the bounds of GRPO's and Dr. GRPO's shares (``{share}_lo``, ``{share}_hi``) and the
    bootstrap interval (``{rate}_ci_lo``, ``{rate}_ci_hi``) of every share and silent rate, as ``beyond`` asks
    (docs/prior.md)."""
    counted = histogram_of(hist)
    if counted is None:
        return summary  # streamed rows: plug-in shares, no counts to bound
    hist = counted
    parts = [summary]
    if beyond.bounds:
        groups = row_groups(summary, hist, by)
        cuts = [
            Cut(int(g), float(r["G"]), _inside(r, options.segments))
            for g, r in zip(groups, summary.iter_rows(named=True), strict=True)
        ]
        with working("--bounds: the range the counts allow"):
            parts.append(bound_columns(hist, by, cuts, BOUNDED, BOUNDS_LEVEL, val.grader)[0])
    if beyond.ci is not None:

        def again(h: pl.DataFrame, keys: Sequence[str], v: Valuation) -> pl.DataFrame:
            return summarize(h, keys, options.sizes, segments=options.segments, prior=v)

        parts.append(beyond_intervals(hist, by, val, again, RATES, beyond))
    return pl.concat(parts, how="horizontal")


@dataclass(frozen=True)
class BudgetResult:
    """``budget``'s answer: the summary as asked (with its ranges), the same over all prompts, the headline
    and notes, the share that fills a table bar, and the extreme threshold x that the figure shades."""

    summary: pl.DataFrame
    overall: pl.DataFrame
    by: tuple[str, ...]
    headline: str
    notes: tuple[str, ...]
    bar_full: float
    extreme: float
    estimator: str = "plug-in"
    trust: tuple[str, ...] = ()  # what the headline says of the numbers' trust, for every format

    def frame(self) -> pl.DataFrame:
        return self.summary

    def view(self) -> View:
        """The table view: headline over all prompts, shares as percentages with bars, the segment notes; with
        --bounds or --ci, the range of each method's share in one column (``lo–hi``)."""
        names = self.summary.columns
        full = self.bar_full
        return ranges(
            View(
                headline=self.headline,
                percent=percent(names),
                bars=("grpo_share", "drgrpo_share"),
                bar_full=full,
                labels=labels(names),
                keys=list(self.by),
                hide=(*TABLE_HIDES, *said_once(self.summary)),
                footer=[*self.notes, also_in_data(TABLE_HIDES)],
                bar_note=f"bars: a full bar is a {100 * full:.1f}% share (the 'all' rows are drawn full)",
                compact=_compared(self.summary, self.by),
                compact_note=compared_note(self.by),
            ),
            names,
            show=("grpo_share", "drgrpo_share"),
        )

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
        """The budget summary's shares per bin of p, one panel per G."""
        from sigmatool.figures.budget import budget_figure

        return budget_figure(
            self.summary,
            by=self.by,
            extreme=self.extreme,
            source=source,
            estimator=self.estimator,
            caption=caption,
            style=style,
        )

    def warnings(self) -> tuple[str, ...]:
        return self.trust


def analyse(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    options: BudgetOptions,
    val: Valuation,
    beyond: BeyondOptions = BeyondOptions(),
) -> BudgetResult:
    """Everything ``budget`` shows: :func:`summaries` with :func:`with_ranges`, the headline over all prompts
    and the notes."""
    summary, overall = summaries(hist, by, options, val)
    beyond = beyond.bounding(unidentified(summary))
    summary = last(with_ranges(hist, summary, by, options, val, beyond), ESTIMATOR)
    priored = bool(summary[ESTIMATOR].str.contains("prior", literal=True).any())
    footer = notes(options.segments, val.posterior, priored)
    counted = histogram_of(hist)
    if counted is not None:  # streamed rows carry no counts to bound
        footer += range_notes(counted, summary, beyond, val)
        if beyond.bounds:
            footer.append(
                "a segment's share is not identified by the data at any G (prompts are placed by p̂, their "
                "weights depend on p): the bounds are what it can be"
            )
    whole = summary if over_all_prompts(by) else overall
    lead = val.headlines(whole, lambda frame, _: headline(frame))
    return BudgetResult(
        summary,
        overall,
        tuple(by),
        lead,
        tuple(footer),
        bar_scale(summary),
        options.segments.extreme,
        val.label,
        warned(summary, val, ("grpo_share", "drgrpo_share"), counted),
    )


# Left to the data formats, so that the table with a G column (several G, or --by) fits 80 columns: the
# prompts' share tells what their count does.
TABLE_HIDES = ("prompts",)


def _compared(summary: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame | None:
    """With several pass-rate columns or --by groups: each one's extreme, medium and overall rows, side by
    side (its bins of p would stack a screen per group)."""
    if not by:
        return None
    return summary.filter(pl.col("segment").is_in(["extreme", "medium", "all"]))

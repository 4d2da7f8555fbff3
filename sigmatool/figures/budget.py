"""Gradient budget: GRPO's and Dr. GRPO's share of the update per difficulty bin, extreme and medium marked."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from sigmatool.errors import UsageError
from sigmatool.figures.plot import Plot, drawing
from sigmatool.figures.style import (
    BLUE,
    DOUBLE_COLUMN,
    GREY,
    LIGHT,
    PANEL_HEIGHT,
    SINGLE_COLUMN,
    VERMILLION,
    drawn,
    g_text,
    groups,
    percent_axis,
    require,
)
from sigmatool.options import DEFAULT_EXTREME

COLUMNS = ("G", "segment", "p_lo", "p_hi", "prompt_share", "grpo_share", "drgrpo_share")
METHODS = (("grpo_share", "GRPO (= DAPO)", BLUE), ("drgrpo_share", "Dr. GRPO", VERMILLION))
SEGMENTS = ("extreme", "medium")
Y_LABEL = "share of the update (%)"


def _values(part: pl.DataFrame, column: str) -> list[float]:
    return [float(v) for v in part[column].cast(pl.Float64).fill_null(np.nan)]


def _bins(plot: Plot, ax: Axes, part: pl.DataFrame, where: str) -> None:
    """Bars per bin of p, the two methods side by side, the prompts' share as a grey outline."""
    bins = part.filter(pl.col("segment") == "bin")
    lo, hi = np.array(_values(bins, "p_lo")), np.array(_values(bins, "p_hi"))
    centre, width = (lo + hi) / 2, hi - lo
    for i, (column, label, colour) in enumerate(METHODS):
        y = _values(bins, column)
        bars = ax.bar(centre + (i - 0.5) * 0.4 * width, y, width=0.4 * width, color=colour, label=label)
        plot.bars(bars, f"{label} · {where}", "p", column, centre.tolist(), y, percent=True)
    prompts = _values(bins, "prompt_share")
    edges = np.append(lo, hi[-1:]) if lo.size else np.array([0.0, 1.0])
    step = ax.stairs(prompts, edges, color=GREY, linewidth=0.9, label="prompts")
    plot.line(step, f"prompts · {where}", "p", "prompt_share", centre.tolist(), prompts, percent=True)


def _regions(ax: Axes, part: pl.DataFrame, extreme: float, size: float) -> None:
    """Shade the extreme ends (p < x or p > 1 − x), hatch the medium band, name them atop the panel."""
    for name in SEGMENTS:
        row = part.filter(pl.col("segment") == name)
        if row.height == 0:
            continue
        # The summary's extreme row has no single interval (its bounds are null): x comes from the options.
        lo, hi = (extreme, 1.0 - extreme) if name == "extreme" else (row["p_lo"][0], row["p_hi"][0])
        if name == "extreme":
            ax.axvspan(0.0, lo, color=LIGHT, zorder=0)
            ax.axvspan(hi, 1.0, color=LIGHT, zorder=0)
            spots = [lo / 2, (1 + hi) / 2]
        else:
            ax.axvspan(lo, hi, facecolor="none", edgecolor=LIGHT, hatch="////", zorder=0)
            spots = [(lo + hi) / 2]
        for x in spots:
            ax.text(x, 0.98, name, transform=ax.get_xaxis_transform(), ha="center", va="top", size=size)


def _segments(plot: Plot, ax: Axes, part: pl.DataFrame, where: str) -> None:
    """The extreme and medium totals as bars, with their values printed."""
    rows = pl.DataFrame({"segment": list(SEGMENTS)}).join(
        part, on="segment", how="left", maintain_order="left"
    )
    x = np.arange(len(SEGMENTS), dtype=np.float64)
    for i, (column, label, colour) in enumerate(METHODS):
        y = _values(rows, column)
        at = x + (i - 0.5) * 0.38
        bars = ax.bar(at, y, width=0.38, color=colour)
        name = f"{label} · {where} · segments"
        plot.bars(bars, name, "segment", column, x.tolist(), y, percent=True, categories=SEGMENTS)
        for xi, yi in zip(at, y, strict=True):
            if np.isfinite(yi):
                ax.text(
                    xi, yi, f" {100 * yi:.1f}", ha="center", va="bottom", rotation=90, size=plot.look.note
                )
    ax.set_xticks(x, list(SEGMENTS), rotation=90)
    ax.set_xlim(-0.6, len(SEGMENTS) - 0.4)
    ax.grid(False, axis="x")


def _drawn_max(part: pl.DataFrame) -> float:
    """The tallest thing drawn in a row of panels: a bin's bar or outline, or a segment's bar."""
    bins = part.filter(pl.col("segment") == "bin").select(pl.max_horizontal(*COLUMNS[4:]).max()).item()
    segments = (
        part.filter(pl.col("segment").is_in(SEGMENTS)).select(pl.max_horizontal(*COLUMNS[5:]).max()).item()
    )
    return max(float(bins or 0.0), float(segments or 0.0)) or 1.0


def _limits(summary: pl.DataFrame) -> str:
    """What G = ∞ means, when it is drawn."""
    infinite = any(g_text(g) == "∞" for g in summary["G"].unique().to_list())
    return " (∞: the limits √(p(1−p)) and p(1−p))" if infinite else ""


def _regions_text(summary: pl.DataFrame, extreme: float) -> str:
    """The shaded and hatched regions with their bounds of p."""
    medium = summary.filter(pl.col("segment") == "medium")
    band = f" ({medium['p_lo'][0]:g} ≤ p ≤ {medium['p_hi'][0]:g})" if medium.height else ""
    return f"Shaded: extreme prompts (p < {extreme:g} or p > {1 - extreme:g}); hatched: medium{band}"


def _caption(
    summary: pl.DataFrame, by: Sequence[str], source: str, estimator: str = "plug-in", extreme: float = 0.1
) -> str:
    sizes = " and ".join(f"G = {g_text(g)}" for g in summary["G"].unique(maintain_order=True))
    if estimator.startswith("prior"):
        weights = (
            f"Estimator: {estimator}: each prompt weighs its posterior mean given its k of n, and sits in "
            "the bin of its p̂."
        )
    elif "prior" in estimator:  # the one rule: the prior beyond n
        weights = (
            f"Estimator: {estimator}. Prompts at p̂ = 0 or 1 weigh nothing at G ≤ n and their posterior "
            "means beyond; each sits in the bin of its p̂."
        )
    else:
        weights = f"Estimator: {estimator}. Prompts at p̂ = 0 or 1 weigh nothing."
    return (
        "Share of the expected update that each bin of p receives: GRPO (per-prompt weight E[σ]; DAPO's "
        f"shares are the same) and Dr. GRPO (E[σ²]), at {sizes}{_limits(summary)}. "
        f"{_regions_text(summary, extreme)}; their totals (%) on the right of each panel. Grey "
        f"outline: the prompts' share. {weights}"
        + (f" One row per {' · '.join(by)}." if by else "")
        + (f" Data: {source}." if source else "")
    )


def budget_figure(
    summary: pl.DataFrame,
    *,
    by: Sequence[str] = (),
    extreme: float = DEFAULT_EXTREME,
    source: str = "",
    caption: bool | None = None,
    estimator: str = "plug-in",
    style: str = "screen",
) -> Plot:
    """GRPO's and Dr. GRPO's share per bin of p, side by side, one panel per G (and row per ``by`` group).

    ``summary`` is :func:`sigmatool.budget.summarize` output (usually at G = 8 and inf) with the segments'
    ``extreme`` threshold x. The extreme ends are shaded and the medium band hatched; a narrow panel beside
    each gives the two segments' totals.
    """
    require(summary, [*by, *COLUMNS], "budget")
    summary, left_out = drawn(summary, by)
    parts = groups(summary, by)
    sizes = summary["G"].unique(maintain_order=True).to_list()
    if summary.filter(pl.col("segment") == "bin").height == 0:
        raise UsageError("the budget figure needs the summary's bin rows")
    width = DOUBLE_COLUMN if len(sizes) > 1 else SINGLE_COLUMN
    height = PANEL_HEIGHT * len(parts) + 0.25
    with drawing("budget", width, height, panels=len(sizes), style=style, caption=caption) as plot:
        fig, look = plot.figure, plot.look
        rows, cols = look.grid(len(sizes))
        grid = fig.add_gridspec(len(parts) * rows, 2 * cols, width_ratios=[4.0, 1.0] * cols)
        plot.caption = _caption(summary, by, source, estimator, extreme) + left_out
        for r, (label, part) in enumerate(parts):
            first = None
            for c, G in enumerate(sizes):
                one = part.filter(pl.col("G") == G)
                where = f"G = {g_text(G)}" + (f" · {label}" if label else "")
                row, col = (r * rows + c, 0) if look.stacked else (r, 2 * c)
                ax = fig.add_subplot(grid[row, col], sharey=first)
                side = fig.add_subplot(grid[row, col + 1], sharey=ax)
                first = first or ax
                _regions(ax, one, extreme, look.note)
                _bins(plot, ax, one, where)
                _segments(plot, side, one, where)
                ax.set_title(where, loc="left")
                ax.set_xlim(0.0, 1.0)
                ax.set_xlabel("pass rate p")
                side.tick_params(labelleft=False)
                percent_axis(ax)
                if c == 0 or look.stacked:
                    ax.set_ylabel(Y_LABEL)
            assert first is not None
            # Headroom for the region names and the segment totals printed above their bars.
            first.set_ylim(0, 1.4 * _drawn_max(part))
        keys = [Patch(color=colour) for _, _, colour in METHODS] + [Line2D([], [], color=GREY)]
        fig.legend(keys, [m[1] for m in METHODS] + ["prompts"], loc="outside upper center", ncols=3)
    return plot

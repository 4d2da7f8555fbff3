"""The difficulty histogram: how the prompts' pass rates p are spread, from the histogram frame (p, prompts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from numpy.typing import NDArray

from sigmatool.errors import UsageError
from sigmatool.figures.plot import Plot, drawing
from sigmatool.figures.style import (
    BLUE,
    GREY,
    SINGLE_COLUMN,
    drawn,
    group_looks,
    groups,
    legend_above,
    percent_axis,
    require,
)

FloatArray = NDArray[np.float64]
# Up to this many distinct rates (k/n data with n ≤ 128, say) each rate gets its own bar: equal-width bins
# over a k/64 lattice would hold three or four rates by turns and draw a comb that is not in the data.
LATTICE_MAX = 129
DEFAULT_BINS = 50
X_LABEL = "pass rate p (share of answers right)"
Y_LABEL = "prompts (%)"


@dataclass(frozen=True)
class Cells:
    """Where a rate is counted: one cell per distinct rate (``lattice``) or equal-width bins."""

    centres: FloatArray
    edges: FloatArray
    lattice: bool

    def index(self, p: FloatArray) -> NDArray[np.int64]:
        if self.lattice:
            return np.searchsorted(self.centres, p).astype(np.int64)
        bins = self.centres.size
        return np.clip(np.floor(p * bins), 0, bins - 1).astype(np.int64)

    @property
    def widths(self) -> FloatArray:
        if self.lattice and self.centres.size > 1:
            return np.full(self.centres.size, 0.8 * float(np.diff(self.centres).min()))
        return np.diff(self.edges) * (0.8 if self.lattice else 1.0)


def cells_of(p: FloatArray, bins: int | None) -> Cells:
    """Cells for the rates ``p``: each distinct rate when there are few and ``bins`` is None, else bins."""
    values = np.unique(p)
    if bins is None and values.size <= LATTICE_MAX:
        gaps = np.diff(values)
        half = float(gaps.min()) / 2 if gaps.size else 0.01
        middles = (values[:-1] + values[1:]) / 2
        edges = np.concatenate([[values[0] - half], middles, [values[-1] + half]])
        return Cells(values, edges, True)
    count = bins or DEFAULT_BINS
    if count < 1:
        raise UsageError(f"the difficulty histogram needs at least 1 bin, not {count}")
    edges = np.linspace(0.0, 1.0, count + 1)
    return Cells((edges[:-1] + edges[1:]) / 2, edges, False)


def shares(part: pl.DataFrame, cells: Cells) -> FloatArray:
    """Each cell's share of the group's prompts."""
    p = part["p"].cast(pl.Float64).to_numpy()
    w = part["prompts"].cast(pl.Float64).to_numpy()
    total = np.bincount(cells.index(p), weights=w, minlength=cells.centres.size)
    return np.asarray(total / w.sum(), dtype=np.float64)


LEGEND_ABREAST = 14  # characters of the longest group name that still fit three names side by side


def draw_difficulty(plot: Plot, ax: Axes, hist: pl.DataFrame, by: Sequence[str], bins: int | None) -> Cells:
    """Bars of the prompts' share per cell of p; with ``by``, one outline per group."""
    cells = cells_of(hist["p"].cast(pl.Float64).to_numpy(), bins)
    parts = groups(hist, by)
    looks = group_looks([label for label, _ in parts])
    for label, part in parts:
        share = shares(part, cells)
        name = f"prompts · {label}" if label else "prompts"
        if not by:
            # Rates 0 and 1 are silent at every G: grey bars.
            ends = (cells.centres == 0.0) | (cells.centres == 1.0)
            colours = [GREY if end else BLUE for end in ends]
            bars = ax.bar(cells.centres, share, width=cells.widths, color=colours, label=name)
            plot.bars(bars, name, "p", "prompt_share", cells.centres.tolist(), share.tolist(), percent=True)
        else:
            # The house style draws patches without an edge; an outline needs its own width.
            colour, dash, _ = looks[label]
            step = ax.stairs(share, cells.edges, label=label, color=colour, linestyle=dash, linewidth=1.2)
            plot.line(step, name, "p", "prompt_share", cells.centres.tolist(), share.tolist(), percent=True)
    ax.set_xlim(min(float(cells.edges[0]), 0.0), max(float(cells.edges[-1]), 1.0))
    ax.set_ylim(bottom=0)
    percent_axis(ax)
    ax.set_xlabel(X_LABEL)
    ax.set_ylabel(Y_LABEL)
    if by:
        # Above the axes, clear of the outlines; three names abreast only when they are short (a file's name
        # and its column are not).
        wide = max(len(label) for label, _ in parts) > LEGEND_ABREAST
        legend_above(ax, ncols=1 if wide else min(len(parts), 3))
    return cells


def _share_at(part: pl.DataFrame, p: float) -> float:
    return float(part.filter(pl.col("p") == p)["prompts"].sum()) / float(part["prompts"].sum())


def ends_text(hist: pl.DataFrame, by: Sequence[str] = ()) -> str:
    """The prompts at p = 0 and p = 1, over the whole histogram or per ``by`` group."""
    if not by:
        zero, one = _share_at(hist, 0.0), _share_at(hist, 1.0)
        return (
            f"p = 0 (never solved): {100 * zero:.2f} % of prompts; p = 1 (always solved): {100 * one:.2f} %"
        )
    parts = [
        f"{label} {100 * (_share_at(part, 0.0) + _share_at(part, 1.0)):.2f} %"
        for label, part in groups(hist, by)
    ]
    return "prompts at p = 0 or 1: " + ", ".join(parts)


def difficulty_figure(
    hist: pl.DataFrame,
    *,
    by: Sequence[str] = (),
    bins: int | None = None,
    source: str = "",
    caption: bool = True,
) -> Plot:
    """The share of prompts at each pass rate p, from the histogram frame (``[by…]``, ``p``, ``prompts``).

    With few distinct rates (k/n data) each rate has its own bar, p = 0 and p = 1 in grey; otherwise
    ``bins`` equal-width bins (default 50). With ``by``, one outline per group, each summing to 100 %.
    """
    require(hist, [*by, "p", "prompts"], "difficulty")
    hist, left_out = drawn(hist, by)
    with drawing("difficulty", SINGLE_COLUMN, caption=caption) as plot:
        total = float(hist["prompts"].sum())
        cells = draw_difficulty(plot, plot.figure.subplots(), hist, by, bins)
        how = "a step per distinct rate" if cells.lattice else f"{cells.centres.size} equal-width bins"
        if not by:
            how = how.replace("a step", "a bar")
        grey = " (grey)" if not by and cells.lattice else ""
        plot.caption = (
            f"Pass rates of {total:,.0f} prompts ({how}); {ends_text(hist, by)}{grey}: these are silent at "
            "every G."
            + (f" One outline per {' · '.join(by)}, each summing to 100 %." if by else "")
            + left_out
            + (f" Data: {source}." if source else "")
        )
    return plot

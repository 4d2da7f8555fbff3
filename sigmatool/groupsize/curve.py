"""What ``groupsize --plot`` draws: the exact G on a fine grid of p over the data's span, and the prompts'
histogram of p beneath it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from sigmatool.estimators import Valuation
from sigmatool.groupsize.table import group_size_table
from sigmatool.kernels.grader import Grader
from sigmatool.load.loaded import counted
from sigmatool.options import GroupSizeOptions

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot

CURVE_POINTS = 1999


def groupsize_curve(
    options: GroupSizeOptions,
    points: int = CURVE_POINTS,
    span: tuple[float, float] | None = None,
    grader: Grader | None = None,
) -> pl.DataFrame:
    """:func:`sigmatool.groupsize.group_size_table` on an even grid of p: the curve to draw.

    The grid is ``i / (points + 1)``, i = 1 … points (2.5e-4 apart by default), fine enough that the exact
    G's steps show where they fall; with ``span = (lo, hi)``, ``points`` rates evenly from lo to hi, both
    included (see :func:`interior_span`). With a ``grader`` (``--grader-error``), the G its rewards need.
    """
    if span is None:
        grid = np.arange(1, points + 1, dtype=np.float64) / (points + 1)
    else:
        grid = np.linspace(span[0], span[1], points, dtype=np.float64)
    graded = None if grader is None else Valuation(grader=grader)
    return group_size_table(pl.DataFrame({"p": grid}), options, prior=graded)


def interior_span(hist: pl.DataFrame) -> tuple[float, float] | None:
    """The smallest and largest pass rate strictly between 0 and 1 in the histogram (None if there is none).

    Drawn over this span, the curve covers every prompt that has a group size, and its tails, where the
    exact G runs into the thousands and costs most to compute, stop where the data does.
    """
    inside = hist.filter((pl.col("p") > 0.0) & (pl.col("p") < 1.0))["p"]
    if inside.is_empty():
        return None
    return float(inside.min()), float(inside.max())  # type: ignore[arg-type]


@dataclass(frozen=True)
class GroupSizeCurve:
    """The exact G against p on a grid over the data's span (``curve``: ``p``, ``group_size``, …), the
    prompts' histogram of p (``hist``: [--by], ``p``, ``prompts``), and the options that made them.

    Under a prior, ``points`` holds each distinct count's posterior group size (``p`` = its p̂, ``k``, ``n``,
    ``group_size``, null where unreachable) and ``estimator`` names the prior: these are the sizes the
    table counts, and the plug-in curve stays beside them for reference."""

    curve: pl.DataFrame
    hist: pl.DataFrame
    options: GroupSizeOptions
    by: tuple[str, ...]
    points: pl.DataFrame | None = None
    estimator: str = "plug-in"

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
        """The exact group size against p for these options, over the prompts' histogram of p."""
        from sigmatool.figures.groupsize import groupsize_figure

        return groupsize_figure(
            self.curve,
            self.hist,
            options=self.options,
            by=self.by,
            source=source,
            points=self.points,
            estimator=self.estimator,
            caption=caption,
            style=style,
        )


def curve(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    options: GroupSizeOptions,
    posterior: pl.DataFrame | None = None,
    estimator: str = "plug-in",
    grader: Grader | None = None,
) -> GroupSizeCurve:
    """The exact group size against p for these options, over the prompts' histogram of p; with
    ``posterior`` (rows with ``k``, ``n``, ``p`` and their posterior ``group_size``), its points."""
    histogram = counted(hist, by)
    points = None
    if posterior is not None:
        points = posterior.select("k", "n", "p", "group_size").unique(["k", "n"]).sort("p", "n", "k")
    drawn = groupsize_curve(options, span=interior_span(histogram), grader=grader)
    return GroupSizeCurve(drawn, histogram, options, tuple(by), points, estimator)

"""Legends never sit on the data: with two to five series, on screen and on paper, every legend box lies
outside every axes' plotting area (a legend inside the axes once covered the lines at two columns in the
report and at five with --plot)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

from sigmatool import budget, silent
from sigmatool.figures import (
    Plot,
    budget_figure,
    difficulty_figure,
    groupsize_figure,
    silent_figure,
)
from sigmatool.groupsize import groupsize_curve
from sigmatool.options import GroupSizeOptions

# Sixteen figures drawn and laid out: `make test-slow` runs them.
pytestmark = pytest.mark.slow

GRID = [2.0, 4.0, 8.0, 16.0, 32.0]


def _groups(count: int) -> pl.DataFrame:
    """A histogram of k of 16 in ``count`` groups with names of several lengths."""
    rng = np.random.default_rng(count)
    names = ["algebra", "geometry", "number theory and combinatorics", "x", "precalculus"][:count]
    rows = [
        {"g": name, "k": k, "n": 16, "p": k / 16, "prompts": int(rng.integers(1, 50)), "rows": 1}
        for name in names
        for k in range(17)
    ]
    return pl.DataFrame(rows)


def _overlaps(figure: Figure) -> list[str]:
    """Each legend that overlaps an axes' plotting area, by its text."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    legends = [*figure.legends, *(ax.get_legend() for ax in figure.axes if ax.get_legend() is not None)]
    found = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in figure.axes:
            if ax.has_data() and box.overlaps(ax.get_window_extent(renderer)):
                found.append(" / ".join(t.get_text() for t in legend.get_texts()))
    return found


FIGURES: dict[str, Callable[[pl.DataFrame, str], Plot]] = {
    "silent": lambda h, style: silent_figure(
        silent.summarize(h, ("g",), GRID, estimator="plugin"), by=("g",), style=style
    ),
    "difficulty": lambda h, style: difficulty_figure(h, by=("g",)),
    "budget": lambda h, style: budget_figure(
        budget.summarize(h, ("g",), [8.0, float("inf")], estimator="plugin"), by=("g",), style=style
    ),
    "groupsize": lambda h, style: groupsize_figure(
        groupsize_curve(GroupSizeOptions()), h.drop("g"), options=GroupSizeOptions(), style=style
    ),
}


@pytest.mark.parametrize("count", [2, 5])
@pytest.mark.parametrize("style", ["screen", "paper"])
@pytest.mark.parametrize("kind", list(FIGURES))
def test_no_legend_covers_the_data(kind: str, style: str, count: int) -> None:
    plot = FIGURES[kind](_groups(count), style)
    assert [] == _overlaps(plot.figure)

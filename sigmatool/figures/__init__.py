"""Figures of sigmatool's analyses in one house style (matplotlib, imported only when a figure is asked for).

Each function takes an analysis' output frame and returns a :class:`Plot`: ``plot.save("silent.svg")``
writes PNG, SVG or PDF by the file's extension; ``plot.series`` holds the values drawn.
"""

from __future__ import annotations

from sigmatool.figures.budget import budget_figure
from sigmatool.figures.difficulty import difficulty_figure
from sigmatool.figures.groupsize import groupsize_figure
from sigmatool.figures.plan import plan_figure
from sigmatool.figures.plot import Plot, Series, write_atomic
from sigmatool.figures.silent import silent_figure
from sigmatool.figures.simulate import simulate_figure
from sigmatool.figures.track import track_figure

__all__ = [
    "Plot",
    "Series",
    "budget_figure",
    "difficulty_figure",
    "groupsize_figure",
    "plan_figure",
    "silent_figure",
    "simulate_figure",
    "track_figure",
    "write_atomic",
]

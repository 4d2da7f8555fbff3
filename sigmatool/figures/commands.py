"""The figure each command draws for ``--plot FILE``, from the command's own frames and options.

``silent`` draws the silent share over :func:`sigmatool.silent.grid_for`'s G (powers of two around the asked
G, which are marked), ``budget`` its summary as computed, ``groupsize`` the exact G against p over the
prompts' histogram, ``simulate`` its trace. ``track`` and ``plan`` take frames in the contracts of
:func:`~sigmatool.figures.track_figure` and :func:`~sigmatool.figures.plan_figure`, for the commands that
produce them.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from sigmatool import silent
from sigmatool.figures.budget import budget_figure
from sigmatool.figures.groupsize import groupsize_curve, groupsize_figure, interior_span
from sigmatool.figures.plan import plan_figure
from sigmatool.figures.plot import Plot
from sigmatool.figures.silent import silent_figure
from sigmatool.figures.simulate import simulate_figure
from sigmatool.figures.track import track_figure
from sigmatool.options import BudgetOptions, GroupSizeOptions, SilentOptions


def silent_plot(hist: pl.DataFrame, options: SilentOptions, by: Sequence[str], source: str) -> Plot:
    """Silent share against G on a grid around the asked G, with the chosen estimator, per ``by`` group."""
    sizes = silent.grid_for(hist, options)
    summary = silent.summarize(hist, by, sizes, estimator=options.estimator)
    return silent_figure(summary, by=by, estimator=options.estimator, marked=options.sizes, source=source)


def budget_plot(summary: pl.DataFrame, options: BudgetOptions, by: Sequence[str], source: str) -> Plot:
    """The budget summary's shares per bin of p, one panel per G."""
    return budget_figure(summary, by=by, extreme=options.segments.extreme, source=source)


def groupsize_plot(hist: pl.DataFrame, options: GroupSizeOptions, by: Sequence[str], source: str) -> Plot:
    """The exact group size against p for these options, over the prompts' histogram of p."""
    curve = groupsize_curve(options, span=interior_span(hist))
    return groupsize_figure(curve, hist, options=options, by=by, source=source)


def simulate_plot(trace: pl.DataFrame, summary: pl.DataFrame, source: str) -> Plot:
    """Observed against predicted silent share per step, and the hardest quartile's p."""
    return simulate_figure(trace, summary, source=source)


def track_plot(frame: pl.DataFrame, by: Sequence[str], source: str) -> Plot:
    """Measured against expected silent share per step (``step``, ``measured_silent``, ``expected_silent``)."""
    return track_figure(frame, by=by, source=source)


def plan_plot(allocation: pl.DataFrame, comparison: pl.DataFrame, objective: str, source: str) -> Plot:
    """A rollout plan's group size per p, and its objective against uniform G at equal rollouts."""
    return plan_figure(allocation, comparison, objective=objective, source=source)

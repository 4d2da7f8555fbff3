"""The figure each command draws for ``--plot FILE``, from the command's own result: :func:`draw` picks the
figure by the result's type, so a command hands over what its analysis computed and nothing more.

``silent`` draws its result's curve (the silent share over :func:`sigmatool.silent.grid_for`'s G, the asked
G marked), ``budget`` its summary as computed, ``groupsize`` its curve (the exact G against p over the
prompts' histogram), ``simulate`` its trace; each as its analysis computed it. ``track`` and ``plan`` take frames in the contracts of
:func:`~sigmatool.figures.track_figure` and :func:`~sigmatool.figures.plan_figure`, for the commands that
produce them.
"""

from __future__ import annotations

from functools import singledispatch

import polars as pl

from sigmatool.budget import BudgetResult
from sigmatool.curriculum import CurriculumResult
from sigmatool.figures.budget import budget_figure
from sigmatool.figures.curriculum import curriculum_plot
from sigmatool.figures.groupsize import groupsize_figure
from sigmatool.figures.plan import plan_figure
from sigmatool.figures.plot import Plot
from sigmatool.figures.preflight import preflight_figure
from sigmatool.figures.silent import silent_figure
from sigmatool.figures.simulate import simulate_figure
from sigmatool.figures.track import track_figure
from sigmatool.groupsize import GroupSizeCurve
from sigmatool.plan.core import PlanFrames
from sigmatool.preflight import PreflightResult
from sigmatool.silent import SilentCurve
from sigmatool.simulate import SimulationRun
from sigmatool.track import TrackResult


def silent_plot(curve: SilentCurve, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
    """Silent share against G on a grid around the asked G, with the chosen estimator (and prior), per
    ``by`` group."""
    return silent_figure(
        curve.summary,
        by=curve.by,
        estimator=curve.estimator,
        marked=curve.marked,
        source=source,
        caption=caption,
        style=style,
    )


def budget_plot(
    result: BudgetResult, source: str, caption: bool | None = None, style: str = "screen"
) -> Plot:
    """The budget summary's shares per bin of p, one panel per G."""
    return budget_figure(
        result.summary,
        by=result.by,
        extreme=result.extreme,
        source=source,
        estimator=result.estimator,
        caption=caption,
        style=style,
    )


def groupsize_plot(
    curve: GroupSizeCurve, source: str, caption: bool | None = None, style: str = "screen"
) -> Plot:
    """The exact group size against p for these options, over the prompts' histogram of p."""
    return groupsize_figure(
        curve.curve,
        curve.hist,
        options=curve.options,
        by=curve.by,
        source=source,
        points=curve.points,
        estimator=curve.estimator,
        caption=caption,
        style=style,
    )


def simulate_plot(
    run: SimulationRun, source: str, caption: bool | None = None, style: str = "screen"
) -> Plot:
    """Observed against predicted silent share per step, and the hardest quartile's p."""
    return simulate_figure(run.trace, run.summary, source=source, caption=caption, style=style)


def track_plot(result: TrackResult, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
    """Measured against expected silent share per step, the expectation banded by the drift rule's z."""
    return track_figure(result.band, source=source, z=result.z_threshold, caption=caption, style=style)


def track_frame(result: TrackResult) -> pl.DataFrame:
    """:func:`~sigmatool.figures.track_figure`'s frame from a run (:attr:`TrackResult.band`)."""
    return result.band


def plan_plot(frames: PlanFrames, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
    """A rollout plan's group size per p, and its objective against the best uniform G at equal rollouts."""
    return plan_figure(
        frames.allocation,
        frames.comparison,
        objective=frames.objective,
        source=source,
        estimator=frames.estimator,
        caption=caption,
        style=style,
    )


def preflight_plot(
    result: PreflightResult, source: str, caption: bool | None = None, style: str = "screen"
) -> Plot:
    """P(crash over the run) against the oversampling multiplier, and the wasted share of generation."""
    if result.curve is None:
        raise TypeError("preflight's result holds no curve: analyse it with figure=True")
    return preflight_figure(
        result.curve, result.settings, source=source, estimator=result.estimator, caption=caption, style=style
    )


@singledispatch
def draw(drawn: object, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
    """The figure of a command's result (``source``: the data, as the caption names it; ``caption``: drawn
    under the figure, else kept only in the file's embedded data, None: on screen and not on paper;
    ``style``: ``screen`` or ``paper``)."""
    raise TypeError(f"no figure draws a {type(drawn).__name__}")


draw.register(SilentCurve, silent_plot)
draw.register(BudgetResult, budget_plot)
draw.register(GroupSizeCurve, groupsize_plot)
draw.register(SimulationRun, simulate_plot)
draw.register(TrackResult, track_plot)
draw.register(PlanFrames, plan_plot)
draw.register(PreflightResult, preflight_plot)
draw.register(CurriculumResult, curriculum_plot)

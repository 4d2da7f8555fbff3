"""The figure each command draws for ``--plot FILE``, from the command's own frames and options.

``silent`` draws its result's curve (the silent share over :func:`sigmatool.silent.grid_for`'s G, the asked
G marked), ``budget`` its summary as computed, ``groupsize`` its curve (the exact G against p over the
prompts' histogram), ``simulate`` its trace; each as its analysis computed it. ``track`` and ``plan`` take frames in the contracts of
:func:`~sigmatool.figures.track_figure` and :func:`~sigmatool.figures.plan_figure`, for the commands that
produce them.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from sigmatool.budget import BudgetResult
from sigmatool.errors import UsageError
from sigmatool.figures.budget import budget_figure
from sigmatool.figures.groupsize import groupsize_figure
from sigmatool.figures.plan import plan_figure
from sigmatool.figures.plot import Plot
from sigmatool.figures.silent import silent_figure
from sigmatool.figures.simulate import simulate_figure
from sigmatool.figures.track import track_figure
from sigmatool.groupsize import GroupSizeCurve
from sigmatool.plan.core import Plan, plan_values
from sigmatool.silent import SilentCurve
from sigmatool.track import TrackResult


def silent_plot(curve: SilentCurve, source: str) -> Plot:
    """Silent share against G on a grid around the asked G, with the chosen estimator (and prior), per
    ``by`` group."""
    return silent_figure(
        curve.summary, by=curve.by, estimator=curve.estimator, marked=curve.marked, source=source
    )


def budget_plot(result: BudgetResult, source: str) -> Plot:
    """The budget summary's shares per bin of p, one panel per G."""
    return budget_figure(result.summary, by=result.by, extreme=result.extreme, source=source)


def groupsize_plot(curve: GroupSizeCurve, source: str) -> Plot:
    """The exact group size against p for these options, over the prompts' histogram of p."""
    return groupsize_figure(curve.curve, curve.hist, options=curve.options, by=curve.by, source=source)


def simulate_plot(trace: pl.DataFrame, summary: pl.DataFrame, source: str) -> Plot:
    """Observed against predicted silent share per step, and the hardest quartile's p."""
    return simulate_figure(trace, summary, source=source)


def track_plot(result: TrackResult, source: str) -> Plot:
    """Measured against expected silent share per step, the expectation banded by the drift rule's z."""
    return track_figure(result.band, source=source)


def track_frame(result: TrackResult) -> pl.DataFrame:
    """:func:`~sigmatool.figures.track_figure`'s frame from a run (:attr:`TrackResult.band`)."""
    return result.band


def plan_plot(plan: Plan, source: str) -> Plot:
    """A rollout plan's group size per p, and its objective against the best uniform G at equal rollouts."""
    allocation, comparison = plan_frames(plan)
    return plan_figure(allocation, comparison, objective=plan.options.objective, source=source)


def plan_frames(plan: Plan) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`~sigmatool.figures.plan_figure`'s frames: the plan's sizes per p, and the same request
    planned at each allowed size as the budget (and at its own), against the best uniform G of each, both
    per prompt."""
    prompts = int(plan.counts.sum())
    own = plan.budget / prompts
    rows = []
    for budget in sorted({own, *(float(G) for G in plan.options.sizes)}):
        try:
            other = (
                plan
                if budget == own
                else plan_values(plan.p, plan.counts, replace(plan.options, budget=budget, total=None))
            )
        except UsageError:  # --keep-all: a budget below the smallest size for every prompt
            continue
        best = other.summary.filter(pl.col("strategy") == "uniform_best")["objective"]
        uniform = float(best[0]) / prompts if best.len() else None
        rows.append((budget, other.objective / prompts, uniform))
    comparison = pl.DataFrame(
        rows, schema=["rollouts_per_prompt", "plan_objective", "uniform_objective"], orient="row"
    )
    return plan.values.select("p", "group_size", "prompts"), comparison

"""The figure each command draws for ``--plot FILE``, from the command's own frames and options.

``silent`` draws the silent share over :func:`sigmatool.silent_curve.grid_for`'s G (powers of two around the asked
G, which are marked), ``budget`` its summary as computed, ``groupsize`` the exact G against p over the
prompts' histogram, ``simulate`` its trace. ``track`` and ``plan`` take frames in the contracts of
:func:`~sigmatool.figures.track_figure` and :func:`~sigmatool.figures.plan_figure`, for the commands that
produce them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from sigmatool import silent_curve
from sigmatool.errors import UsageError
from sigmatool.figures.budget import budget_figure
from sigmatool.figures.groupsize import groupsize_curve, groupsize_figure, interior_span
from sigmatool.figures.plan import plan_figure
from sigmatool.figures.plot import Plot
from sigmatool.figures.silent import silent_figure
from sigmatool.figures.simulate import simulate_figure
from sigmatool.figures.track import track_figure
from sigmatool.options import BudgetOptions, GroupSizeOptions, PriorSpec, SilentOptions
from sigmatool.plan.core import Plan, plan_values
from sigmatool.track import TrackResult
from sigmatool.track.expected import EXPECTED


def silent_plot(
    hist: pl.DataFrame | pl.LazyFrame,
    options: SilentOptions,
    by: Sequence[str],
    source: str,
    prior: PriorSpec | None = None,
) -> Plot:
    """Silent share against G on a grid around the asked G, with the chosen estimator (and prior), per
    ``by`` group."""
    summary = silent_curve.curve(hist, options, by, prior)
    return silent_figure(summary, by=by, estimator=options.estimator, marked=options.sizes, source=source)


def histogram_frame(hist: pl.DataFrame | pl.LazyFrame, by: Sequence[str]) -> pl.DataFrame:
    """A histogram (``by``, ``p``, ``prompts``) as is; streamed rows (``by``, ``p``, ``weight``) counted."""
    if isinstance(hist, pl.DataFrame):
        return hist
    counted = hist.group_by([*by, "p"]).agg(pl.col("weight").sum().alias("prompts"))
    return counted.collect(engine="streaming").sort([*by, "p"])


def budget_plot(summary: pl.DataFrame, options: BudgetOptions, by: Sequence[str], source: str) -> Plot:
    """The budget summary's shares per bin of p, one panel per G."""
    return budget_figure(summary, by=by, extreme=options.segments.extreme, source=source)


def groupsize_plot(
    hist: pl.DataFrame | pl.LazyFrame, options: GroupSizeOptions, by: Sequence[str], source: str
) -> Plot:
    """The exact group size against p for these options, over the prompts' histogram of p."""
    hist = histogram_frame(hist, by)
    curve = groupsize_curve(options, span=interior_span(hist))
    return groupsize_figure(curve, hist, options=options, by=by, source=source)


def simulate_plot(trace: pl.DataFrame, summary: pl.DataFrame, source: str) -> Plot:
    """Observed against predicted silent share per step, and the hardest quartile's p."""
    return simulate_figure(trace, summary, source=source)


def track_plot(result: TrackResult, source: str) -> Plot:
    """Measured against expected silent share per step, the expectation banded by the drift rule's z."""
    return track_figure(track_frame(result), source=source)


def track_frame(result: TrackResult) -> pl.DataFrame:
    """:func:`~sigmatool.figures.track_figure`'s frame from a run: per step with an expectation, the
    compared groups' measured and expected silent shares, and expected ± z_threshold binomial deviations."""
    e = pl.col(EXPECTED)
    spread = (
        result.groups.filter(e.is_not_null() & (pl.col("G") >= 1))
        .group_by("step")
        .agg(((e * (1 - e)).sum().sqrt() / pl.len()).alias("__sd"))
    )
    expected = pl.col("expected_silent_fraction")
    half = result.z_threshold * pl.col("__sd")
    return (
        result.steps.filter(pl.col("compared_groups") > 0)
        .join(spread, on="step", how="left")
        .select(
            "step",
            pl.col("compared_silent_fraction").alias("measured_silent"),
            expected.alias("expected_silent"),
            (expected - half).clip(0.0, 1.0).alias("expected_silent_lo"),
            (expected + half).clip(0.0, 1.0).alias("expected_silent_hi"),
        )
        .sort("step")
    )


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

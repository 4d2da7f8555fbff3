"""A rollout plan: the group size given to each pass rate, and its objective against uniform G at equal cost."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from sigmatool.errors import UsageError
from sigmatool.figures.plot import Plot, drawing
from sigmatool.figures.style import BLACK, BLUE, DOUBLE_COLUMN, GREY, legend_at, require

ALLOCATION = ("p", "group_size", "prompts")
COMPARISON = ("rollouts_per_prompt", "plan_objective", "uniform_objective")


def _uniform_g(allocation: pl.DataFrame) -> float:
    """Rollouts per prompt the plan spends: the uniform G of the same budget."""
    w = allocation["prompts"].cast(pl.Float64)
    return float((allocation["group_size"].cast(pl.Float64) * w).sum() / w.sum())


def _allocation(plot: Plot, ax: Axes, allocation: pl.DataFrame) -> None:
    """Group size per pass rate, dot areas by prompts, against the uniform G of the same rollouts."""
    p, G = allocation["p"].to_list(), allocation["group_size"].cast(pl.Float64).to_list()
    weight = allocation["prompts"].cast(pl.Float64).to_numpy()
    area = 4.0 + 60.0 * np.sqrt(weight / weight.max())
    dots = ax.scatter(p, G, s=area, color=BLUE, alpha=0.7, linewidths=0, label="plan")
    plot.line(dots, "plan group size", "p", "group_size", p, G)
    uniform = _uniform_g(allocation)
    ax.axhline(uniform, color=GREY, linestyle=":", label=f"uniform G = {uniform:.3g} (same rollouts)")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("pass rate p")
    ax.set_ylabel("group size G (answers)")
    legend_at(ax, "upper center", plot.look)


def _comparison(plot: Plot, ax: Axes, comparison: pl.DataFrame, objective: str) -> None:
    """The plan's objective and uniform G's against the rollouts per prompt."""
    rows = comparison.sort("rollouts_per_prompt")
    budget = rows["rollouts_per_prompt"].cast(pl.Float64).to_list()
    for column, name, colour, marker in (
        ("plan_objective", "plan", BLUE, "o"),
        ("uniform_objective", "uniform G", BLACK, "s"),
    ):
        values = rows[column].cast(pl.Float64).to_list()
        (line,) = ax.plot(budget, values, color=colour, marker=marker, label=name)
        plot.line(line, name, "rollouts_per_prompt", column, budget, values)
    ax.set_xlabel("rollouts per prompt (answers)")
    ax.set_ylabel(f"{objective} per prompt")
    legend_at(ax, "lower right", plot.look)


def plan_figure(
    allocation: pl.DataFrame,
    comparison: pl.DataFrame,
    *,
    objective: str = "objective",
    source: str = "",
    caption: bool | None = None,
    estimator: str = "plug-in",
    style: str = "screen",
) -> Plot:
    """Left: the group size a plan gives each pass rate. Right: the plan's objective against uniform G.

    Input contract:

    - ``allocation``, one row per (pass rate, group size) pair: ``p`` (float in [0, 1]), ``group_size``
      (integer ≥ 0; 0 = the prompt is not sampled), ``prompts`` (number or total weight of the prompts with
      that p given that G). Dot areas follow ``prompts``; the dotted line is the uniform G with the same
      rollouts, Σ G·prompts / Σ prompts.
    - ``comparison``, one row per budget: ``rollouts_per_prompt`` (float > 0: the budget over the number of
      prompts, so the uniform G it buys), ``plan_objective`` and ``uniform_objective`` (float: the
      objective per prompt, e.g. the mean E[σ], reached by the plan and by uniform G at that budget).
      ``objective`` names it on the axis.
    """
    require(allocation, ALLOCATION, "plan")
    require(comparison, COMPARISON, "plan")
    if float(allocation["prompts"].sum()) <= 0:
        raise UsageError("the plan figure needs prompts with a positive weight")
    with drawing("plan", DOUBLE_COLUMN, panels=2, style=style, caption=caption) as plot:
        left, right = plot.figure.subplots(*plot.look.grid(2))
        sides = plot.look.sides
        _allocation(plot, left, allocation)
        _comparison(plot, right, comparison, objective)
        plot.caption = (
            f"A rollout plan: {sides[0]}, the group size it gives each pass rate (dot area: prompts), "
            f"against the uniform G that spends the same rollouts; {sides[1]}, its {objective} per prompt "
            "against uniform G "
            f"at equal rollouts. Estimator: {estimator}"
            + (
                ": each prompt valued by its posterior given its k of n, drawn at its p̂."
                if estimator.startswith("prior")
                else "."
            )
            + (f" Data: {source}." if source else "")
        )
    return plot

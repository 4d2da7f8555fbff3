"""``curriculum``'s figure: the silent share and the drawn prompts' pass rate against step, uniform beside."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from sigmatool.figures.plot import Plot, drawing
from sigmatool.figures.style import BLACK, DOUBLE_COLUMN, GREY, percent_axis


def _caption(
    run: str,
    prompts: float,
    estimator: str,
    grader: tuple[float, float] | None,
    source: str,
    sides: tuple[str, str],
) -> str:
    data = f" Data: {source}." if source else ""
    graded = f" Rewards through a grader with FP {grader[0]:g}, FN {grader[1]:g}." if grader else ""
    return (
        f"{run}: {sides[0]}, the expected share of silent groups (all right or all wrong) per step; {sides[1]}, "
        f"the expected pass rate of a drawn prompt. Grey dashed: every step drawn uniformly from all "
        f"{prompts:,.0f} prompts. Exact expectations, {estimator} pass rates, which do not move in this "
        f"model.{graded}{data}"
    )


def curriculum_figure(
    steps: pl.DataFrame,
    uniform: Mapping[str, float],
    *,
    run: str,
    prompts: float,
    estimator: str,
    grader: tuple[float, float] | None = None,
    source: str = "",
    caption: bool | None = None,
    style: str = "screen",
) -> Plot:
    """Silent share and expected pass rate against step (``steps``: ``step``, ``silent_rate``,
    ``pass_rate``); uniform sampling's (``uniform``) as a grey dashed line. ``run`` names the schedule, its
    steps, batch and G for the caption; ``prompts`` the input's, ``estimator`` the pass rates'."""
    t = steps["step"].to_list()
    with drawing("curriculum", DOUBLE_COLUMN, panels=2, style=style, caption=caption) as plot:
        left, right = plot.figure.subplots(*plot.look.grid(2))
        plot.caption = _caption(run, prompts, estimator, grader, source, plot.look.sides)
        for ax, column, label in (
            (left, "silent_rate", "silent groups (%)"),
            (right, "pass_rate", "pass rate of a drawn prompt"),
        ):
            values = steps[column].to_list()
            (line,) = ax.plot(t, values, color=BLACK, label="schedule")
            plot.line(line, label, "step", column, t, values)
            ax.axhline(uniform[column], color=GREY, linestyle="--", linewidth=1.0, label="uniform")
            ax.set_xlabel("step")
            ax.set_ylabel(label)
            ax.set_ylim(0.0, 1.02)
            ax.legend(frameon=False, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, borderaxespad=0.2)
        percent_axis(left)
    return plot

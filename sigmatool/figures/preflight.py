"""``preflight``'s figure: the run's chance of a crash against the oversampling multiplier, the waste beside it."""

from __future__ import annotations

import polars as pl

from sigmatool.figures.plot import Plot
from sigmatool.figures.style import (
    BLACK,
    DOUBLE_COLUMN,
    GREY,
    PANEL_HEIGHT,
    VERMILLION,
    add_caption,
    house_style,
    look_of,
    new_figure,
    percent_axis,
    require,
)
from sigmatool.trainers.settings import LoopSettings


def _caption(settings: LoopSettings, source: str, estimator: str, sides: tuple[str, str]) -> str:
    nemo = settings.trainer == "nemo-rl"
    knob = settings.key("max_gen_batches")  # the cap as the trainer names it
    cap = "no cap" if settings.max_gen_batches <= 0 and not nemo else f"{knob} {settings.max_gen_batches}"
    run = f"{settings.epochs} epochs" if settings.epochs is not None else f"{settings.steps:,} steps"
    data = f" Data: {source}." if source else ""
    raised = "its ValueError" if nemo else "'Generated too many'"
    return (
        f"{settings.name}'s DAPO loop with train_batch_size {settings.train_batch_size:,}, n {settings.n}, {cap}: "
        f"{sides[0]}, the chance that the run ({run}) raises {raised} against gen_batch_size ÷ "
        f"train_batch_size (dotted: the asked {settings.gen:,}; dashed: the risk {settings.risk:g}); {sides[1]}, the "
        f"share of generated rollouts that do not train (silent groups, surplus cut, a crashing step's). "
        f"Keep probabilities 1 − P_silent(p, n), {estimator}; prompts sampled with replacement.{data}"
    )


def preflight_figure(
    curve: pl.DataFrame,
    settings: LoopSettings,
    source: str = "",
    estimator: str = "plug-in",
    caption: bool | None = None,
    style: str = "screen",
) -> Plot:
    """P(crash over the run) and the wasted share of generation, each against the multiplier B / T.

    ``curve`` has ``multiplier``, ``gen_batch_size``, ``p_crash_run`` and ``waste_share``
    (:func:`sigmatool.preflight.curve`).
    """
    require(curve, ["multiplier", "p_crash_run", "waste_share"], "preflight")
    m = curve["multiplier"].to_list()
    asked = settings.gen / settings.train_batch_size
    look = look_of(style)
    with house_style(look):
        fig = new_figure(DOUBLE_COLUMN, PANEL_HEIGHT, look, panels=2)
        left, right = fig.subplots(*look.grid(2))
        plot = Plot("preflight", fig, _caption(settings, source, estimator, look.sides), look=look)
        crash = curve["p_crash_run"].to_list()
        (line,) = left.plot(m, crash, color=BLACK, marker="o", markersize=2.5)
        plot.line(line, "P(crash over the run)", "multiplier", "p_crash_run", m, crash)
        left.axhline(settings.risk, color=VERMILLION, linestyle="--", linewidth=1.0)
        left.set_ylabel("P(crash over the run)")
        left.set_ylim(-0.02, 1.02)
        waste = curve["waste_share"].to_list()
        (wline,) = right.plot(m, waste, color=BLACK, marker="o", markersize=2.5)
        plot.line(wline, "waste", "multiplier", "waste_share", m, waste)
        right.set_ylabel("generated rollouts thrown away")
        percent_axis(right)
        right.set_ylim(0.0, 1.02)
        for ax in (left, right):
            ax.axvline(asked, color=GREY, linestyle=":", linewidth=1.0)
            ax.set_xlabel("gen_batch_size ÷ train_batch_size")
        if look.captions(caption):
            add_caption(fig, plot.caption, look)
    return plot

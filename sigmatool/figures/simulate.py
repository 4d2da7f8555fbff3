"""The controlled run: silent fraction measured against predicted, and the hardest quartile's p per step."""

from __future__ import annotations

import polars as pl

from sigmatool.figures.plot import Plot, drawing
from sigmatool.figures.style import (
    BLACK,
    DOUBLE_COLUMN,
    GREY,
    GROUP_COLOURS,
    MARKERS,
    METHOD_COLOURS,
    METHOD_LABELS,
    legend_above,
    percent_axis,
    require,
)

COLUMNS = ("step", "method", "observed_silent", "predicted_silent", "q1_mean_p")


def _key(frame: pl.DataFrame) -> str:
    """What tells the lines apart: the update rule, or with a plan (``strategy``) the planned and uniform
    runs of one rule."""
    return "strategy" if "strategy" in frame.columns else "method"


def _r2(summary: pl.DataFrame | None) -> dict[str, float]:
    if summary is None or "silent_r2" not in summary.columns:
        return {}
    key = _key(summary)
    return {
        str(r[key]): float(r["silent_r2"])
        for r in summary.iter_rows(named=True)
        if r["silent_r2"] is not None
    }


def _look(key: str, value: str, m: int) -> tuple[str, str]:
    """The colour and legend name of a line."""
    if key == "method":
        return METHOD_COLOURS.get(value, BLACK), METHOD_LABELS.get(value, value)
    return GROUP_COLOURS[m % len(GROUP_COLOURS)], value


def _caption(steps: int, source: str, sides: tuple[str, str]) -> str:
    return (
        f"Controlled run ({steps} steps): {sides[0]}, each step's share of silent groups against the "
        f"closed-form prediction mean p^G + (1 − p)^G at the step's p; {sides[1]}, the mean pass rate of the "
        "prompts that started in the hardest quartile." + (f" Start population: {source}." if source else "")
    )


def simulate_figure(
    trace: pl.DataFrame,
    summary: pl.DataFrame | None = None,
    *,
    source: str = "",
    caption: bool | None = None,
    style: str = "screen",
) -> Plot:
    """Left: each step's observed silent fraction against the predicted mean P_silent, per method (the
    diagonal is a perfect prediction; R² from ``summary`` in the legend). Right: the mean p of the hardest
    start quartile per step and method (with a plan, per strategy: planned sizes against uniform G).

    ``trace`` and ``summary`` are the two frames of :func:`sigmatool.simulate.simulate`.
    """
    require(trace, COLUMNS, "simulate")
    r2 = _r2(summary)
    key = _key(trace)
    methods = trace[key].unique(maintain_order=True).to_list()
    steps = int(trace["step"].max())  # type: ignore[arg-type]
    with drawing("simulate", DOUBLE_COLUMN, panels=2, style=style, caption=caption) as plot:
        left, right = plot.figure.subplots(*plot.look.grid(2))
        top = max(float(trace["observed_silent"].max()), float(trace["predicted_silent"].max()))  # type: ignore[arg-type]
        left.plot([0, top], [0, top], color=GREY, linestyle="--", linewidth=0.8, label="observed = predicted")
        for m, method in enumerate(methods):
            rows = trace.filter(pl.col(key) == method).sort("step")
            colour, name = _look(key, method, m)
            shown = f"{name} (R² = {r2[method]:.3f})" if method in r2 else name
            x, y = rows["predicted_silent"].to_list(), rows["observed_silent"].to_list()
            (dots,) = left.plot(
                x,
                y,
                linestyle="none",
                marker=MARKERS[m % len(MARKERS)],
                markersize=2.2,
                color=colour,
                label=shown,
            )
            plot.line(dots, f"silent · {name}", "predicted_silent", "observed_silent", x, y, percent=True)
            steps_x, q1 = rows["step"].to_list(), rows["q1_mean_p"].to_list()
            (line,) = right.plot(steps_x, q1, color=colour, label=name)
            plot.line(line, f"hardest quartile · {name}", "step", "q1_mean_p", steps_x, q1)
        for axis in ("x", "y"):
            percent_axis(left, axis)
        left.set_xlabel("predicted silent groups (%)")
        left.set_ylabel("observed silent groups (%)")
        legend_above(left, ncols=1 if plot.look.stacked else 2)  # R² makes the entries long
        right.set_xlabel("training step")
        right.set_ylabel("hardest start quartile: mean p")
        right.set_ylim(0, 1)
        legend_above(right, ncols=3)
        plot.caption = _caption(steps, source, plot.look.sides)
    return plot

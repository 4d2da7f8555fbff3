"""Tracking a real run: the silent fraction measured at each step against what the pass rates predict."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from sigmatool.figures.plot import Plot, drawing
from sigmatool.figures.style import (
    BLACK,
    LIGHT,
    SINGLE_COLUMN,
    drawn,
    group_looks,
    groups,
    legend_above,
    percent_axis,
    require,
)

COLUMNS = ("step", "measured_silent", "expected_silent")
BAND = ("expected_silent_lo", "expected_silent_hi")


def track_figure(
    frame: pl.DataFrame,
    *,
    by: Sequence[str] = (),
    source: str = "",
    z: float | None = None,
    caption: bool | None = None,
    style: str = "screen",
) -> Plot:
    """Measured against expected silent fraction per training step.

    Input contract, one row per step (and ``by`` group), ordered by step within a group:

    - ``step`` (integer): the training step.
    - ``measured_silent`` (float in [0, 1]): the share of the step's groups whose rewards were all equal.
    - ``expected_silent`` (float in [0, 1]): the prompt-weighted mean of ``p^G + (1 − p)^G`` at the
      step's prompts and G.
    - optional ``expected_silent_lo``, ``expected_silent_hi`` (float): a band around the expectation
      (for instance a 95 % interval of the measured share), shaded; ``z``: the band is ± z binomial
      standard deviations of the step's groups (the caption says so).

    Null expected values are not drawn: a run with no expectation at all shows its measured share alone.
    """
    require(frame, [*by, *COLUMNS], "track")
    frame, left_out = drawn(frame, by)
    compared = frame["expected_silent"].is_not_null().any()
    band = compared and all(c in frame.columns for c in BAND)
    with drawing("track", SINGLE_COLUMN, style=style, caption=caption) as plot:
        ax = plot.figure.subplots()
        for label, part in (parts := groups(frame.sort([*by, "step"], maintain_order=True), by)):
            colour = group_looks([name for name, _ in parts])[label][0] if by else BLACK
            suffix = f" · {label}" if label else ""
            if compared:
                known = part.filter(pl.col("expected_silent").is_not_null())
                _expected(ax, plot, known, colour, suffix, band=band, grouped=bool(by))
            steps = part["step"].cast(pl.Float64).to_list()
            measured = part["measured_silent"].to_list()
            (dots,) = ax.plot(
                steps,
                measured,
                color=colour,
                marker="o",
                markersize=2.2,
                linewidth=0.6,
                label=f"measured{suffix}",
            )
            plot.line(dots, f"measured{suffix}", "step", "measured_silent", steps, measured, percent=True)
        percent_axis(ax)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("training step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("silent groups (%)")
        legend_above(ax)
        plot.caption = _caption(compared, band, z, source) + left_out
    return plot


def _expected(
    ax: Axes, plot: Plot, part: pl.DataFrame, colour: str, suffix: str, *, band: bool, grouped: bool
) -> None:
    """The expected line of one group's steps that have an expectation, and its band."""
    steps = part["step"].cast(pl.Float64).to_list()
    if band:
        lo, hi = part["expected_silent_lo"].to_list(), part["expected_silent_hi"].to_list()
        ax.fill_between(
            steps, lo, hi, color=colour if grouped else LIGHT, alpha=0.25 if grouped else 1.0, linewidth=0
        )
    expected = part["expected_silent"].to_list()
    (line,) = ax.plot(steps, expected, color=colour, linestyle="--", label=f"expected{suffix}")
    plot.line(line, f"expected{suffix}", "step", "expected_silent", steps, expected, percent=True)


def _caption(compared: bool, band: bool, z: float | None, source: str) -> str:
    what = (
        "Silent groups per training step: measured (dots) against expected from the prompts' pass rates, "
        "mean p^G + (1 − p)^G (dashed)"
        if compared
        else "Silent groups per training step, measured (no group has an expected silent probability)"
    )
    return (
        what + (f"; shaded: {_band_text(z)}" if band else "") + "." + (f" Data: {source}." if source else "")
    )


def _band_text(z: float | None) -> str:
    """What the shaded band is, in the caption."""
    if z is None:
        return "the expected band"
    return (
        f"expected ± {z:g} binomial standard deviations of the step's groups (a dot outside is as far out "
        "as the drift rule asks)"
    )

"""Required group size against p: the exact steps and the closed-form law, over the prompts' histogram of p."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from sigmatool import kernels
from sigmatool.figures.difficulty import draw_difficulty
from sigmatool.figures.plot import Plot
from sigmatool.figures.style import (
    BLACK,
    GREY,
    PANEL_HEIGHT,
    SINGLE_COLUMN,
    VERMILLION,
    add_caption,
    house_style,
    log_count_axis,
    new_figure,
    require,
)
from sigmatool.groupsize import group_size_table
from sigmatool.options import GroupSizeOptions

CURVE_POINTS = 1999


def groupsize_curve(
    options: GroupSizeOptions, points: int = CURVE_POINTS, span: tuple[float, float] | None = None
) -> pl.DataFrame:
    """:func:`sigmatool.groupsize.group_size_table` on an even grid of p: the curve to draw.

    The grid is ``i / (points + 1)``, i = 1 … points (2.5e-4 apart by default), fine enough that the exact
    G's steps show where they fall; with ``span = (lo, hi)``, ``points`` rates evenly from lo to hi, both
    included (see :func:`interior_span`).
    """
    if span is None:
        grid = np.arange(1, points + 1, dtype=np.float64) / (points + 1)
    else:
        grid = np.linspace(span[0], span[1], points, dtype=np.float64)
    return group_size_table(pl.DataFrame({"p": grid}), options)


def interior_span(hist: pl.DataFrame) -> tuple[float, float] | None:
    """The smallest and largest pass rate strictly between 0 and 1 in the histogram (None if there is none).

    Drawn over this span, the curve covers every prompt that has a group size, and its tails, where the
    exact G runs into the thousands and costs most to compute, stop where the data does.
    """
    inside = hist.filter((pl.col("p") > 0.0) & (pl.col("p") < 1.0))["p"]
    if inside.is_empty():
        return None
    return float(inside.min()), float(inside.max())  # type: ignore[arg-type]


def _caption(options: GroupSizeOptions, source: str, by: Sequence[str]) -> str:
    eps = 1.0 - options.target
    if options.method == "drgrpo":
        rule = "Dr. GRPO's fidelity 1 − 1/G"
    else:
        rule = f"GRPO's fidelity E[σ]/√(p(1−p)), {options.std} std"
    law = f"; dashed: the law 1/(8εp(1−p)), ε = {eps:.3g}" if options.method == "grpo" else ""
    silent = f" and at most {100 * options.max_silent:g} % silent groups" if options.max_silent else ""
    return (
        f"Smallest G ≥ {options.min_size} (exact; solid steps) at which a prompt of pass rate p reaches "
        f"fidelity φ* = {options.target:g} ({rule}{silent}){law}; dotted: the uniform G = {options.uniform}. "
        f"Beneath: the prompts' pass rates{' per ' + ' · '.join(by) if by else ''}. Prompts at p = 0 or 1, "
        f"or needing G > {options.max_size}, are unreachable." + (f" Data: {source}." if source else "")
    )


def groupsize_figure(
    curve: pl.DataFrame,
    hist: pl.DataFrame,
    *,
    options: GroupSizeOptions | None = None,
    by: Sequence[str] = (),
    bins: int | None = None,
    source: str = "",
    caption: bool = True,
) -> Plot:
    """Required G against p, with the prompts' histogram of p beneath on the same axis.

    ``curve`` has ``p`` and ``group_size`` (null where unreachable): :func:`groupsize_curve` with the same
    ``options``, or :func:`sigmatool.groupsize.group_size_table` of the data's own rates. ``hist`` is the
    histogram frame (``[by…]``, ``p``, ``prompts``); with ``by``, one outline per group beneath.
    """
    o = options or GroupSizeOptions()
    require(curve, ["p", "group_size"], "groupsize")
    require(hist, [*by, "p", "prompts"], "groupsize")
    curve = curve.sort("p")
    p = curve["p"].cast(pl.Float64).to_numpy()
    G = curve["group_size"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    with house_style():
        fig = new_figure(SINGLE_COLUMN, PANEL_HEIGHT * 1.55)
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(2.2, 1.0))
        plot = Plot("groupsize", fig, _caption(o, source, by))
        (exact,) = top.plot(p, G, drawstyle="steps-mid", color=BLACK, label=f"exact G (φ* = {o.target:g})")
        plot.line(exact, "exact G", "p", "group_size", p.tolist(), G.tolist())
        if o.method == "grpo":
            law = kernels.group_size_law(p, o.target)
            (line,) = top.plot(p, law, color=VERMILLION, linestyle="--", label="law 1/(8εp(1−p))")
            plot.line(line, "law", "p", "group_size_law", p.tolist(), law.tolist())
        top.axhline(o.uniform, color=GREY, linestyle=":", linewidth=1.0, label=f"uniform G = {o.uniform}")
        log_count_axis(top)
        finite = G[np.isfinite(G)]
        top.set_ylim(max(1.0, 0.8 * o.min_size), float(finite.max()) * 1.25 if finite.size else o.max_size)
        top.set_ylabel("group size G (answers)")
        top.legend(loc="upper center")
        draw_difficulty(plot, bottom, hist, by, bins)
        bottom.set_xlim(0.0 - 0.02, 1.0 + 0.02)
        if caption:
            add_caption(fig, plot.caption)
    return plot

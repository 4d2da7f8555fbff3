"""Required group size against p: the exact steps and the closed-form law, over the prompts' histogram of p."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from sigmatool import kernels
from sigmatool.figures.difficulty import draw_difficulty
from sigmatool.figures.plot import Plot, drawing
from sigmatool.figures.style import (
    BLACK,
    GREY,
    PANEL_HEIGHT,
    SINGLE_COLUMN,
    VERMILLION,
    drawn,
    legend_at,
    log_count_axis,
    require,
)
from sigmatool.options import GroupSizeOptions

__all__ = ["groupsize_figure"]


def _caption(options: GroupSizeOptions, source: str, by: Sequence[str], estimator: str = "plug-in") -> str:
    eps = 1.0 - options.target
    if options.method == "drgrpo":
        rule = "Dr. GRPO's fidelity 1 − 1/G"
    else:
        rule = f"GRPO's fidelity E[σ]/√(p(1−p)), {options.std} std"
    law = f"; dashed: the law 1/(8εp(1−p)), ε = {eps:.3g}" if options.method == "grpo" else ""
    silent = f" and at most {100 * options.max_silent:g} % silent groups" if options.max_silent else ""
    beneath = f"Beneath: the prompts' pass rates{' per ' + ' · '.join(by) if by else ''}."
    data = f" Data: {source}." if source else ""
    if estimator.endswith("beyond n"):
        return (
            f"Estimator: {estimator}. Grey steps: the exact G at p̂, which sizes every count whose G lies "
            f"within its n samples (φ* = {options.target:g}, {rule}{silent}). Points: each count k of n that "
            f"needs more, at its p̂, with the smallest G > n at which its posterior-expected update reaches φ* "
            f"of its G = ∞ value (unreachable or not identified counts not drawn). Dotted: the uniform "
            f"G = {options.uniform}. {beneath}{data}"
        )
    if estimator != "plug-in":
        return (
            f"Estimator: {estimator}. Points: each distinct count k of n at its p̂, with the smallest "
            f"G ≥ {options.min_size} at which its posterior-expected update reaches φ* = {options.target:g} "
            f"of its G = ∞ value ({rule}{silent}): the sizes the table counts (unreachable counts not drawn). "
            f"Grey steps: the exact G if p were known to be p̂ (the plug-in); dotted: the uniform "
            f"G = {options.uniform}. {beneath}{data}"
        )
    return (
        f"Smallest G ≥ {options.min_size} (exact; solid steps) at which a prompt of pass rate p reaches "
        f"fidelity φ* = {options.target:g} ({rule}{silent}){law}; dotted: the uniform G = {options.uniform}. "
        f"{beneath} Prompts at p = 0 or 1, or needing G > {options.max_size}, are unreachable.{data}"
    )


def groupsize_figure(
    curve: pl.DataFrame,
    hist: pl.DataFrame,
    *,
    options: GroupSizeOptions | None = None,
    by: Sequence[str] = (),
    bins: int | None = None,
    source: str = "",
    caption: bool | None = None,
    points: pl.DataFrame | None = None,
    estimator: str = "plug-in",
    style: str = "screen",
) -> Plot:
    """Required G against p, with the prompts' histogram of p beneath on the same axis.

    ``curve`` has ``p`` and ``group_size`` (null where unreachable): :func:`sigmatool.groupsize.groupsize_curve` with the same
    ``options``, or :func:`sigmatool.groupsize.group_size_table` of the data's own rates. ``hist`` is the
    histogram frame (``[by…]``, ``p``, ``prompts``); with ``by``, one outline per group beneath. Under a
    prior, ``points`` (``p``, ``group_size``: each count's posterior G) are what the table counts: drawn as
    markers, with the plug-in curve in grey for reference, and ``estimator`` names the prior.
    """
    o = options or GroupSizeOptions()
    require(curve, ["p", "group_size"], "groupsize")
    require(hist, [*by, "p", "prompts"], "groupsize")
    hist, left_out = drawn(hist, by)
    curve = curve.sort("p")
    p = curve["p"].cast(pl.Float64).to_numpy()
    G = curve["group_size"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    with drawing("groupsize", SINGLE_COLUMN, PANEL_HEIGHT * 1.55, style=style, caption=caption) as plot:
        top, bottom = plot.figure.subplots(2, 1, sharex=True, height_ratios=(2.2, 1.0))
        plot.caption = _caption(o, source, by, estimator) + left_out
        posterior = points is not None
        plug_in = f"plug-in exact G (φ* = {o.target:g})" if posterior else f"exact G (φ* = {o.target:g})"
        (exact,) = top.plot(p, G, drawstyle="steps-mid", color=GREY if posterior else BLACK, label=plug_in)
        plot.line(exact, "exact G", "p", "group_size", p.tolist(), G.tolist())
        if points is not None:
            finite = points.filter(pl.col("group_size").is_not_null())
            px = finite["p"].cast(pl.Float64).to_numpy()
            py = finite["group_size"].cast(pl.Float64).to_numpy()
            dots = top.scatter(px, py, s=9, color=BLACK, zorder=3, label=f"posterior G ({estimator})")
            plot.line(dots, "posterior G", "p", "group_size", px.tolist(), py.tolist())
            G = np.concatenate([G, py])
        elif o.method == "grpo":
            law = kernels.group_size_law(p, o.target)
            (line,) = top.plot(p, law, color=VERMILLION, linestyle="--", label="law 1/(8εp(1−p))")
            plot.line(line, "law", "p", "group_size_law", p.tolist(), law.tolist())
        top.axhline(o.uniform, color=GREY, linestyle=":", linewidth=1.0, label=f"uniform G = {o.uniform}")
        log_count_axis(top)
        finite = G[np.isfinite(G)]
        top.set_ylim(max(1.0, 0.8 * o.min_size), float(finite.max()) * 1.25 if finite.size else o.max_size)
        top.set_ylabel("group size G (answers)")
        legend_at(top, "upper center", plot.look)
        draw_difficulty(plot, bottom, hist, by, bins)
        bottom.set_xlim(0.0 - 0.02, 1.0 + 0.02)
    return plot

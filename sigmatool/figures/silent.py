"""Silent groups against group size G: the silent share, its all-right / all-wrong split, the always-silent floor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.typing import LineStyleType

from sigmatool.errors import UsageError
from sigmatool.figures.plot import Plot, drawing
from sigmatool.figures.style import (
    BLACK,
    DASHES,
    DOUBLE_COLUMN,
    ESTIMATOR_LABELS,
    GREEN,
    GREY,
    SINGLE_COLUMN,
    VERMILLION,
    drawn,
    group_looks,
    groups,
    legend_above,
    legend_at,
    log2_axis,
    percent_axis,
    require,
)

COLUMNS = ("G", "prompts", "silent_rate", "all_right_rate", "all_wrong_rate", "always_silent_share")
X_LABEL = "group size G (answers per group)"
Y_LABEL = "groups (%)"
# With --by, the right panel's lines of each group: (column, name, marker, dash).
SPLIT: tuple[tuple[str, str, str, LineStyleType], ...] = (
    ("all_right_rate", "all right", "^", "--"),
    ("all_wrong_rate", "all wrong", "v", ":"),
)


def _frames(summaries: pl.DataFrame | Mapping[str, pl.DataFrame], estimator: str) -> dict[str, pl.DataFrame]:
    frames = {estimator: summaries} if isinstance(summaries, pl.DataFrame) else dict(summaries)
    if not frames:
        raise UsageError("the silent figure needs at least one summary")
    return frames


def _observed(frame: pl.DataFrame) -> bool:
    """Whether the summary's always-silent share is what counts show (prompts never or always right in their
    n samples), not a property of p: counts valued without a prior (the ``estimator`` column)."""
    if "estimator" not in frame.columns:
        return False
    return any(e != "plug-in" and not e.startswith("prior") for e in frame["estimator"].drop_nulls())


def _caption(
    frames: Mapping[str, pl.DataFrame], by: Sequence[str], source: str, marked: Sequence[float]
) -> str:
    names = ", ".join(ESTIMATOR_LABELS.get(e, e) for e in frames)
    first = next(iter(frames.values()))
    size = "" if by else f" over {float(first['prompts'][0]):,.0f} prompts"
    posterior = any(e.startswith("prior") for e in frames)
    mean = (
        "each prompt's posterior mean of p^G + (1 − p)^G given its k of n" if posterior else "p^G + (1 − p)^G"
    )
    floor = (
        "the prompts never or always right in their samples (silent at every G up to their n)"
        if _observed(first)
        else "the prompts silent at every G (p = 0 or 1)"
    )
    text = (
        "Share of groups of G answers that are silent (σ = 0: all right or all wrong), the mean of "
        f"{mean}{size}; estimator: {names}. Dotted: {floor}."
    )
    if by:
        text += f" One line per {' · '.join(by)}."
    if marked:
        text += f" Dashed grey verticals: the G asked for ({', '.join(f'{G:g}' for G in marked)})."
    return text + (f" Data: {source}." if source else "")


def _line(
    plot: Plot, ax: Axes, part: pl.DataFrame, column: str, label: str, legend: bool = True, **style: object
) -> None:
    G = part["G"].cast(pl.Float64).to_list()
    y = part[column].cast(pl.Float64).to_list()
    # matplotlib leaves labels starting with "_" out of the legend.
    (line,) = ax.plot(G, y, label=label if legend else f"_{label}", **style)  # type: ignore[arg-type]
    plot.line(line, label, "G", column, G, y, percent=True)


def _overall(plot: Plot, ax: Axes, frame: pl.DataFrame, suffix: str, dash: str, floor: bool) -> None:
    """Without --by: silent, all right and all wrong in one panel, and the floor."""
    _line(plot, ax, frame, "silent_rate", f"silent{suffix}", color=BLACK, marker="o", linestyle=dash)
    _line(plot, ax, frame, "all_right_rate", f"all right{suffix}", color=GREEN, marker="^", linestyle=dash)
    _line(
        plot, ax, frame, "all_wrong_rate", f"all wrong{suffix}", color=VERMILLION, marker="v", linestyle=dash
    )
    if floor:
        label = "never or always right" if _observed(frame) else "silent at every G"
        _line(plot, ax, frame, "always_silent_share", label, color=GREY, linestyle=":")


def _grouped(
    plot: Plot, axes: Sequence[Axes], frame: pl.DataFrame, by: Sequence[str], suffix: str, e: int
) -> None:
    """With --by: silent per group (and its floor) on the left, the split per group on the right."""
    parts = groups(frame, by)
    looks = group_looks([label for label, _ in parts])
    for label, part in parts:
        colour, dash, marker = looks[label]
        dash = DASHES[e] if e else dash
        silent = f"silent{suffix} · {label}"
        _line(plot, axes[0], part, "silent_rate", silent, color=colour, marker=marker, linestyle=dash)
        if e == 0:
            style = {"color": colour, "linestyle": ":", "linewidth": 0.8}
            floor = "never or always right" if _observed(part) else "silent at every G"
            _line(plot, axes[0], part, "always_silent_share", f"{floor} · {label}", False, **style)
            # The split is drawn for the first estimator only: two estimators would double the lines.
            for column, name, mark, line in SPLIT:
                split = f"{name} · {label}"
                _line(plot, axes[1], part, column, split, color=colour, marker=mark, linestyle=line)
    if e == 0:
        legend_at(axes[0], "upper right", plot.look, beside=True)
        keys = [Line2D([], [], color=BLACK, linestyle=line, marker=mark) for _, _, mark, line in SPLIT]
        legend_at(
            axes[1], "upper right", plot.look, True, handles=keys, labels=[name for _, name, _, _ in SPLIT]
        )


def silent_figure(
    summaries: pl.DataFrame | Mapping[str, pl.DataFrame],
    *,
    by: Sequence[str] = (),
    estimator: str = "plugin",
    marked: Sequence[float] = (),
    source: str = "",
    caption: bool | None = None,
    style: str = "screen",
) -> Plot:
    """Silent share against G (log axis), split into all right / all wrong, with the always-silent floor.

    ``summaries`` is :func:`sigmatool.silent.summarize` output without bins (usually over a grid of G such as
    2, 4, …, 256), or a mapping estimator name → summary to compare estimators (dashes tell them apart).
    With ``by``, one line per group, and the split in a second panel. ``marked`` G (the ones a user asked
    for) get a thin vertical line. ``style``: ``screen`` or ``paper`` (see :mod:`sigmatool.figures.style`).
    """
    frames = _frames(summaries, estimator)
    for frame in frames.values():
        require(frame, [*by, *COLUMNS], "silent")
        if "p_lo" in frame.columns:
            raise UsageError("the silent figure plots a summary without bins of p (no --by-bins)")
    subsets = {name: drawn(frame, by) for name, frame in frames.items()}
    frames = {name: part for name, (part, _) in subsets.items()}
    left_out = next(iter(subsets.values()))[1]
    panels = 2 if by else 1
    width = DOUBLE_COLUMN if by else SINGLE_COLUMN
    with drawing("silent", width, panels=panels, style=style, caption=caption) as plot:
        grid = plot.look.grid(panels)
        axes = list(plot.figure.subplots(*grid, squeeze=False, sharey=True).ravel())
        plot.caption = _caption(frames, by, source, marked) + left_out
        several = len(frames) > 1
        for e, (name, frame) in enumerate(frames.items()):
            suffix = f" ({ESTIMATOR_LABELS.get(name, name)})" if several else ""
            if by:
                _grouped(plot, axes, frame, by, suffix, e)
            else:
                _overall(plot, axes[0], frame, suffix, DASHES[e % len(DASHES)], e == 0)
        sizes = [g for f in frames.values() for g in f["G"].cast(pl.Float64).to_list()]
        for ax in axes:
            for G in marked:
                ax.axvline(G, color=GREY, linewidth=0.7, linestyle="--", zorder=1)
            log2_axis(ax, sizes)
            percent_axis(ax)
            ax.set_ylim(bottom=0)
            ax.set_xlabel(X_LABEL)
        axes[0].set_ylabel(Y_LABEL)
        if by:
            axes[0].set_title("silent groups")
            axes[1].set_title("all right and all wrong")
        else:
            legend_above(axes[0])
    return plot

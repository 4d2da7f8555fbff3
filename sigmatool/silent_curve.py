"""The silent share over a grid of G around the asked sizes: the table's sparkline and ``--plot``'s figure."""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from sigmatool.options import MAX_G, PriorSpec, SilentOptions, g_label
from sigmatool.render.spark import Sparkline
from sigmatool.silent import summarize


def grid(sizes: Sequence[float], most: float = MAX_G) -> tuple[float, ...]:
    """The G a figure or sparkline of the silent share shows around the asked ``sizes``: the powers of two
    that span a quarter of the smallest to four times the largest (none below 2 or above ``most``), and
    ``sizes`` themselves.

    >>> grid([8])
    (2.0, 4.0, 8.0, 16.0, 32.0)
    >>> grid([6, 64], most=100)
    (2.0, 4.0, 6.0, 8.0, 16.0, 32.0, 64.0)
    """
    low = math.floor(math.log2(min(sizes))) - 2
    high = math.ceil(math.log2(max(sizes))) + 2
    powers = [float(2**e) for e in range(max(low, 1), high + 1) if 2**e <= most]
    return tuple(sorted({*powers, *(float(G) for G in sizes)}))


def grid_for(hist: pl.DataFrame | pl.LazyFrame, options: SilentOptions) -> tuple[float, ...]:
    """:func:`grid` for these options; the unbiased estimator stops at the fewest logged samples n."""
    most = float(MAX_G)
    if options.estimator == "unbiased" and isinstance(hist, pl.DataFrame) and "n" in hist.columns:
        most = min(most, float(hist["n"].min()))  # type: ignore[arg-type]
    return grid(options.sizes, most)


def curve(
    hist: pl.DataFrame | pl.LazyFrame,
    options: SilentOptions,
    by: Sequence[str] = (),
    prior: PriorSpec | None = None,
) -> pl.DataFrame:
    """The silent summary (per ``by`` group) at every G of :func:`grid_for`, with the options' estimator."""
    sizes = grid_for(hist, options)
    return summarize(hist, by, sizes, estimator=options.estimator, prior=prior)


def sparkline(hist: pl.DataFrame, options: SilentOptions, prior: PriorSpec | None = None) -> Sparkline:
    """The silent share over all prompts against G, on :func:`grid_for`'s sizes, for the table view."""
    summary = curve(hist, options, (), prior)
    labels = tuple(g_label(G) for G in summary["G"])
    return Sparkline("silent vs G", "G", labels, tuple(summary["silent_rate"]))

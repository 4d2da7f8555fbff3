"""Plain lines under a table that says what its bounds and intervals are, and what the data leave open."""

from __future__ import annotations

import polars as pl

from sigmatool.estimators.value import Valuation
from sigmatool.options import BOUNDS_LEVEL, BeyondOptions, g_label


def identification(hist: pl.DataFrame, summary: pl.DataFrame) -> list[str]:
    """Which rows' rates the logged samples pin down, from the summary's ``identified`` column."""
    if "identified" not in summary.columns:
        return []
    n = int(hist["n"].max())  # type: ignore[arg-type]
    if "p_lo" in summary.columns:
        return [
            "within a bin of p̂ no rate is identified by the data, at any G: the bounds are what it can be"
        ]
    open_sizes = summary.filter(~pl.col("identified"))["G"].unique(maintain_order=True).to_list()
    if not open_sizes:
        return [f"identified: n = {n} samples per prompt pin these rates down up to sampling error (G ≤ n)"]
    sizes = ", ".join(g_label(float(G)) for G in open_sizes)
    return [
        f"G = {sizes} > n = {n}: these rates are not identified by the data; the bounds are what they can be"
    ]


def range_notes(
    hist: pl.DataFrame, summary: pl.DataFrame, beyond: BeyondOptions, val: Valuation | None
) -> list[str]:
    """Footer lines for --bounds and --ci."""
    lines = []
    if beyond.bounds:
        lines.append(
            "lowest, highest (--bounds): over every pass-rate distribution whose k-histogram matches the "
            f"data's within sampling error ({100 * BOUNDS_LEVEL:g}% χ² region)"
        )
        lines += identification(hist, summary)
    if beyond.ci is not None:
        refit = "; the prior is refitted in each" if val is not None and val.posterior else ""
        lines.append(
            f"CI low, CI high (--ci {beyond.ci:g}): percentile bootstrap over prompts, "
            f"{beyond.replicate_count:,} replicates with seed {beyond.seed_value}{refit}"
        )
    return lines

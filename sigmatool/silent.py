"""Silent groups: the share of size-G groups that are all right or all wrong (σ = 0), and DAPO's cost.

Columns of the summary, in order: [--by columns], ``G``, [``p_lo``, ``p_hi`` with bins], ``prompts``,
``silent_rate``, ``all_right_rate``, ``all_wrong_rate``, ``always_silent_share``, ``dapo_draws_per_group``,
``dapo_draws_per_group_learnable``; with a DAPO cap also ``dapo_unfilled_rate``.
Per-prompt columns: [--by columns], ``id``, ``p``, ``G``, ``p_silent``, ``p_all_right``, ``p_all_wrong``,
``dapo_expected_draws``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl

from sigmatool import kernels
from sigmatool.estimators import check_estimator
from sigmatool.load import Dataset, per_prompt_frame
from sigmatool.options import MAX_G, SilentOptions, g_label
from sigmatool.render import View
from sigmatool.render.spark import Sparkline
from sigmatool.segments import all_bins, with_bins

PER_GROUP = ("p_silent", "p_all_right", "p_all_wrong", "dapo_expected_draws")


def weighted_mean(value: str, weight: str = "prompts") -> pl.Expr:
    """Σ w·x / Σ w over the group; null for an empty group."""
    total = pl.col(weight).sum()
    return (
        pl.when(total > 0).then((pl.col(value) * pl.col(weight)).sum() / total).otherwise(None).alias(value)
    )


def silent_kernels(
    values: pl.DataFrame, sizes: Sequence[float], estimator: str, cap: int | None
) -> pl.DataFrame:
    """Per row of ``values`` and G: silent, all-right, all-wrong probabilities and DAPO's expected draws.

    The kernels are elementwise, so they run on the rows as given, in their order (G-major): pass distinct
    values to compute each once.
    """
    parts = []
    for G in sizes:
        size = int(G)
        if estimator == "unbiased":
            k, n = values["k"].to_numpy(), values["n"].to_numpy()
            right = kernels.all_right_probability_unbiased(k, n, size)
            wrong = kernels.all_wrong_probability_unbiased(k, n, size)
        else:
            p = values["p"].to_numpy()
            right = kernels.all_right_probability(p, size)
            wrong = kernels.all_wrong_probability(p, size)
        silent = np.asarray(right + wrong, dtype=np.float64)
        parts.append(
            values.with_columns(
                pl.lit(size, dtype=pl.Int64).alias("G"),
                pl.Series("p_silent", silent),
                pl.Series("p_all_right", np.asarray(right, dtype=np.float64)),
                pl.Series("p_all_wrong", np.asarray(wrong, dtype=np.float64)),
                pl.Series(
                    "dapo_expected_draws",
                    np.asarray(kernels.dapo_expected_draws(silent, cap), dtype=np.float64),
                ),
            )
        )
    return pl.concat(parts)


def _dapo_draws(rate: pl.Series, cap: int | None) -> pl.Series:
    return pl.Series(
        np.asarray(kernels.dapo_expected_draws(rate.fill_null(np.nan).to_numpy(), cap), dtype=np.float64)
    )


def summarize(
    hist: pl.DataFrame,
    by: Sequence[str],
    sizes: Sequence[float],
    *,
    estimator: str = "plugin",
    cap: int | None = None,
    bins: int | None = None,
) -> pl.DataFrame:
    """Silent-group summary per G (and per ``--by`` group, and per bin of p when ``bins`` is given)."""
    check_estimator(hist, sizes, estimator)
    # The histogram's fixed row order, kept inside each group, makes the float sums, and so the output,
    # identical for every form of the same data (expanded rows, a weighted histogram, a rollout log).
    base = hist.with_columns(pl.col("p").is_in([0.0, 1.0]).alias("__always"))
    keys = [*by, "G"]
    if bins is not None:
        base = with_bins(base, bins)
        keys.append("bin")
    learnable = pl.col("prompts").filter(~pl.col("__always"))
    aggs = [
        pl.col("prompts").sum(),
        weighted_mean("p_silent").alias("silent_rate"),
        weighted_mean("p_all_right").alias("all_right_rate"),
        weighted_mean("p_all_wrong").alias("all_wrong_rate"),
        (pl.col("prompts").filter(pl.col("__always")).sum() / pl.col("prompts").sum()).alias(
            "always_silent_share"
        ),
        ((pl.col("p_silent") * pl.col("prompts")).filter(~pl.col("__always")).sum() / learnable.sum()).alias(
            "__learnable_silent"
        ),
    ]
    # One G at a time: memory stays at the histogram's size, however many group sizes are asked for.
    out = pl.concat(
        silent_kernels(base, [G], estimator, cap).group_by(keys, maintain_order=True).agg(aggs) for G in sizes
    )
    if bins is not None:
        grid = all_bins(bins, out.select(keys[:-1]).unique())
        out = grid.join(out, on=keys, how="left").with_columns(pl.col("prompts").fill_null(0))
    out = out.with_columns(
        _dapo_draws(out["silent_rate"], cap).alias("dapo_draws_per_group"),
        _dapo_draws(out["__learnable_silent"], cap).alias("dapo_draws_per_group_learnable"),
    )
    columns = [
        *by,
        "G",
        *(["p_lo", "p_hi"] if bins is not None else []),
        "prompts",
        "silent_rate",
        "all_right_rate",
        "all_wrong_rate",
        "always_silent_share",
        "dapo_draws_per_group",
        "dapo_draws_per_group_learnable",
    ]
    if cap is not None:
        out = out.with_columns((pl.col("silent_rate") ** cap).alias("dapo_unfilled_rate"))
        columns.append("dapo_unfilled_rate")
    sort_keys = [*by, "G", *(["bin"] if bins is not None else [])]
    return out.sort(sort_keys, maintain_order=True).select(columns)


def per_prompt(
    ds: Dataset,
    hist: pl.DataFrame,
    sizes: Sequence[float],
    *,
    estimator: str = "plugin",
    cap: int | None = None,
) -> pl.LazyFrame:
    """One row per input prompt and G, streamed: the kernels are joined onto the rows by distinct value.

    Rows are matched to the kernel table by their counts (k, n) when they have them, else by p̂.
    """
    check_estimator(hist, sizes, estimator)
    join = ["k", "n"] if ds.has_counts else ["__p"]
    distinct = hist.select(["k", "n", "p"] if ds.has_counts else ["p"]).unique(maintain_order=True)
    table = silent_kernels(distinct, sizes, estimator, cap)
    if not ds.has_counts:
        table = table.rename({"p": "__p"})
    prompts = per_prompt_frame(ds).join(
        pl.LazyFrame({"G": [int(G) for G in sizes]}, schema={"G": pl.Int64}),
        how="cross",
        maintain_order="left",
    )
    joined = prompts.join(
        table.lazy().drop("p", strict=False), on=[*join, "G"], how="left", maintain_order="left"
    )
    return joined.select([*ds.by, "id", "p", "G", *PER_GROUP])


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


def grid_for(hist: pl.DataFrame, options: SilentOptions) -> tuple[float, ...]:
    """:func:`grid` for these options; the unbiased estimator stops at the fewest logged samples n."""
    check_estimator(hist, options.sizes, options.estimator)
    most = float(hist["n"].min()) if options.estimator == "unbiased" else float(MAX_G)  # type: ignore[arg-type]
    return grid(options.sizes, most)


def sparkline(hist: pl.DataFrame, options: SilentOptions) -> Sparkline:
    """The silent share over all prompts against G, on :func:`grid_for`'s sizes, for the table view."""
    sizes = grid_for(hist, options)
    summary = summarize(hist, (), sizes, estimator=options.estimator)
    return Sparkline("silent vs G", "G", tuple(g_label(G) for G in sizes), tuple(summary["silent_rate"]))


def headline(summary: pl.DataFrame) -> str:
    """One plain sentence for the table view, from an overall (no --by, no bins) summary."""
    parts = [f"{100 * r['silent_rate']:.1f}% at G={r['G']}" for r in summary.iter_rows(named=True)]
    always = float(summary["always_silent_share"][0])
    if len(parts) == 1:
        lead = f"{parts[0].replace(' at ', ' of groups are silent at ')}"
    else:
        lead = "Silent groups: " + ", ".join(parts)
    return f"{lead}; {100 * always:.1f}% of prompts are silent at every G (never or always solved)."


def view(hist: pl.DataFrame, summary: pl.DataFrame, options: SilentOptions, by: Sequence[str]) -> View:
    """The table view of a summary: its headline (over all prompts), labels, percentages and bars."""
    overall = summary
    if by or options.bins is not None:
        overall = summarize(hist, (), options.sizes, estimator=options.estimator, cap=options.cap)
    return View(
        headline=headline(overall),
        percent=(
            "silent_rate",
            "all_right_rate",
            "all_wrong_rate",
            "always_silent_share",
            "dapo_unfilled_rate",
        ),
        bars=("silent_rate",),
        labels={
            "silent_rate": "silent groups",
            "all_right_rate": "all right",
            "all_wrong_rate": "all wrong",
            "always_silent_share": "always\nsilent",
            "dapo_draws_per_group": "DAPO draws\nper group",
            "dapo_draws_per_group_learnable": "…learnable\nprompts only",
            "dapo_unfilled_rate": "DAPO\nunfilled",
        },
        keys=list(by),
        spark=lambda: sparkline(hist, options),
        footer=[
            "DAPO draws per group: groups drawn per usable group when silent groups are redrawn from fresh "
            "prompts; …learnable: the same once never- and always-solved prompts are dropped"
        ],
    )

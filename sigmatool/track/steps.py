"""Per-step summary of a training run: measured against expected silent fractions, the z-score, the drift flag.

Columns of the step table, in order: ``step``, ``groups``, ``rollouts``, ``mean_group_size``,
``min_group_size``, ``max_group_size``, ``mean_reward``, ``silent_fraction``, ``all_right_fraction``,
``all_wrong_fraction``, ``compared_groups``, ``compared_silent_fraction``, ``expected_silent_fraction``,
``silent_z``, ``expected_mean_reward``, ``reward_p``, ``expected_all_right_fraction``, ``all_right_p``,
``expected_all_wrong_fraction``, ``all_wrong_p``, ``moved``, ``drift``. Columns of the one-row run table: ``steps``, ``groups``, ``compared_groups``,
``uncompared_groups``, ``unusable_groups``, ``single_step_prompts``, ``plugin_groups``,
``compared_silent_fraction``, ``expected_silent_fraction``, ``r_squared``, ``mean_bias``, ``drift_steps``.
docs/track.md explains each.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from sigmatool.track.expected import BASIS, EXPECTED, VARIANCE, all_right, silent
from sigmatool.track.moved import MOVED_COLUMNS, moved_table

STEP_COLUMNS = (
    "step",
    "groups",
    "rollouts",
    "mean_group_size",
    "min_group_size",
    "max_group_size",
    "mean_reward",
    "silent_fraction",
    "all_right_fraction",
    "all_wrong_fraction",
    "compared_groups",
    "compared_silent_fraction",
    "expected_silent_fraction",
    "silent_z",
    *MOVED_COLUMNS,
    "drift",
)
BAND_EXPECTED = ("expected_silent", "expected_silent_lo", "expected_silent_hi")
RUN_COLUMNS = (
    "steps",
    "groups",
    "compared_groups",
    "uncompared_groups",
    "unusable_groups",
    "single_step_prompts",
    "plugin_groups",
    "compared_silent_fraction",
    "expected_silent_fraction",
    "r_squared",
    "mean_bias",
    "drift_steps",
)


def _variance(groups: pl.DataFrame) -> pl.Expr:
    """Each group's share of the z-score's variance: its own ``variance`` column when the estimator gave
    one (a window of steps), else the binomial ``P(1 − P)`` that treats the expected P as exact."""
    e = pl.col(EXPECTED)
    return pl.col(VARIANCE) if VARIANCE in groups.columns else e * (1 - e)


def step_table(groups: pl.DataFrame, z_threshold: float, min_gap: float, pass_at: int = 1) -> pl.DataFrame:
    """The per-step table from groups (G ≥ 1) carrying ``expected`` (null where there is none); silent and
    all right under pass@``pass_at`` credit."""
    compared = pl.col(EXPECTED).is_not_null()
    quiet = silent(pass_at).cast(pl.Float64)
    expected = pl.col(EXPECTED)
    table = (
        groups.group_by("step")
        .agg(
            pl.len().cast(pl.Int64).alias("groups"),
            pl.col("G").sum().cast(pl.Int64).alias("rollouts"),
            pl.col("G").mean().alias("mean_group_size"),
            pl.col("G").min().cast(pl.Int64).alias("min_group_size"),
            pl.col("G").max().cast(pl.Int64).alias("max_group_size"),
            (pl.col("k").sum() / pl.col("G").sum()).alias("mean_reward"),
            quiet.mean().alias("silent_fraction"),
            all_right(pass_at).cast(pl.Float64).mean().alias("all_right_fraction"),
            (pl.col("k") == 0).cast(pl.Float64).mean().alias("all_wrong_fraction"),
            compared.sum().cast(pl.Int64).alias("compared_groups"),
            quiet.filter(compared).sum().alias("__observed"),
            expected.filter(compared).sum().alias("__expected"),
            _variance(groups).filter(compared).sum().alias("__variance"),
        )
        .sort("step")
    )
    n = pl.col("compared_groups")
    diff = pl.col("__observed") - pl.col("__expected")
    # A step whose every expected P is 0 or 1 has no noise: any difference is infinitely unlikely.
    z = (
        pl.when(n == 0)
        .then(None)
        .when(pl.col("__variance") > 0)
        .then(diff / pl.col("__variance").sqrt())
        .when(diff.abs() < 1e-12)
        .then(0.0)
        .otherwise(diff.sign() * math.inf)
    )
    table = table.with_columns(
        pl.when(n > 0).then(pl.col("__observed") / n).alias("compared_silent_fraction"),
        pl.when(n > 0).then(pl.col("__expected") / n).alias("expected_silent_fraction"),
        z.cast(pl.Float64).alias("silent_z"),
    )
    gap = (pl.col("compared_silent_fraction") - pl.col("expected_silent_fraction")).abs()
    drift = (pl.col("silent_z").abs() >= z_threshold) & (gap >= min_gap)
    # The step's answers tested too (sigmatool.track.moved): a collapse the silent share cannot see.
    table = table.join(moved_table(groups, z_threshold, min_gap, pass_at), on="step", how="left")
    silent_moved = pl.when(drift.fill_null(False)).then(
        pl.when(pl.col("silent_z") > 0).then(pl.lit("silent up")).otherwise(pl.lit("silent down"))
    )
    moved = pl.concat_str([silent_moved, pl.col("moved")], separator=", ", ignore_nulls=True)
    table = table.with_columns(pl.when(moved != "").then(moved).alias("moved"))
    return table.with_columns(pl.col("moved").is_not_null().alias("drift")).select(STEP_COLUMNS)


def fit_statistics(steps: pl.DataFrame) -> tuple[float, float]:
    """R² of measured by expected silent fractions over the compared steps, and the mean bias.

    ``R² = 1 − Σ (m − e)² / Σ (m − m̄)²`` (the expectation is the model, nothing is fitted; NaN when the
    measured fractions do not vary) and ``bias = mean(m − e)``, each step counting once.
    """
    rows = steps.filter(pl.col("compared_groups") > 0)
    if rows.height == 0:
        return math.nan, math.nan
    measured = rows["compared_silent_fraction"].to_numpy()
    expected = rows["expected_silent_fraction"].to_numpy()
    residual = float(np.sum((measured - expected) ** 2))
    spread = float(np.sum((measured - measured.mean()) ** 2))
    r_squared = 1.0 - residual / spread if spread > 0 else math.nan
    return r_squared, float(np.mean(measured - expected))


def run_table(
    steps: pl.DataFrame,
    groups: pl.DataFrame,
    all_groups: pl.DataFrame,
    single_step_prompts: int | None,
    pass_at: int = 1,
) -> pl.DataFrame:
    """The one-row run table (see the module docstring)."""
    r_squared, bias = fit_statistics(steps)
    with_expected = groups.filter(pl.col(EXPECTED).is_not_null())
    compared = with_expected.height
    quiet = silent(pass_at).cast(pl.Float64).mean()
    observed = float(with_expected.select(quiet).item()) if compared else math.nan
    expected = float(with_expected[EXPECTED].mean()) if compared else math.nan  # type: ignore[arg-type]
    return pl.DataFrame(
        {
            "steps": [steps.height],
            "groups": [groups.height],
            "compared_groups": [compared],
            "uncompared_groups": [groups.height - compared],
            "unusable_groups": [int((all_groups["G"] == 0).sum())],
            "single_step_prompts": [single_step_prompts],
            "plugin_groups": [int((groups[BASIS] == "plug-in").sum())],
            "compared_silent_fraction": [observed],
            "expected_silent_fraction": [expected],
            "r_squared": [r_squared],
            "mean_bias": [bias],
            "drift_steps": [steps.filter(pl.col("drift"))["step"].to_list()],
        },
        schema_overrides={"single_step_prompts": pl.Int64, "drift_steps": pl.List(pl.Int64)},
    ).select(RUN_COLUMNS)


def silent_band(steps: pl.DataFrame, groups: pl.DataFrame, z_threshold: float) -> pl.DataFrame:
    """What ``track --plot`` draws: per step with an expectation, the compared groups' measured and expected
    silent shares, and expected ± ``z_threshold`` binomial deviations (``step``, ``measured_silent``,
    ``expected_silent``, ``expected_silent_lo``, ``expected_silent_hi``). A run where no group has an
    expectation gives every step's measured share, the expected columns null."""
    if not int(steps["compared_groups"].sum()):
        return steps.select(
            "step",
            pl.col("silent_fraction").alias("measured_silent"),
            *(pl.lit(None, dtype=pl.Float64).alias(c) for c in BAND_EXPECTED),
        ).sort("step")
    e = pl.col(EXPECTED)
    spread = (
        groups.filter(e.is_not_null() & (pl.col("G") >= 1))
        .group_by("step")
        .agg((_variance(groups).sum().sqrt() / pl.len()).alias("__sd"))
    )
    expected = pl.col("expected_silent_fraction")
    half = z_threshold * pl.col("__sd")
    return (
        steps.filter(pl.col("compared_groups") > 0)
        .join(spread, on="step", how="left")
        .select(
            "step",
            pl.col("compared_silent_fraction").alias("measured_silent"),
            expected.alias("expected_silent"),
            (expected - half).clip(0.0, 1.0).alias("expected_silent_lo"),
            (expected + half).clip(0.0, 1.0).alias("expected_silent_hi"),
        )
        .sort("step")
    )

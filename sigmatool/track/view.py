"""How ``track`` shows itself: the per-step table or the one-row run summary, each led by the run's headline."""

from __future__ import annotations

import polars as pl

from sigmatool.render.table import View
from sigmatool.track import TrackResult, headline

STEP_PERCENT = (
    "mean_reward",
    "silent_fraction",
    "all_right_fraction",
    "all_wrong_fraction",
    "compared_silent_fraction",
    "expected_silent_fraction",
)
SUMMARY_COLUMNS = ("expected_from", "z_threshold", "min_gap")


def summary_frame(result: TrackResult) -> pl.DataFrame:
    """The run table as an output: the flagged steps as text ("3,7"; null when none), and how it was judged."""
    steps = result.run["drift_steps"].item().to_list()
    return result.run.with_columns(
        pl.lit(",".join(str(s) for s in steps) or None, dtype=pl.String).alias("drift_steps"),
        pl.lit(result.estimator).alias("expected_from"),
        pl.lit(result.z_threshold).alias("z_threshold"),
        pl.lit(result.min_gap).alias("min_gap"),
    )


def _footer(result: TrackResult) -> list[str]:
    return [
        "silent: share of the step's groups with σ = 0 (all right or all wrong), what TRL logs as "
        f"frac_reward_zero_std; expected: mean p^G + (1 − p)^G over the same groups ({result.estimator}); "
        f"z: (silent − expected) in binomial standard deviations; drift: |z| ≥ {result.z_threshold:g} and a "
        f"gap of at least {100 * result.min_gap:g} points"
    ]


def view(result: TrackResult, summary: bool = False) -> View:
    """The table view: the headline, then the per-step rows (or, with ``summary``, the run's one row)."""
    if summary:
        return View(
            headline=headline(result),
            percent=("compared_silent_fraction", "expected_silent_fraction", "mean_bias", "min_gap"),
            labels={"compared_silent_fraction": "silent", "expected_silent_fraction": "expected silent"},
        )
    all_compared = bool((result.steps["compared_groups"] == result.steps["groups"]).all())
    hidden = ("rollouts", "compared_groups", "compared_silent_fraction") if all_compared else ("rollouts",)
    return View(
        headline=headline(result),
        percent=STEP_PERCENT,
        hide=hidden,
        labels={
            "mean_group_size": "mean G",
            "min_group_size": "min G",
            "max_group_size": "max G",
            "mean_reward": "mean reward",
            "silent_fraction": "silent",
            "all_right_fraction": "all right",
            "all_wrong_fraction": "all wrong",
            "compared_groups": "compared groups",
            "compared_silent_fraction": "silent (compared)",
            "expected_silent_fraction": "expected silent",
            "silent_z": "z",
        },
        footer=_footer(result),
    )

"""How ``track`` shows itself: the per-step table or the one-row run summary, each led by the run's headline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.columns import labels, percent
from sigmatool.render.table import DATA_FORMATS, View
from sigmatool.track import RUN_COLUMNS, STEP_COLUMNS, TrackResult, headline, nothing_compared
from sigmatool.track.moved import MOVED_COLUMNS, level

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot

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


EXPECTED_SAYS = {
    "pass-rate table": "mean over the same groups of p^G + (1 − p)^G from the table's rates (from its counts: "
    "the unbiased [C(k, G) + C(n − k, G)] / C(n, G))",
    "leave-one-step-out": "mean over the same groups of [C(k′, G) + C(n′ − k′, G)] / C(n′, G), k′ of n′ the "
    "prompt's right answers in the other steps (unbiased for p^G + (1 − p)^G; the plug-in where G > n′)",
}


SILENT_SAYS = "silent: share of the step's groups with σ = 0 (all right or all wrong), what TRL logs as frac_reward_zero_std"


def _footer(result: TrackResult) -> list[str]:
    """What the columns mean; the comparison's only when some step was compared."""
    if not bool((result.steps["compared_groups"] > 0).any()):
        return [SILENT_SAYS]
    says = EXPECTED_SAYS.get(result.estimator) or EXPECTED_SAYS["leave-one-step-out"].replace(
        "in the other steps", "in the window's other steps"
    )
    return [
        f"{SILENT_SAYS}; expected: {says} ({result.estimator}); "
        f"z: (silent − expected) in binomial standard deviations; drift: the silent share with |z| ≥ "
        f"{result.z_threshold:g}, the mean reward, all-right or all-wrong share by an exact test (p ≤ "
        f"{level(result.z_threshold):.2g}), each with a gap of at least {100 * result.min_gap:g} points; the "
        f"tests, their p-values and what moved are in {DATA_FORMATS}"
    ]


# The run's counts of what was left out of the comparison: under the run table, with their values.
LEFT_OUT = ("uncompared_groups", "unusable_groups", "single_step_prompts", "plugin_groups")


def _summary_view(result: TrackResult) -> View:
    """The one-row run table: how it was judged above it, the counts of what was left out under it."""
    names = (*RUN_COLUMNS, *SUMMARY_COLUMNS)
    values = {c: result.run[c].item() for c in LEFT_OUT}
    counts = ", ".join(f"{c} {'–' if v is None else f'{v:,}'}" for c, v in values.items())
    return View(
        headline=headline(result),
        percent=percent(names),
        labels=labels(names),
        given=SUMMARY_COLUMNS,
        hide=LEFT_OUT,
        footer=[f"more columns in {DATA_FORMATS}: {counts}"],
    )


# Shown only when they say something: the comparison's columns when a step was compared, the smallest and
# largest group when some step's groups differ in size.
COMPARISON = ("compared_groups", "compared_silent_fraction", "expected_silent_fraction", "silent_z", "drift")
SPREAD = ("min_group_size", "max_group_size")


def _hidden(steps: pl.DataFrame) -> tuple[str, ...]:
    """The step table's columns that restate others: the rollouts (groups × mean G), the compared counts
    when every group was compared, the whole comparison when none was, min and max G when every step's
    groups have one size; the exact tests and ``moved`` always (the headline says what moved where a step
    drifts)."""
    hidden = ["rollouts", *MOVED_COLUMNS]
    compared = steps["compared_groups"]
    if not bool((compared > 0).any()):
        hidden += COMPARISON
    elif bool((compared == steps["groups"]).all()):
        hidden += COMPARISON[:2]
    if bool((steps["min_group_size"] == steps["max_group_size"]).all()):
        hidden += SPREAD
    return tuple(hidden)


def view(result: TrackResult, summary: bool = False) -> View:
    """The table view: the headline, then the per-step rows (or, with ``summary``, the run's one row)."""
    if summary:
        return _summary_view(result)
    return View(
        headline=headline(result),
        percent=percent(STEP_COLUMNS),
        hide=_hidden(result.steps),
        labels=labels(STEP_COLUMNS),
        footer=_footer(result),
    )


@dataclass(frozen=True)
class Tracked:
    """``track``'s answer: the per-step table, or with ``summary`` the run's one row."""

    result: TrackResult
    summary: bool = False

    def frame(self) -> pl.DataFrame:
        return summary_frame(self.result) if self.summary else self.result.steps

    def view(self) -> View:
        return view(self.result, self.summary)

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
        """Measured against expected silent share per step, the expectation banded by the drift rule's z."""
        from sigmatool.figures.track import track_figure

        r = self.result
        return track_figure(r.band, source=source, z=r.z_threshold, caption=caption, style=style)

    def warnings(self) -> tuple[str, ...]:
        """That no step was compared with an expectation, and why."""
        compared = self.result.steps.height == 0 or self.result.run["compared_groups"].item()
        return () if compared else (nothing_compared(self.result),)

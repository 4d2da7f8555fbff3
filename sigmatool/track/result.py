"""A tracked run's answer and how it shows itself: the headline, the per-step and one-row table views."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.columns import labels, percent
from sigmatool.render.table import DATA_FORMATS, View
from sigmatool.track.moved import MOVED_COLUMNS, level
from sigmatool.track.steps import RUN_COLUMNS, STEP_COLUMNS

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot


@dataclass(frozen=True)
class TrackResult:
    """The per-step table, the one-row run table, the per-group table behind them, which estimator ran, and
    the figure's band (:func:`~sigmatool.track.steps.silent_band`); ``run_only`` (``--summary``): shown as
    the run's one row."""

    steps: pl.DataFrame
    run: pl.DataFrame
    groups: pl.DataFrame
    estimator: str
    z_threshold: float
    min_gap: float
    band: pl.DataFrame
    run_only: bool = False

    def frame(self) -> pl.DataFrame:
        return summary_frame(self) if self.run_only else self.steps

    def view(self) -> View:
        return view(self, self.run_only)

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
        """Measured against expected silent share per step, the expectation banded by the drift rule's z."""
        from sigmatool.figures.track import track_figure

        return track_figure(self.band, source=source, z=self.z_threshold, caption=caption, style=style)

    def warnings(self) -> tuple[str, ...]:
        """That no step was compared with an expectation, and why."""
        compared = self.steps.height == 0 or self.run["compared_groups"].item()
        return () if compared else (_nothing_compared(self),)


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def _step_span(steps: list[int]) -> str:
    return f"Step {steps[0]}" if len(steps) == 1 else f"Steps {steps[0]}–{steps[-1]}"


def _measured(result: TrackResult) -> tuple[int, float]:
    """The run's groups and the share of them that were silent, every group counting once."""
    steps = result.steps
    groups = int(steps["groups"].sum())
    silent = float((steps["silent_fraction"] * steps["groups"]).sum())
    return groups, silent / groups if groups else math.nan


def _nothing_compared(result: TrackResult) -> str:
    """Why no group has an expectation, and how to get one."""
    if result.estimator == "pass-rate table":
        return "Nothing is compared: no prompt of the run has a rate in the table."
    run = result.run.row(0, named=True)
    if result.steps.height == 1:
        why = "the run has one step, so no other step gives a prompt's pass rate"
    elif result.estimator == "leave-one-step-out":
        why = f"every prompt appears in one step only ({run['single_step_prompts']:,} prompts)"
    else:
        why = f"no prompt recurs within {result.estimator.removeprefix('window of ')} of itself"
    return (
        f"Nothing is compared: {why}. To compare, give --pass-rates FILE (per-prompt pass rates, e.g. a "
        "reference model's); --expect window compares a step with its neighbours when prompts recur."
    )


def _measured_sentence(result: TrackResult, span: str) -> str:
    groups, share = _measured(result)
    line = f"{span}: {_percent(share)} of the {groups:,} groups silent (measured)."
    if int(result.steps["max_group_size"].max()) == 1:  # type: ignore[arg-type]
        line += (
            " Every group has one usable rollout (G = 1), and a group of one is silent whatever its "
            "prompt: this share says nothing about the prompts."
        )
    return line


def _silent_drift(row: dict[str, object]) -> bool:
    """Whether the step's silent share parted (the drift rule on ``silent_z``, as ``moved`` says it)."""
    return str(row["moved"] or "").startswith("silent ")


# What each moved count is measured by, and its expectation, in the step table.
MEASURED = {
    "mean reward": ("mean_reward", "expected_mean_reward"),
    "all right": ("all_right_fraction", "expected_all_right_fraction"),
    "all wrong": ("all_wrong_fraction", "expected_all_wrong_fraction"),
}


def _flagged_item(row: dict[str, object], result: TrackResult) -> str:
    """A flagged step as the headline names it: its silent share against the expected where that parted,
    else the counts that moved (sigmatool.track.moved), each against its expectation."""
    if _silent_drift(row):
        return (
            f"{row['step']} ({_percent(row['compared_silent_fraction'])} vs "  # type: ignore[arg-type]
            f"{_percent(row['expected_silent_fraction'])}, z = {row['silent_z']:+.1f})"  # type: ignore[arg-type]
        )
    said = []
    for moved in str(row["moved"] or "").split(", "):
        name = moved.rsplit(" ", 1)[0]
        if name in MEASURED:
            measured, expected = (row[c] for c in MEASURED[name])
            said.append(f"{name} {_percent(measured)} vs {_percent(expected)}")  # type: ignore[arg-type]
    return f"{row['step']} ({'; '.join(said)}, exact test)"


def _moved_steps(flagged: pl.DataFrame, what: str) -> list[int]:
    return flagged.filter(pl.col("moved").fill_null("").str.contains(what, literal=True))["step"].to_list()


def _directions(flagged: pl.DataFrame) -> str:
    """What the flagged steps' signs say: below is a filter's mark, above a collapse's; answers that moved
    without the silent share (all right turned all wrong) are a collapse too."""
    below = _moved_steps(flagged, "silent down")
    above = _moved_steps(flagged, "silent up")
    wrong = _moved_steps(flagged, "all wrong up")
    down = [s for s in _moved_steps(flagged, "mean reward down") if s not in wrong]
    up = _moved_steps(flagged, "mean reward up")
    said = []
    if below:
        said.append(
            f"fewer silent groups than expected ({_steps_named(below)}) is what a filter of σ = 0 groups "
            "leaves (DAPO's dynamic sampling)"
        )
    if above:
        said.append(
            f"more than expected ({_steps_named(above)}) is a collapse: answers agree more than the pass "
            "rates say (or the data or reward changed)"
        )
    if wrong:
        said.append(
            f"more all-wrong groups than expected ({_steps_named(wrong)}) is a collapse: prompts the other "
            "steps solved got no right answer (a broken grader, harness or checkpoint does this too)"
        )
    if down:
        said.append(f"a lower mean reward than expected ({_steps_named(down)}): the policy got worse there")
    if up:
        said.append(
            f"a higher mean reward than expected ({_steps_named(up)}): the policy learned, or the reward changed"
        )
    text = "; ".join(said) or "the answers moved"
    return text[0].upper() + text[1:] + "."


def _steps_named(steps: list[int]) -> str:
    shown = ", ".join(str(s) for s in steps[:5]) + (f" and {len(steps) - 5} more" if len(steps) > 5 else "")
    return f"step {shown}" if len(steps) == 1 else f"steps {shown}"


def headline(result: TrackResult) -> str:
    """One sentence (or three) for the table view: the run's fit, the steps that part, what was left out."""
    run = result.run.row(0, named=True)
    all_steps = result.steps["step"].to_list()
    if not all_steps:
        return "The log holds no usable rollout."
    span = _step_span(all_steps)
    if not run["compared_groups"]:
        return f"{_measured_sentence(result, span)} {_nothing_compared(result)}"
    r2 = "n/a" if math.isnan(run["r_squared"]) else f"{run['r_squared']:.3f}"
    parts = [
        f"{span}: {_percent(run['compared_silent_fraction'])} of groups silent, "
        f"{_percent(run['expected_silent_fraction'])} expected ({result.estimator}; R² {r2}, "
        f"mean bias {100 * run['mean_bias']:+.1f} points)."
    ]
    flagged = result.steps.filter(pl.col("drift"))
    items = [_flagged_item(r, result) for r in flagged.head(3).iter_rows(named=True)]
    if flagged.height == 1:
        parts.append(f"Step {items[0]} parts from the expectation.")
    elif flagged.height:
        more = "" if flagged.height <= 3 else f" and {flagged.height - 3} more"
        parts.append(f"{flagged.height} steps part from the expectation: steps {', '.join(items)}{more}.")
    if flagged.height:
        parts.append(_directions(flagged))
    else:
        parts.append(
            f"No step parts from the expectation (|z| < {result.z_threshold:g} or gap < {_percent(result.min_gap)})."
        )
    if run["uncompared_groups"]:
        why = {
            "leave-one-step-out": f"{run['single_step_prompts']} prompt(s) seen in one step only",
            "pass-rate table": "prompts without a rate in the table",
        }.get(result.estimator, f"their prompts are not seen within the {result.estimator}")
        groups, share = _measured(result)
        parts.append(
            f"{run['uncompared_groups']} group(s) are not compared: {why} "
            f"({_percent(share)} of all {groups:,} groups silent)."
        )
    return " ".join(parts)


# How ``track`` shows itself: the per-step table or the one-row run summary, each led by the run's headline.
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

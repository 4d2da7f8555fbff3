"""What ``curriculum`` says: the headline a person acts on, and the per-step table at 80 columns."""

from __future__ import annotations

import math

import polars as pl

from sigmatool.columns import labels, percent
from sigmatool.curriculum import CurriculumResult
from sigmatool.render import View, also_in_data

SHOWN_ROWS = 16  # the table view shows about this many steps; the data formats every one
HIDDEN = ("all_right_rate", "all_wrong_rate", "drgrpo_signal")


def headline(result: CurriculumResult) -> str:
    """The schedule, where it is silent most, what it costs against uniform sampling, where it runs dry,
    and (with --grader-error) what the grader moves."""
    o, steps, means, uniform = result.options, result.steps, result.means, result.uniform
    worst = steps.row(int(steps["silent_rate"].arg_max() or 0), named=True)
    dapo = (
        f"DAPO draws {means['dapo_draws_per_group']:.2f} groups per kept group (uniform "
        f"{uniform['dapo_draws_per_group']:.2f})"
    )
    if not math.isfinite(means["dapo_draws_per_group"]):
        dapo = (
            f"DAPO cannot fill a step whose every group is silent (step {worst['step']:,}; --drop-solved "
            "and --drop-unsolved leave those prompts out)"
        )
    lines = [
        f"{o.parameters()[0]}, {o.steps:,} steps of {o.batch:,} prompts at G = {o.G}: "
        f"{means['silent_rate']:.1%} of groups silent on average (most at step {worst['step']:,}: "
        f"{worst['silent_rate']:.1%}), against {uniform['silent_rate']:.1%} with uniform sampling; {dapo}, "
        f"GRPO's signal per group {means['grpo_signal']:.3f} (uniform {uniform['grpo_signal']:.3f})."
    ]
    return "\n".join([*lines, *result.warnings])


def shown_rows(steps: pl.DataFrame) -> pl.DataFrame | None:
    """About :data:`SHOWN_ROWS` evenly spaced steps and the last (None: every row fits)."""
    if steps.height <= SHOWN_ROWS + 4:
        return None
    stride = math.ceil(steps.height / SHOWN_ROWS)
    keep = [i for i in range(steps.height) if i % stride == 0 or i == steps.height - 1]
    return steps[keep]


def view(result: CurriculumResult) -> View:
    """The table view: the headline, the steps (thinned to a screen), the rest in footnotes."""
    names = result.steps.columns
    hidden = [c for c in HIDDEN if c in names]
    rows = shown_rows(result.steps)
    footer = [
        f"Exact expectations over each step's {result.options.batch:,} distinct draws ({result.estimator} "
        f"pass rates; they do not move in this model: sigmatool simulate follows them); {result.scheduled:,.0f} "
        f"of {result.prompts:,.0f} prompts can be drawn.",
        "drawn before: the share of a step's prompts drawn at an earlier step; effective prompts: B² / Σ π².",
    ]
    if rows is not None:
        footer.append(f"{rows.height} of {result.steps.height:,} rows shown; every row in the data formats.")
    footer.append(also_in_data(hidden))
    return View(
        headline=headline(result),
        footer=footer,
        percent=percent(names),
        labels=labels(names),
        hide=hidden,
        rows=rows,
    )

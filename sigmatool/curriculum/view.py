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
    lines = [
        f"{o.parameters()[0]}, {o.steps:,} steps of {o.batch:,} prompts at G = {o.G}: "
        f"{means['silent_rate']:.1%} of groups silent on average (most at step {worst['step']:,}: "
        f"{worst['silent_rate']:.1%}), against {uniform['silent_rate']:.1%} with uniform sampling; DAPO draws "
        f"{means['dapo_draws_per_group']:.2f} groups per kept group (uniform {uniform['dapo_draws_per_group']:.2f}), "
        f"GRPO's signal per group {means['grpo_signal']:.3f} (uniform {uniform['grpo_signal']:.3f})."
    ]
    dry = [d for d in result.dry if d.step is not None]
    if dry:
        first = min(dry, key=lambda d: d.step or 0)
        where = "the scheduled prompts" if first.unit == "all" else first.unit
        if len(result.names) > 1:
            where += f" of {first.group}"
        lines.append(
            f"A sampler that never repeats a prompt runs out of {where} ({first.prompts:,.0f} prompts) at step "
            f"{first.step:,}" + (f", {len(dry) - 1} more pool(s) later." if len(dry) > 1 else ".")
        )
    if result.clean:
        c = result.clean
        lines.append(
            f"Through the grader ({_grader(o.grader)}) {means['silent_rate']:.1%} of groups are silent against "
            f"{c['silent_rate']:.1%} with an exact grader (uniform: {uniform['silent_rate']:.1%} against "
            f"{c['uniform_silent_rate']:.1%}); GRPO's signal {means['grpo_signal']:.3f} against "
            f"{c['grpo_signal']:.3f}."
        )
    return "\n".join(lines)


def _grader(grader: tuple[float, float] | None) -> str:
    fp, fn = grader or (0.0, 0.0)
    return f"FP {fp:g}, FN {fn:g}"


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

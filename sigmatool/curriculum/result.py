"""A curriculum's answer and how it shows itself: the per-step table thinned to a screen, the headline, the
warnings."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.columns import labels, percent
from sigmatool.curriculum.schedule import Plan
from sigmatool.options.curriculum import CurriculumOptions
from sigmatool.render import View, also_in_data

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot


@dataclass(frozen=True)
class Dry:
    """Where a sampler that never repeats a prompt runs out: ``unit`` (pool, bucket or all) of ``group``,
    its ``prompts``, and the first step whose cumulative expected draws from it exceed them (None: never)."""

    unit: str
    group: str
    prompts: float
    step: int | None


@dataclass(frozen=True)
class CurriculumResult:
    """The per-step table, uniform sampling's figures beside it, and what the headline and notes say.

    ``means``: each rate's mean over every step of the run (not only the rows shown), and
    ``dapo_draws_per_group`` the mean of the steps' DAPO costs; ``uniform`` the same figures when each step
    draws B of all the input's prompts uniformly; ``clean`` (with ``--grader-error``) the schedule's and
    uniform sampling's silent share and signals with an exact grader; ``weights`` (static schedules) each
    histogram row's chance per prompt of being drawn, as a weighted sampler takes it."""

    steps: pl.DataFrame
    options: CurriculumOptions
    means: dict[str, float]
    uniform: dict[str, float]
    estimator: str
    prompts: float
    scheduled: float
    names: tuple[str, ...] = ()
    dry: tuple[Dry, ...] = ()
    notes: tuple[str, ...] = ()
    clean: dict[str, float] = field(default_factory=dict)
    weights: pl.DataFrame | None = None
    plan: Plan | None = None  # the schedule, for the rows it draws (:mod:`.rows`)
    says_grader = True  # its headline says what --grader-error moves (not the session's generic line)

    def frame(self) -> pl.DataFrame:
        return self.steps

    def view(self) -> View:
        """The table view: the headline, the steps (thinned to a screen), the rest in footnotes."""
        names = self.steps.columns
        hidden = [c for c in HIDDEN if c in names]
        rows = shown_rows(self.steps)
        footer = [
            f"Exact expectations over each step's {self.options.batch:,} distinct draws ({self.estimator} "
            f"pass rates; they do not move in this model: sigmatool simulate follows them); {self.scheduled:,.0f} "
            f"of {self.prompts:,.0f} prompts can be drawn.",
            "drawn before: the share of a step's prompts drawn at an earlier step; effective prompts: B² / Σ π².",
        ]
        if rows is not None:
            footer.append(
                f"{rows.height} of {self.steps.height:,} rows shown; every row in the data formats."
            )
        footer.append(also_in_data(hidden))
        return View(
            headline=headline(self),
            footer=footer,
            percent=percent(names),
            labels=labels(names),
            hide=hidden,
            rows=rows,
        )

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
        """Silent share and expected pass rate against step; uniform sampling as a grey dashed line."""
        from sigmatool.figures.curriculum import curriculum_figure

        o = self.options
        run = f"{o.parameters()[0]}, {o.steps:,} steps of {o.batch:,} distinct prompts, groups of G = {o.G}"
        return curriculum_figure(
            self.steps,
            self.uniform,
            run=run,
            prompts=self.prompts,
            estimator=self.estimator,
            grader=o.grader,
            source=source,
            caption=caption,
            style=style,
        )

    def warnings(self) -> tuple[str, ...]:
        """The headline's lines past the first: where a sampler that never repeats a prompt runs dry, and
        what the grader moves (on stderr in the data formats, which have no headline)."""
        lines = []
        dry = [d for d in self.dry if d.step is not None]
        if dry:
            first = min(dry, key=lambda d: d.step or 0)
            where = "the scheduled prompts" if first.unit == "all" else first.unit
            where += f" of {first.group}" if len(self.names) > 1 else ""
            more = f", {len(dry) - 1} more pool(s) later" if len(dry) > 1 else ""
            lines.append(
                f"A sampler that never repeats a prompt runs out of {where} ({first.prompts:,.0f} prompts) "
                f"at step {first.step:,}{more}."
            )
        if self.clean and self.options.grader:
            fp, fn = self.options.grader
            c, means, uniform = self.clean, self.means, self.uniform
            lines.append(
                f"Through the grader (FP {fp:g}, FN {fn:g}) {means['silent_rate']:.1%} of groups are silent "
                f"against {c['silent_rate']:.1%} with an exact grader (uniform: {uniform['silent_rate']:.1%} "
                f"against {c['uniform_silent_rate']:.1%}); GRPO's signal {means['grpo_signal']:.3f} against "
                f"{c['grpo_signal']:.3f}."
            )
        return tuple(lines)


# What ``curriculum`` says: the headline a person acts on, and the per-step table at 80 columns.
SHOWN_ROWS = 16  # the table view shows about this many steps; the data formats every one
HIDDEN = ("all_right_rate", "all_wrong_rate", "drgrpo_signal")


def headline(result: CurriculumResult) -> str:
    """The schedule, where it is silent most, and what it costs against uniform sampling (where it runs dry,
    and with --grader-error what the grader moves: :meth:`CurriculumResult.warnings`)."""
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
    return "\n".join(lines)


def shown_rows(steps: pl.DataFrame) -> pl.DataFrame | None:
    """About :data:`SHOWN_ROWS` evenly spaced steps and the last (None: every row fits)."""
    if steps.height <= SHOWN_ROWS + 4:
        return None
    stride = math.ceil(steps.height / SHOWN_ROWS)
    keep = [i for i in range(steps.height) if i % stride == 0 or i == steps.height - 1]
    return steps[keep]

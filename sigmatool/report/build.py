"""Build a report: run the analyses on every input (and a run's track or a rollout plan when asked), draw
their figures, keep the frames for the tables."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sigmatool import groupsize
from sigmatool.budget import BudgetResult
from sigmatool.figures import (
    Plot,
    budget_figure,
    difficulty_figure,
    groupsize_figure,
    plan_figure,
    silent_figure,
    track_figure,
    write_atomic,
)
from sigmatool.figures.preflight import preflight_figure
from sigmatool.groupsize import GroupSizeCurve, GroupSizeResult
from sigmatool.options import BudgetOptions, InputOptions, SilentOptions
from sigmatool.plan.core import PlanFrames
from sigmatool.report.html import render_html
from sigmatool.report.markdown import write_markdown
from sigmatool.report.model import INPUT_COLUMN, ReportInput, ReportOptions, combine
from sigmatool.report.page import Headline, Page, inputs_table, sections, settings
from sigmatool.report.provenance import provenance
from sigmatool.silent import SilentResult
from sigmatool.track import TrackResult
from sigmatool.track.expected import Estimate


@dataclass(eq=False)
class Report:
    """A built report: its inputs, the analyses' frames, the headline sentences and the figures."""

    inputs: tuple[ReportInput, ...]
    options: ReportOptions
    hist: pl.DataFrame
    by: tuple[str, ...]
    silent: dict[str, pl.DataFrame]
    budget: pl.DataFrame
    groupsize: pl.DataFrame
    headlines: tuple[Headline, ...]
    plots: dict[str, Plot]
    warnings: tuple[str, ...] = ()  # what the analyses' headlines say of the numbers' trust

    def page(self) -> Page:
        """What the report shows, in order, for its writers."""
        o = self.options
        return Page(
            title=o.title,
            labels=tuple(i.label for i in self.inputs),
            inputs=inputs_table(self.inputs),
            settings=tuple(settings(o, _labels(self.inputs), self.by)),
            notes=(*_notes(self.inputs), *self.warnings),
            headlines=self.headlines,
            sections=tuple(sections(self.silent, self.budget, self.groupsize, self.by, o)),
            plots=self.plots,
            provenance=provenance([f for i in self.inputs for f in i.files], o.command),
        )

    def html(self) -> str:
        """The report as one self-contained HTML page."""
        return render_html(self.page())

    def write_html(self, path: str | os.PathLike[str]) -> Path:
        """Write the HTML page, atomically."""
        target = Path(path)
        write_atomic(target, self.html().encode("utf-8"), option="-o")
        return target

    def write(self, path: str | os.PathLike[str], fmt: str) -> Path:
        """Write the report as ``fmt``: ``md`` (Markdown, its figures beside it) or ``html``."""
        return self.write_markdown(path) if fmt == "md" else self.write_html(path)

    def write_markdown(self, path: str | os.PathLike[str], figure_format: str = "png") -> Path:
        """Write the report as Markdown, its figures (``svg`` or ``png``) in a folder beside it."""
        return write_markdown(self.page(), Path(path), figure_format)


def _labels(inputs: Sequence[ReportInput]) -> tuple[str, ...]:
    """The estimators of the inputs' runs (their valuations' names), each once."""
    return tuple(dict.fromkeys(i.run.val.label for i in inputs))


def _notes(inputs: Sequence[ReportInput]) -> tuple[str, ...]:
    """Each input's notes, led by its label unless the note names it already (``the pass rates in 'm'``), and
    said once: notes alike but for their input merged (:func:`sigmatool.render.notes.merged`)."""
    from sigmatool.render.notes import merged

    return tuple(merged([_led(i.label, note) for i in inputs for note in i.notes]))


def _led(label: str, note: str) -> str:
    """A note led by its input's label, unless it names it already (``the pass rates in 'm'``)."""
    return note if f"'{label}'" in note else f"{label}: {note}"


def _stacked(frames: Sequence[pl.DataFrame], inputs: Sequence[ReportInput]) -> pl.DataFrame:
    """Each input's frame, led by an ``input`` column (its label) when there are several."""
    if len(inputs) == 1:
        return frames[0]
    return pl.concat(
        [
            f.select(pl.lit(i.label, dtype=pl.String).alias(INPUT_COLUMN), pl.all())
            for f, i in zip(frames, inputs, strict=True)
        ],
        how="diagonal_relaxed",
    )


@dataclass(frozen=True, eq=False)
class _Analysed:
    """One input's answers, by the same analyses on the same run as the commands give them."""

    silent: SilentResult
    budget: BudgetResult
    groupsize: GroupSizeResult


def _analysed(item: ReportInput, options: ReportOptions) -> _Analysed:
    """``silent`` (the report's G grid), ``budget`` (G = 8 and ∞) and ``groupsize`` on one input's run."""
    run = item.run
    return _Analysed(
        run.silent(SilentOptions(tuple(float(G) for G in options.sizes), options.estimator)),
        run.budget(_budget_options(options)),
        run.groupsize(options.groupsize, bins=10, figure=True),
    )


def _budget_options(options: ReportOptions) -> BudgetOptions:
    """The budget's G; the unbiased estimator has no large-group limit (``budget --G inf`` refuses it)."""
    unbiased = options.estimator == "unbiased"
    sizes = tuple(G for G in options.budget_sizes if not (unbiased and math.isinf(G)))
    return BudgetOptions(sizes, options.estimator)


def _headline(item: ReportInput, answers: _Analysed, options: ReportOptions) -> Headline:
    """The silent, budget and group-size sentences of the command-line tool, for one input as a whole: the
    budget's and group size's are those of the section's answers (over all prompts), silent's at G = 8."""
    sentences = (
        item.run.silent(SilentOptions((8.0,), options.estimator)).headline,
        answers.budget.headline,
        answers.groupsize.headline,
    )
    return Headline(item.label, tuple(s for s in sentences if s))


def _warnings(answers: _Analysed) -> tuple[str, ...]:
    """What the commands' headlines say of the numbers' trust (an estimator biased beyond n, an estimate
    outside what the data allow), as the report's notes of this input."""
    said = (*answers.silent.warnings(), *answers.budget.warnings(), *answers.groupsize.warnings())
    return tuple(dict.fromkeys(line for line in said if line))


def _plots(
    report_hist: pl.DataFrame,
    by: tuple[str, ...],
    frames: dict[str, pl.DataFrame],
    drawn: GroupSizeCurve,
    options: ReportOptions,
    source: str,
    estimator: str,
) -> dict[str, Plot]:
    """Every figure of the report, drawn without captions (the page shows them as text)."""
    plots = {
        "difficulty": difficulty_figure(report_hist, by=by, source=source, caption=False),
        "silent": silent_figure({estimator: frames["silent"]}, by=by, source=source, caption=False),
        "budget": budget_figure(frames["budget"], by=by, source=source, caption=False, estimator=estimator),
        "groupsize": groupsize_figure(
            drawn.curve,
            report_hist,
            options=options.groupsize,
            by=by,
            source=source,
            caption=False,
            points=drawn.points,
            estimator=drawn.estimator,
        ),
    }
    if options.track is not None:
        from sigmatool.track import Z_THRESHOLD  # tracked_run's band

        plots["track"] = track_figure(options.track, caption=False, z=Z_THRESHOLD)
    if (plan := options.plan) is not None:
        plots["plan"] = plan_figure(
            plan.allocation,
            plan.comparison,
            objective=plan.objective,
            caption=False,
            estimator=plan.estimator,
        )
    loop = options.preflight
    if loop is not None and loop.curve is not None:
        plots["preflight"] = preflight_figure(
            loop.curve, loop.settings, estimator=loop.estimator, caption=False
        )
    return plots


def build_report(inputs: Sequence[ReportInput], *, options: ReportOptions | None = None) -> Report:
    """Run silent (a G grid), budget (G = 8 and ∞) and groupsize (φ* = 0.9 by default) on each input's
    run, as the commands do, side by side when there are several (or ``by`` groups), and draw every figure.
    """
    o = options or ReportOptions()
    inputs = [i.under(o) for i in inputs]
    hist, by = combine(inputs)
    answers = [_analysed(i, o) for i in inputs]
    frames = {
        "silent": _stacked([a.silent.summary for a in answers], inputs),
        "budget": _stacked([a.budget.summary for a in answers], inputs),
        "groupsize": _stacked([a.groupsize.summary for a in answers], inputs),
    }
    curves = [a.groupsize.curve for a in answers if a.groupsize.curve is not None]
    points = [c.points for c in curves if c.points is not None]
    drawn = groupsize.curve(
        hist,
        by,
        o.groupsize,
        pl.concat(points, how="vertical_relaxed") if points else None,
        curves[0].estimator if curves else "plug-in",
    )
    source = "; ".join(i.label for i in inputs)
    warned = [_led(i.label, w) for i, a in zip(inputs, answers, strict=True) for w in _warnings(a)]
    return Report(
        inputs=tuple(inputs),
        options=o,
        hist=hist,
        by=by,
        silent={"": frames["silent"]},
        budget=frames["budget"],
        groupsize=frames["groupsize"],
        headlines=tuple(_headline(i, a, o) for i, a in zip(inputs, answers, strict=True)),
        plots=_plots(hist, by, frames, drawn, o, source, " / ".join(_labels(inputs))),
        warnings=tuple(dict.fromkeys(warned)),
    )


def tracked_run(inputs: InputOptions, estimate: Estimate = None, pass_at: int = 1) -> TrackResult:
    """The track of the run in a trainer's dumps (``inputs.trainer``) or a rollout log with a step column
    (``inputs.step_col``), as ``sigmatool track`` makes it, for the report's track section; the log's notes
    are left out (reading the input noted them). ``estimate``: the report's estimator and prior, as
    ``track --estimator --prior`` takes them."""
    from sigmatool import track
    from sigmatool.load.runs import run_log
    from sigmatool.track.groups import dump_groups

    groups, _ = dump_groups(run_log(inputs))
    return track.track_groups(groups, None, estimate=estimate, pass_at=pass_at)


def plan_frames_of(item: ReportInput, budget: float, options: ReportOptions | None = None) -> PlanFrames:
    """The plan of ``sigmatool plan --budget B`` (default sizes and objective) for the report's plan section,
    on the input's run (the report's prior), dividing by the report's σ."""
    from sigmatool.options.plan import plan_options
    from sigmatool.plan.core import plan_frames, plan_values
    from sigmatool.plan.groups import plan_input

    chosen = options or ReportOptions()
    # The same σ as the group-size section (with --from, the trainer's).
    request = plan_options(budget=budget, std=chosen.groupsize.std)
    assert item.run.histogram is not None
    return plan_frames(plan_values(*plan_input(item.run.histogram, (), item.run.val), request))

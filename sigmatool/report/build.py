"""Build a report: run the analyses on every input (and a run's track or a rollout plan when asked), draw
their figures, keep the frames for the tables."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sigmatool import budget, groupsize, preflight, silent
from sigmatool.estimators import Valuation
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
from sigmatool.options import BeyondOptions, InputOptions
from sigmatool.options.preflight import LoopSettings
from sigmatool.plan.core import PlanFrames
from sigmatool.preflight import PreflightResult
from sigmatool.report.html import render_html
from sigmatool.report.markdown import write_markdown
from sigmatool.report.model import ReportInput, ReportOptions, combine
from sigmatool.report.page import Headline, Page, inputs_table, sections, settings
from sigmatool.report.provenance import provenance
from sigmatool.session import Session
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

    def page(self) -> Page:
        """What the report shows, in order, for its writers."""
        o = self.options
        return Page(
            title=o.title,
            labels=tuple(i.label for i in self.inputs),
            inputs=inputs_table(self.inputs),
            settings=tuple(settings(o, tuple(self.silent), self.by)),
            notes=_notes(self.inputs),
            headlines=self.headlines,
            sections=tuple(
                sections(
                    self.silent,
                    self.budget,
                    self.groupsize,
                    self.by,
                    o.track,
                    o.plan,
                    o.track_headline,
                    _loop(o.preflight),
                )
            ),
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


def _notes(inputs: Sequence[ReportInput]) -> tuple[str, ...]:
    """Each input's notes, led by its label unless the note names it already (``the pass rates in 'm'``), and
    said once: notes alike but for their input merged (:func:`sigmatool.render.notes.merged`)."""
    from sigmatool.render.notes import merged

    led = [note if f"'{i.label}'" in note else f"{i.label}: {note}" for i in inputs for note in i.notes]
    return tuple(merged(led))


def _session(hist: pl.DataFrame, by: Sequence[str], options: ReportOptions) -> Session:
    """The run of one histogram under the report's estimator and prior: every section of it is valued by
    this one session's valuation, as the commands value the same data."""
    return Session(hist, tuple(by), options.estimator, BeyondOptions(options.prior))


def _silent(run: Session, options: ReportOptions) -> dict[str, pl.DataFrame]:
    """The silent summary over the report's grid of G, named by the run's estimator."""
    sizes = [float(G) for G in options.sizes]
    return {run.val.label: silent.summarize(run.values, run.by, sizes, prior=run.val)}


def _budget(run: Session, options: ReportOptions) -> pl.DataFrame:
    """The budget at each G of the report (8 and ∞ by default), valued by the run's valuation."""
    return budget.summarize(run.values, run.by, options.budget_sizes, prior=run.val)


def _sized(run: Session, options: ReportOptions, bins: int | None = 10) -> pl.DataFrame:
    """Every histogram row with its group size (under a prior, its posterior's), in bins of p."""
    return groupsize.sized_rows(run.values, run.by, options.groupsize, bins=bins, prior=run.val)


def _headline(item: ReportInput, options: ReportOptions) -> Headline:
    """The silent, budget and group-size sentences of the command-line tool, for one input as a whole."""
    run = _session(item.hist, (), options)
    val = run.val
    quiet = silent.summarize(item.hist, (), [8.0], prior=val)
    sentences = (
        silent.headline(quiet, val.posterior, bias=val.bias_note()),
        budget.headline(_budget(run, options)),
        groupsize.headline(_sized(run, options, bins=None), options.groupsize),
    )
    return Headline(item.label, tuple(s for s in sentences if s))


def _plots(
    report_hist: pl.DataFrame,
    by: tuple[str, ...],
    frames: dict[str, pl.DataFrame],
    silents: dict[str, pl.DataFrame],
    options: ReportOptions,
    source: str,
    val: Valuation,
) -> dict[str, Plot]:
    """Every figure of the report, drawn without captions (the page shows them as text)."""
    drawn = groupsize.plotted(report_hist, by, options.groupsize, val)
    plots = {
        "difficulty": difficulty_figure(report_hist, by=by, source=source, caption=False),
        "silent": silent_figure(silents, by=by, source=source, caption=False),
        "budget": budget_figure(frames["budget"], by=by, source=source, caption=False, estimator=val.label),
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
        from sigmatool.track import Z_THRESHOLD  # track_frame_of's band

        plots["track"] = track_figure(options.track, caption=False, z=Z_THRESHOLD)
    if options.plan is not None:
        plan = options.plan
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


def _loop(result: PreflightResult | None) -> tuple[str, pl.DataFrame, bool] | None:
    """The batch-loop section's headline and table, and whether it has a figure."""
    if result is None:
        return None
    return preflight.headline(result), result.summary, result.curve is not None


def preflight_of(item: ReportInput, settings: LoopSettings, options: ReportOptions) -> PreflightResult:
    """What ``sigmatool preflight DATA --config FILE`` finds with the loop ``settings`` (read from FILE), for
    the report's batch-loop section (under the report's prior and estimator)."""
    return _session(item.hist, (), options).preflight(settings, figure=True)


def build_report(inputs: Sequence[ReportInput], *, options: ReportOptions | None = None) -> Report:
    """Run silent (a G grid), budget (G = 8 and ∞) and groupsize (φ* = 0.9 by default) on the inputs,
    side by side when there are several (or ``by`` groups), and draw every figure.
    """
    o = options or ReportOptions()
    hist, by = combine(inputs)
    run = _session(hist, by, o)
    silents = _silent(run, o)
    frames = {
        "budget": _budget(run, o),
        "groupsize": groupsize.summarize_sized(_sized(run, o), by, o.groupsize, bins=10),
    }
    source = "; ".join(i.label for i in inputs)
    return Report(
        inputs=tuple(inputs),
        options=o,
        hist=hist,
        by=by,
        silent=silents,
        budget=frames["budget"],
        groupsize=frames["groupsize"],
        headlines=tuple(_headline(i, o) for i in inputs),
        plots=_plots(hist, by, frames, silents, o, source, run.val),
    )


def tracked_run(inputs: InputOptions, estimate: Estimate = None) -> TrackResult:
    """The track of the run in a trainer's dumps (``inputs.trainer``) or a rollout log with a step column
    (``inputs.step_col``), as ``sigmatool track`` makes it, for the report's track section; the log's notes
    are left out (reading the input noted them). ``estimate``: the report's estimator and prior, as
    ``track --estimator --prior`` takes them."""
    from sigmatool import track
    from sigmatool.load.runs import run_log
    from sigmatool.track.groups import dump_groups

    groups, _ = dump_groups(run_log(inputs))
    return track.track_groups(groups, None, estimate=estimate)


def track_frame_of(inputs: InputOptions) -> pl.DataFrame:
    """The figure's frame of :func:`tracked_run`, for the report's track section."""
    return tracked_run(inputs).band


def plan_frames_of(item: ReportInput, budget: float, options: ReportOptions | None = None) -> PlanFrames:
    """The plan of ``sigmatool plan --budget B`` (default sizes and objective) for the report's plan section,
    under the report's prior if it has one, dividing by the report's σ."""
    from sigmatool.options.plan import plan_options
    from sigmatool.plan.core import plan_frames, plan_values
    from sigmatool.plan.groups import plan_input

    chosen = options or ReportOptions()
    # The same σ as the group-size section (with --from, the trainer's).
    request = plan_options(budget=budget, std=chosen.groupsize.std)
    val = _session(item.hist, (), chosen).val
    return plan_frames(plan_values(*plan_input(item.hist, (), val), request))

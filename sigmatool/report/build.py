"""Build a report: run the analyses on every input (and a run's track or a rollout plan when asked), draw
their figures, keep the frames for the tables."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import polars as pl

from sigmatool import budget, estimators, groupsize, preflight, silent
from sigmatool.errors import UsageError
from sigmatool.estimators import Valuation, check_estimator
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
from sigmatool.options import InputOptions, resolve_prior
from sigmatool.options.preflight import LoopSettings
from sigmatool.plan.core import PlanFrames
from sigmatool.preflight import PreflightResult
from sigmatool.report.html import render_html
from sigmatool.report.markdown import write_markdown
from sigmatool.report.model import ReportInput, ReportOptions, combine
from sigmatool.report.page import Headline, Page, inputs_table, sections, settings
from sigmatool.report.provenance import provenance
from sigmatool.track import TrackResult


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
            notes=tuple((i.label, note) for i in self.inputs for note in i.notes),
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

    def write_markdown(self, path: str | os.PathLike[str], figure_format: str = "png") -> Path:
        """Write the report as Markdown, its figures (``svg`` or ``png``) in a folder beside it."""
        return write_markdown(self.page(), Path(path), figure_format)


@dataclass(eq=False)
class _Priors:
    """The prior of ``--prior`` for one histogram, fitted to each group at most once per prior, and made
    concrete per section: ``auto`` (the default) becomes the NPMLE prior for a section that asks about a
    G > n, as the command asked about the same G would (:func:`sigmatool.options.resolve_prior`), so the
    report's numbers are the commands'."""

    hist: pl.DataFrame
    by: Sequence[str]
    options: ReportOptions
    fitted: dict[tuple[str, str, str], Valuation] = field(default_factory=dict)

    def at(self, sizes: Sequence[float] = ()) -> Valuation:
        """The estimate of a section asking about these G (none: the group-size target, as ``groupsize``)."""
        hist, spec = self.hist, self.options.prior
        n_min = int(hist["n"].min()) if "n" in hist.columns and hist.height else None  # type: ignore[arg-type]
        spec = resolve_prior(spec, n_min, sizes, self.options.estimator)
        key = (spec.kind, repr(spec.a), repr(spec.b))
        if key not in self.fitted:
            self.fitted[key] = estimators.valuation(hist, self.by, prior=spec)
        # the fewest samples n when some finite G asked exceeds it, for the headline's note on the bias
        short = n_min if n_min is not None and any(n_min < G < math.inf for G in sizes) else None
        return replace(self.fitted[key], short=short)


def _valuation(
    hist: pl.DataFrame, by: Sequence[str], options: ReportOptions, sizes: Sequence[float] = ()
) -> Valuation:
    """The prior of ``--prior`` fitted to each input and group (the plug-in estimate without one), for a
    section asking about ``sizes`` (see :class:`_Priors`)."""
    return _Priors(hist, by, options).at(sizes)


def _silent(
    hist: pl.DataFrame, by: Sequence[str], options: ReportOptions, val: Valuation
) -> dict[str, pl.DataFrame]:
    """Plug-in over the whole grid; with the unbiased estimator also that, on the grid's G ≤ n; under a
    prior, its posterior means first."""
    out = {"plugin": silent.summarize(hist, by, [float(G) for G in options.sizes])}
    if val.posterior:
        out = {val.label: silent.summarize(hist, by, [float(G) for G in options.sizes], prior=val), **out}
    if options.estimator == "unbiased":
        check_estimator(hist, [min(options.sizes)], "unbiased")
        n_min = int(hist["n"].min())  # type: ignore[arg-type]
        sizes = [float(G) for G in options.sizes if G <= n_min]
        if not sizes:
            raise UsageError(f"--estimator unbiased: no G of the grid is ≤ the n = {n_min} logged samples")
        out = {"unbiased": silent.summarize(hist, by, sizes, estimator="unbiased"), **out}
    return out


def _budget(hist: pl.DataFrame, by: Sequence[str], options: ReportOptions, val: Valuation) -> pl.DataFrame:
    """The budget at each G with the chosen estimator (the G = ∞ limit is plug-in: no unbiased form
    exists), or under the prior."""
    parts = []
    for G in options.budget_sizes:
        if val.posterior:
            parts.append(budget.summarize(hist, by, [G], prior=val))
            continue
        estimator = "plugin" if math.isinf(G) else options.estimator
        parts.append(budget.summarize(hist, by, [G], estimator=estimator))
    return pl.concat(parts)


def _sized(hist: pl.DataFrame, by: Sequence[str], options: ReportOptions, val: Valuation) -> pl.DataFrame:
    """Every histogram row with its group size (under the prior, its posterior's), in bins of p."""
    return groupsize.sized_rows(hist, by, options.groupsize, bins=10, prior=val)


def _headline(item: ReportInput, options: ReportOptions) -> Headline:
    """The silent, budget and group-size sentences of the command-line tool, for one input as a whole."""
    hist = item.hist
    n_min = int(hist["n"].min()) if item.has_counts else 0  # type: ignore[arg-type]
    estimator = options.estimator if n_min >= 8 else "plugin"
    priors = _Priors(hist, (), options)
    at8 = priors.at([8.0])
    sized = groupsize.sized_rows(hist, (), options.groupsize, bins=None, prior=priors.at())
    quiet = silent.summarize(hist, (), [8.0], estimator=estimator, prior=at8 if at8.posterior else None)
    sentences = (
        silent.headline(quiet, at8.posterior, bias=at8.bias_note()),
        budget.headline(_budget(hist, (), options, priors.at(options.budget_sizes))),
        groupsize.headline(sized, options.groupsize),
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
    spent: Valuation,
) -> dict[str, Plot]:
    """Every figure of the report, drawn without captions (the page shows them as text)."""
    drawn = groupsize.plotted(report_hist, by, options.groupsize, val)
    plots = {
        "difficulty": difficulty_figure(report_hist, by=by, source=source, caption=False),
        "silent": silent_figure(silents, by=by, source=source, caption=False),
        "budget": budget_figure(frames["budget"], by=by, source=source, caption=False, estimator=spent.label),
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


def _loop(result: PreflightResult | None) -> tuple[str, pl.DataFrame] | None:
    """The batch-loop section's headline and table."""
    if result is None:
        return None
    return preflight.headline(result), result.summary


def preflight_of(item: ReportInput, settings: LoopSettings, options: ReportOptions) -> PreflightResult:
    """What ``sigmatool preflight DATA --config FILE`` finds with the loop ``settings`` (read from FILE), for
    the report's batch-loop section (under the report's prior and estimator)."""
    val = estimators.valuation(item.hist, (), settings.group_sizes, options.estimator, options.prior)
    return preflight.analyse(item.hist, settings, val, figure=True)


def build_report(inputs: Sequence[ReportInput], *, options: ReportOptions | None = None) -> Report:
    """Run silent (a G grid), budget (G = 8 and ∞) and groupsize (φ* = 0.9 by default) on the inputs,
    side by side when there are several (or ``by`` groups), and draw every figure.
    """
    o = options or ReportOptions()
    hist, by = combine(inputs)
    priors = _Priors(hist, by, o)
    silents = _silent(hist, by, o, priors.at([float(G) for G in o.sizes]))
    val = priors.at()
    frames = {
        "budget": _budget(hist, by, o, priors.at(o.budget_sizes)),
        "groupsize": groupsize.summarize_sized(_sized(hist, by, o, val), by, o.groupsize, bins=10),
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
        plots=_plots(hist, by, frames, silents, o, source, val, priors.at(o.budget_sizes)),
    )


def tracked_run(inputs: InputOptions) -> TrackResult:
    """The track of the run in a trainer's dumps (``inputs.trainer``), as ``sigmatool track`` makes it, for
    the report's track section; the log's notes are left out (reading the input noted them)."""
    from sigmatool import load, track
    from sigmatool.track.groups import dump_groups

    groups, _ = dump_groups(load.trainer_log(inputs))
    return track.track_groups(groups, None)


def track_frame_of(inputs: InputOptions) -> pl.DataFrame:
    """The figure's frame of :func:`tracked_run`, for the report's track section."""
    from sigmatool.figures.commands import track_frame

    return track_frame(tracked_run(inputs))


def plan_frames_of(item: ReportInput, budget: float, options: ReportOptions | None = None) -> PlanFrames:
    """The plan of ``sigmatool plan --budget B`` (default sizes and objective) for the report's plan section,
    under the report's prior if it has one, dividing by the report's σ."""
    from sigmatool.options.plan import plan_options
    from sigmatool.plan.core import plan_frames, plan_values
    from sigmatool.plan.groups import plan_input

    chosen = options or ReportOptions()
    # The same σ as the group-size section (with --from, the trainer's).
    request = plan_options(budget=budget, std=chosen.groupsize.std)
    val = _valuation(item.hist, (), chosen, request.sizes)
    return plan_frames(plan_values(*plan_input(item.hist, (), val), request))

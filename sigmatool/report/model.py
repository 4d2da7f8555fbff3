"""What a report is made of: its inputs (each a histogram with a label and a description) and its options."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePath

import polars as pl

from sigmatool.errors import UsageError
from sigmatool.load import Histogram, dataset, histogram
from sigmatool.options import GroupSizeOptions, InputOptions, PriorSpec
from sigmatool.options.verifier import Measured
from sigmatool.plan.core import PlanFrames
from sigmatool.preflight import PreflightResult
from sigmatool.report.provenance import InputFile, checked
from sigmatool.run import Run

INPUT_COLUMN = "input"
SILENT_SIZES = (2, 4, 8, 16, 32, 64, 128, 256)
BUDGET_SIZES = (8.0, math.inf)
ESTIMATORS = ("auto", "plugin", "unbiased")


@dataclass(frozen=True, eq=False)
class ReportInput:
    """One input: a short label, its run (as a command reads it: its histogram ``[by…]``, ``p``, …,
    ``prompts``, ``rows``, under the report's estimator and prior), and where it came from."""

    label: str
    run: Run
    source: str = ""
    by: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    files: tuple[InputFile, ...] = ()  # each file read, with its size and checksum

    def under(self, options: ReportOptions) -> ReportInput:
        """The input with its run under the report's estimator and prior, and its G grid asked (so that the
        valuation says where the plug-in is biased, G > n, as ``silent`` does)."""
        from sigmatool.options import BeyondOptions

        sizes = () if options.estimator == "unbiased" else tuple(float(G) for G in options.sizes)
        under = self.run.under(options.estimator, BeyondOptions(options.prior), sizes)
        return replace(self, run=under.denoised(options.denoise).passing(options.pass_at))

    @property
    def hist(self) -> pl.DataFrame:
        """The input's histogram of distinct values."""
        hist = self.run.histogram
        assert hist is not None  # a report reads histograms, never streamed rows
        return hist

    @property
    def rows(self) -> int:
        """Input rows behind the histogram (usable rows; one per prompt for rollout logs)."""
        return int(self.hist["rows"].sum()) if "rows" in self.hist.columns else 0

    @property
    def prompts(self) -> float:
        return float(self.hist["prompts"].sum())

    @property
    def has_counts(self) -> bool:
        return "n" in self.hist.columns


@dataclass(frozen=True, eq=False)
class ReportOptions:
    """What the report computes: G grid of the silent figure, G of the budget, the group-size target."""

    title: str = "sigmatool report"
    estimator: str = "auto"
    prior: PriorSpec = field(default_factory=lambda: PriorSpec("auto"))
    sizes: tuple[int, ...] = SILENT_SIZES
    budget_sizes: tuple[float, ...] = BUDGET_SIZES
    groupsize: GroupSizeOptions = field(default_factory=GroupSizeOptions)
    track: pl.DataFrame | None = None
    track_headline: str = ""  # what the run's track shows, as ``sigmatool track`` says it
    plan: PlanFrames | None = None
    preflight: PreflightResult | None = None  # what the batch loop of --preflight-config does
    command: str | None = None  # the command line that asked for the report, for its provenance
    pass_at: int = 1  # --pass-at: the credit the trainer trains on; the G grid starts at K (docs/passk.md)
    denoise: Measured | None = None  # --denoise: the grader the counts were graded by (docs/verifiers.md)

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise UsageError(f"--estimator must be auto, plugin or unbiased, not {self.estimator!r}")
        finite = [G for G in self.budget_sizes if math.isfinite(G)]
        if finite and self.pass_at > min(finite):
            raise UsageError(
                f"--pass-at {self.pass_at} > G = {min(finite):g}, the report's gradient budget: a group of "
                "fewer than K answers has no pass@K"
            )
        object.__setattr__(self, "sizes", tuple(G for G in self.sizes if G >= self.pass_at))
        if not self.sizes or min(self.sizes) < 1:
            raise UsageError("the report's G grid needs whole numbers ≥ 1")


def report_input(options: InputOptions, label: str | None = None) -> ReportInput:
    """Load ``options``' data, build its histogram and describe it (files, columns used, notes)."""
    with dataset(options) as ds:
        return described(histogram(ds), label)


def described(read: Histogram, label: str | None = None) -> ReportInput:
    """A histogram read by :mod:`sigmatool.load` as a report input, with its run (as a command makes it;
    the report puts it under its estimator and prior); ``label`` defaults to the file's name."""
    ds, options = read.dataset, read.dataset.options
    files = [source.label for source in ds.sources]
    if label is None:
        label = PurePath(files[0]).name if len(files) == 1 else f"{len(files)} files"
    if options.samples is not None:
        samples = f"; --samples {options.samples}"
    elif ds.grid is not None:  # read on the 1/n grid its rows show
        samples = f"; k of {ds.grid.n}"
    else:
        samples = ""
    rollouts = "; rollout rows" if options.rollouts else ""
    return ReportInput(
        label=label,
        run=Run.of(read, ds.by, label=label),
        source=", ".join(files) + samples + rollouts,
        by=tuple(ds.by),
        columns=ds.options.columns_used,
        notes=tuple(read.notes),
        files=tuple(checked(source.label, source.path) for source in ds.sources),
    )


def combine(inputs: Sequence[ReportInput]) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """One histogram for all inputs: with several, an ``input`` column (the labels) leads the ``by`` columns."""
    if not inputs:
        raise UsageError("a report needs at least one input")
    by = inputs[0].by
    if any(i.by != by for i in inputs):
        raise UsageError("the report's inputs must share the same --by columns")
    if len(inputs) == 1:
        return inputs[0].hist, by
    labels = [i.label for i in inputs]
    if len(set(labels)) != len(labels):
        raise UsageError(f"the report's inputs need distinct labels, not {', '.join(labels)}")
    if INPUT_COLUMN in by:
        raise UsageError(
            f"--by {INPUT_COLUMN}: the report names its inputs in a column of that name; rename it"
        )
    common = [c for c in inputs[0].hist.columns if all(c in i.hist.columns for i in inputs)]
    parts = [
        i.hist.select(common).with_columns(pl.lit(i.label, dtype=pl.String).alias(INPUT_COLUMN))
        for i in inputs
    ]
    hist = pl.concat(parts, how="vertical_relaxed")
    return hist.select([INPUT_COLUMN, *common]), (INPUT_COLUMN, *by)

"""``sigmatool report``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import prior_option
from sigmatool.cli.params import (
    EstimatorOpt,
    OutputFile,
    PlanBudgetOpt,
    StepColOpt,
    denoise_option,
    group_options,
    pass_at_option,
    read_options,
    renamed,
    uses,
)
from sigmatool.errors import DataError
from sigmatool.options import Estimator, InputOptions, OutputOptions, PriorSpec, ReportFile, check_prior
from sigmatool.options.analyses import groupsize_options
from sigmatool.options.figures import report_labels
from sigmatool.options.verifier import Measured
from sigmatool.progress import working
from sigmatool.trainers.std import trainer_std

if TYPE_CHECKING:
    from sigmatool.report import ReportInput, ReportOptions
    from sigmatool.trainers.settings import LoopSettings


ReportData = Annotated[
    list[str] | None,
    typer.Argument(
        help="Inputs to compare side by side: each DATA (a file, a glob read as one input, or '-') is one "
        "input. With none: stdin when it is a pipe or a file, else the bundled Big-Math sample.",
        show_default=False,
    ),
]
OldFormat = Annotated[
    str | None,
    renamed(
        "--format",
        "-f",
        now="the report's format follows -o's extension: -o FILE.html (one page) or -o FILE.md",
    ),
]


PreflightConfigOpt = Annotated[
    str | None,
    typer.Option(
        "--preflight-config",
        metavar="FILE",
        help="Add what the batch loop of this verl, SkyRL or TRL config will do with the input, as `sigmatool "
        "preflight DATA --config FILE` finds it; one DATA, no --by.",
        show_default=False,
    ),
]


@app.command("report")
@uses(read=read_options, by=group_options, prior=prior_option, pass_at=pass_at_option, denoise=denoise_option)
def report_command(
    output: OutputFile = None,
    data: ReportData = None,
    title: Annotated[str, typer.Option("--title", help="The report's title.")] = "sigmatool report",
    estimator: EstimatorOpt = Estimator.auto,
    plan_budget: PlanBudgetOpt = None,
    preflight_config: PreflightConfigOpt = None,
    step_col: StepColOpt = None,
    by: tuple[str, ...] = (),
    read: InputOptions = InputOptions(),
    prior: PriorSpec = PriorSpec(),
    pass_at: tuple[int, ...] = (),
    denoise: Measured | None = None,
    old_format: OldFormat = None,
) -> None:
    """Every analysis of one or more inputs on one page: figures, tables and the headline sentences.

    The page shows the difficulty histogram, silent groups at G = 2 … 256, the gradient budget at G = 8 and ∞
    and the group size for fidelity 0.9, each input (or --by group) side by side. HTML is one self-contained
    file (inline SVG figures and styles, no script, nothing fetched) that prints cleanly; Markdown links
    its figures as PNG files. Both end with the provenance: the sigmatool version, this command line, each
    input file's size and SHA-256, and the time (SOURCE_DATE_EPOCH, when set). The input options apply to every input. A trainer's dumps (--from), or a
    --rollouts log with --step-col, add the run's track, step by step, --plan-budget a rollout plan and --preflight-config the trainer's batch loop. With counts, --prior adds each prompt's posterior
    means (docs/prior.md) to every table, figure and headline, beside the plug-in silent share.

    Several DATA are compared side by side (sigmatool report old.parquet new.parquet -o both.html); quote a
    glob ('runs/*.parquet') to read its files as one input. Several --col (or a glob of names) apply each to
    the inputs that have that column, each column of each input compared as an input of its own.

    Examples:

        sigmatool report sample_data/bigmath_solve_rates.parquet -o report.html

        sigmatool report sample_data/toy_pass_rates.csv --by source -o toy.md
    """
    target = ReportFile(output or "")
    everything = replace(read, paths=tuple(data or ()), by=by, step_col=step_col)
    target.check_plan(plan_budget, everything, preflight_config)
    check_prior(prior, has_counts=True, estimator=estimator.value)  # counts: checked once read (a 1/n grid)
    run.check(everything, OutputOptions(), ("-o", target.path))
    loop = _loop_settings(preflight_config)  # a bad config is refused before the data are read
    from sigmatool.report import build_report

    options = replace(_options(title, estimator.value, prior, pass_at), denoise=denoise)
    items = _items(everything)
    with working("building the report"):
        options = _sections(_tracked(options, everything), items[0], plan_budget, loop)
        build_report(items, options=options).write(target.path, target.format)


def _options(title: str, estimator: str, prior: PriorSpec, pass_at: tuple[int, ...]) -> ReportOptions:
    """What the report computes, as asked: under --pass-at's one K (pass@1 without it)."""
    from sigmatool.report import ReportOptions

    K = run.checked_credits(pass_at, (), many=False)
    return ReportOptions(title, estimator, prior, command=run.command_line(), pass_at=K[0] if K else 1)


def _tracked(options: ReportOptions, everything: InputOptions) -> ReportOptions:
    """With --from, the trainer's std for the group-size section, noted; with --from or a --rollouts log's
    --step-col, and one DATA, the run's track section (as ``sigmatool track`` makes it)."""
    std, note = trainer_std(None, everything.trainer)
    if note is not None:
        run.note([note])
        options = replace(options, groupsize=groupsize_options(std=std))
    if everything.trainer is None and everything.step_col is None:
        return options
    if len(everything.paths) > 1:
        run.note(["the report tracks one run: give one DATA for its track section"])
        return options
    from sigmatool.report import tracked_run
    from sigmatool.track import headline

    result = tracked_run(everything, (options.estimator, options.prior), options.pass_at)
    return replace(options, track=result.band, track_headline=headline(result))


def _items(everything: InputOptions) -> list[ReportInput]:
    """Each DATA as the report's inputs (one per --col it has, with several); every --col (name or glob)
    must be a column of some input."""
    from sigmatool.load.several import unmatched

    names = report_labels(everything.paths)
    each = [replace(everything, paths=(path,)) for path in everything.paths] or [everything]
    items = [
        item
        for one, name in zip(each, names or [None], strict=True)
        for item in _inputs(one, name, len(each) > 1)
    ]
    missing = unmatched(everything.cols, [c for item in items for c in item.columns])
    if missing:
        raise DataError(f"--col {', '.join(missing)}: no input has such a column")
    return items


def _loop_settings(config: str | None) -> LoopSettings | None:
    """The batch loop of ``--preflight-config FILE``, checked."""
    if config is None:
        return None
    from sigmatool.trainers.loops import loop_settings

    return loop_settings((), config, {}, option="--preflight-config")[0]


def _sections(
    options: ReportOptions, item: ReportInput, plan_budget: float | None, loop: LoopSettings | None
) -> ReportOptions:
    """The options with the rollout plan and the batch loop asked for (one input, under the report's
    estimator and prior)."""
    from sigmatool.report import plan_frames_of

    item = item.under(options)
    if plan_budget is not None:
        options = replace(options, plan=plan_frames_of(item, plan_budget, options))
    if loop is not None:
        options = replace(options, preflight=item.run.preflight(loop, figure=True))
    return options


def _inputs(options: InputOptions, label: str | None, several: bool) -> list[ReportInput]:
    """The input as the report shows it: with several --col, one item per column it has, labelled by the
    column (and the input's name, when there are several inputs)."""
    from sigmatool import load
    from sigmatool.report import described

    if not options.cols:
        with load.dataset(options) as ds:
            return [described(run.histogram_noted(ds), label)]
    items = []
    with load.column_datasets(options) as parts:
        for part in parts:
            column = part.options.col or ""
            named = f"{label or '<stdin>'}: {column}" if several else column
            items.append(described(run.histogram_noted(part), named))
    return items

"""``sigmatool track``."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import prior_option
from sigmatool.cli.params import (
    EstimatorOpt,
    InvalidOpt,
    PerPrompt,
    ResolutionOpt,
    output_options,
    pass_at_option,
    plot_options,
    renamed,
    run_log_options,
    uses,
)
from sigmatool.errors import UsageError
from sigmatool.options import (
    Estimator,
    InputOptions,
    LogOptions,
    OutputOptions,
    PlotOptions,
    PriorSpec,
    TrackOptions,
)
from sigmatool.options.analyses import DEFAULT_WINDOW, Expect, parsed_track_options

if TYPE_CHECKING:
    import polars as pl

    from sigmatool.rewards import RewardsResult
    from sigmatool.track import TrackResult
    from sigmatool.track.prompts import Stories
    from sigmatool.trainers.dumps import TrainerLog

RATES = "Expected"
_expected = functools.partial(typer.Option, rich_help_panel=RATES)  # an option of that panel

DumpsArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Dump files, globs or folders (--from), or a rollout log's files (--rollouts; none with --table).",
        show_default=False,
    ),
]
PassRatesOpt = Annotated[
    str | None,
    _expected(
        "--pass-rates",
        metavar="FILE",
        help="Expect from these pass rates (any input form; per step with a step column) instead of "
        "leave-one-step-out.",
    ),
]
RatesKeyOpt = Annotated[
    str | None,
    _expected(
        "--pass-rates-key",
        metavar="COL",
        help="Prompt column of --pass-rates: text is hashed as the dumps' prompt text is; whole numbers are "
        "such hashes (as --export-pass-rates writes them).",
        show_default="prompt",
    ),
]
RatesColOpt = Annotated[
    str | None,
    _expected(
        "--pass-rates-col",
        metavar="COL",
        help="Pass-rate column of --pass-rates, any form.",
        show_default="k and n, else p, else detected",
    ),
]
ExpectOpt = Annotated[
    Expect,
    _expected(
        "--expect",
        help="Without --pass-rates, expect each step from each prompt's rollouts in all the other steps "
        "(leave-one-step-out: a stationary run) or in the --window steps before and after it (window: a "
        "learning run).",
    ),
]
WindowOpt = Annotated[
    int | None,
    _expected(
        "--window",
        min=1,
        max=1_000_000,
        metavar="K",
        help="With --expect window: the steps before and after each step whose rollouts give its expectation.",
        show_default=str(DEFAULT_WINDOW),
    ),
]
ZOpt = Annotated[
    float,
    _expected(
        "--z", metavar="Z", help="A step drifts when |z| ≥ Z (Z > 0) and the gap is at least --min-gap."
    ),
]
MinGapOpt = Annotated[
    float,
    _expected(
        "--min-gap",
        help="The smallest gap between measured and expected silent fractions that counts (0–1).",
    ),
]
SummaryOpt = Annotated[
    bool,
    typer.Option("--summary", help="Output the run's one-row summary (R², bias, drift)."),
]
ExportOpt = Annotated[
    str | None,
    typer.Option(
        "--export-pass-rates",
        metavar="FILE",
        help="Also write prompt, k, n over the run to FILE; every command reads it with --k-col k --n-col n.",
    ),
]
ExportStepsOpt = Annotated[
    str | None,
    typer.Option("--export-steps", metavar="A..B", help="--export-pass-rates writes steps A to B only."),
]
OldSteps = Annotated[
    str | None,
    renamed("--steps", now="the window that --export-pass-rates writes is --export-steps A..B"),
]


def track_options(
    pass_rates: PassRatesOpt = None,
    expect: ExpectOpt = Expect.leave_one_step_out,
    window: WindowOpt = None,
    rates_key: RatesKeyOpt = None,
    rates_col: RatesColOpt = None,
    z_threshold: ZOpt = 4.0,
    min_gap: MinGapOpt = 0.02,
    summary: SummaryOpt = False,
    export: ExportOpt = None,
    steps: ExportStepsOpt = None,
    per_prompt: PerPrompt = False,
    invalid: InvalidOpt = None,
    resolution: ResolutionOpt = None,
) -> TrackOptions:
    """Where the expectation comes from, the drift rule, the view, the export (:func:`parsed_track_options`)."""
    return parsed_track_options(pass_rates=pass_rates, expect=expect, window=window,
                                rates_key=rates_key, rates_col=rates_col,
                                z_threshold=z_threshold, min_gap=min_gap, summary=summary,
                                export=export, steps=steps, per_prompt=per_prompt,
                                invalid=invalid and invalid.value, resolution=resolution)  # fmt: skip


@app.command("track")
@uses(
    log=run_log_options,
    options=track_options,
    out=output_options,
    plot=plot_options,
    prior=prior_option,
    pass_at=pass_at_option,
)
def track_command(
    dumps: DumpsArg = None,
    estimator: EstimatorOpt = Estimator.auto,
    log: LogOptions = LogOptions(),
    options: TrackOptions = TrackOptions(),
    out: OutputOptions = OutputOptions(),
    plot: PlotOptions = PlotOptions(),
    prior: PriorSpec = PriorSpec(),
    pass_at: tuple[int, ...] = (),
    old_steps: OldSteps = None,
) -> None:
    """A training run step by step: the silent groups each step measured against how many were expected.

    A group of G answers of a prompt with pass rate p is silent (σ = 0, no gradient) with probability
    p^G + (1−p)^G. Each row is one step of the dumps: its groups and their sizes, the mean reward, the
    measured silent fraction (what TRL logs as frac_reward_zero_std) and its all-right and all-wrong
    halves, the expected silent fraction, and z, the gap in binomial standard deviations. The expectation
    comes from --pass-rates, or from each prompt's rollouts in the other steps (leave-one-step-out, never
    the step's own). The headline gives the run's R² and mean bias and names the steps that drift: a
    filter, learning, or a change of data or reward. --plot draws the measured against the expected
    silent share per step, the expectation banded by ± the drift rule's z binomial deviations. Any rollout
    log with a step column: --rollouts --prompt-col P --reward-col R --step-col S. --per-prompt: one row per
    prompt over the run (learned, forgotten, never or always solved).

    Example:

        sigmatool track sample_data/example_run --from verl
    """
    K = run.checked_credits(pass_at, (), many=False)
    inputs = _checked(log.dumps(dumps or [], "track"), options, out, plot)
    if options.resolution is not None:  # from the raw rewards
        return run.show(_ties(_run_log(inputs), options.resolution, log), out)
    groups = groups_of(_run_log(inputs), options.invalid)
    shown = (
        _stories(groups, plot)
        if options.per_prompt
        else _tracked(groups, options, (estimator.value, prior), K[0] if K else 1)
    )
    _export(groups, options)
    run.show(shown, out, plot, ", ".join(dumps or [f"table {log.table}"]))


def _run_log(inputs: InputOptions) -> TrainerLog:
    """The run's rollouts (:func:`sigmatool.load.runs.run_log`), imported once the options are checked."""
    from sigmatool.load.runs import run_log

    return run_log(inputs)


def _ties(trainer_log: TrainerLog, resolution: float, log: LogOptions) -> RewardsResult:
    """--resolution: each step's silent groups from their raw rewards (--threshold grades them instead)."""
    from sigmatool.rewards import track_ties

    if log.threshold is not None:
        raise UsageError(
            "--resolution reads the raw rewards; --threshold grades them right or wrong: give one"
        )
    run.note(trainer_log.notes)
    return track_ties(trainer_log.frame, resolution)


def _tracked(
    groups: pl.DataFrame, options: TrackOptions, estimate: tuple[str, PriorSpec], pass_at: int = 1
) -> TrackResult:
    """The step table (or the run's summary), expected from the table of --pass-rates when given (its notes
    said); silent under pass@``pass_at`` credit."""
    from sigmatool.track.asked import tracked

    rates = None
    if options.pass_rates is not None:
        from sigmatool.track.rates import rate_table

        rates, notes = rate_table(options.pass_rates, options.rates_key, options.rates_col)
        run.note(notes)
    return tracked(groups, rates, options, estimate, pass_at)


def _stories(groups: pl.DataFrame, plot: PlotOptions) -> Stories:
    """--per-prompt: one row per prompt over the run."""
    from sigmatool.track.prompts import Stories, prompt_stories

    if plot.path is not None:
        raise UsageError("--per-prompt has no figure: --plot draws the step table")
    return Stories(prompt_stories(groups))


def _checked(
    inputs: InputOptions, options: TrackOptions, out: OutputOptions, plot: PlotOptions
) -> InputOptions:
    """The dumps, checked with the pass-rate table and every output before anything is read."""
    rates_file = [options.pass_rates] if options.pass_rates else []
    run.check(
        replace(inputs, paths=(*inputs.paths, *rates_file)),
        out,
        ("--export-pass-rates", options.export),
        plot.output,
    )
    return inputs


def _export(groups: pl.DataFrame, options: TrackOptions) -> None:
    """--export-pass-rates: the run's per-prompt counts, written."""
    if options.export is not None:
        from sigmatool.render import write_frame
        from sigmatool.track.asked import exported

        write_frame(
            exported(groups, options), OutputOptions("auto", options.export), option="--export-pass-rates"
        )


def groups_of(trainer_log: TrainerLog, invalid: str | None = None) -> pl.DataFrame:
    """The run's groups, read once; a reward that cannot be graded stops it (with --invalid, counted per
    step), missing ones are noted."""
    from sigmatool.track.groups import dump_groups

    groups, notes = dump_groups(trainer_log, allow_bad=invalid is not None)
    run.note(notes)
    return groups

"""``sigmatool curriculum``."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import Analysed, analysed_options
from sigmatool.cli.params import Epochs, EstimatorOpt, GroupSizes, PerPrompt, Seed, Steps, uses
from sigmatool.options import Estimator
from sigmatool.options.curriculum import (
    DEFAULT_BATCH,
    DEFAULT_BUCKETS,
    DEFAULT_MEAN,
    DEFAULT_WIDTH,
    BucketWeight,
    CurriculumOptions,
    Schedule,
    checked_for,
    parsed_curriculum_options,
)
from sigmatool.shown import RowsResult

if TYPE_CHECKING:
    from sigmatool.curriculum import CurriculumResult
    from sigmatool.run import Run

# What the command runs once its options are checked (imported before the garbage collector resumes).
ANALYSIS = ("sigmatool.estimators", "sigmatool.curriculum", "sigmatool.render")
SCHEDULE = "The schedule"


_opt = functools.partial(typer.Option, rich_help_panel=SCHEDULE)  # an option of the schedule's panel


ScheduleOpt = Annotated[Schedule, _opt("--schedule", help="How a step weighs prompts by p.")]
BatchOpt = Annotated[int, _opt("--batch-size", metavar="B", help="Distinct prompts drawn per step.")]
MeanOpt = Annotated[
    str,
    _opt(
        "--mean",
        metavar="START:END",
        help="gaussian: the mean pass rate μ; it moves linearly from START at the first step to END at the "
        "last.",
        show_default=f"{DEFAULT_MEAN[0]:g}:{DEFAULT_MEAN[1]:g}",
    ),
]
WidthOpt = Annotated[
    float, _opt("--width", metavar="S", help="gaussian: its width S; the standard deviation over p.")
]
PoolsOpt = Annotated[
    str | None,
    _opt(
        "--pools",
        metavar="LO-HI:W,…",
        help="pools: pass-rate ranges, relative weights; uniform within each, a prompt in the first pool "
        "that holds it, e.g. 0-0.2:1,0.2-0.8:3,0.8-1:1.",
    ),
]
BandOpt = Annotated[str, _opt("--band", metavar="LO,HI", help="band: uniform over LO ≤ p ≤ HI.")]
BucketsOpt = Annotated[int, _opt("--buckets", metavar="K", help="buckets: K quantile buckets; equal shares.")]
BucketWeightOpt = Annotated[
    BucketWeight,
    _opt("--bucket-weight", help="buckets: the weight within; variance 4p(1 − p), hardness 1 − p."),
]
DropSolved = Annotated[bool, _opt("--drop-solved", help="Leave out prompts always solved (p̂ = 1).")]
DropUnsolved = Annotated[bool, _opt("--drop-unsolved", help="Leave out prompts never solved (p̂ = 0).")]
BlendOpt = Annotated[
    str | None,
    _opt(
        "--blend",
        metavar="NAME=W,…",
        help="--by COL: each group's share of a step; unless given, in proportion to its prompts.",
    ),
]
EveryOpt = Annotated[int, typer.Option("--every", metavar="K", help="One row every K steps (and the last).")]
ExportOrder = Annotated[
    str | None,
    typer.Option(
        "--export-order",
        metavar="FILE",
        help="Write the prompts each step draws; T × B rows (distinct within a step) with every input "
        "column, step and row: the file a dataloader reads in order, shuffle off.",
    ),
]


def schedule_options(
    schedule: ScheduleOpt = Schedule.gaussian,
    batch: BatchOpt = DEFAULT_BATCH,
    mean: MeanOpt = f"{DEFAULT_MEAN[0]:g}:{DEFAULT_MEAN[1]:g}",
    width: WidthOpt = DEFAULT_WIDTH,
    pools: PoolsOpt = None,
    band: BandOpt = "0.2,0.8",
    buckets: BucketsOpt = DEFAULT_BUCKETS,
    bucket_weight: BucketWeightOpt = BucketWeight.variance,
    drop_solved: DropSolved = False,
    drop_unsolved: DropUnsolved = False,
    blend: BlendOpt = None,
    steps: Steps = 150,
    epochs: Epochs = None,
    group_sizes: GroupSizes = None,
    every: EveryOpt = 1,
    estimator: EstimatorOpt = Estimator.auto,
    seed: Seed = None,
) -> CurriculumOptions:
    """The schedule and the run it is predicted for (parsed and checked by :func:`parsed_curriculum_options`)."""
    return parsed_curriculum_options(schedule=schedule, batch=batch, mean=mean, width=width,
                                     pools=pools, band=band, buckets=buckets,
                                     bucket_weight=bucket_weight, drop_solved=drop_solved,
                                     drop_unsolved=drop_unsolved, blend=blend, steps=steps,
                                     epochs=epochs, group_sizes=group_sizes, every=every,
                                     estimator=estimator, seed=seed)  # fmt: skip


@app.command("curriculum")
@uses(given=analysed_options, options=schedule_options)
def curriculum_command(
    export_order: ExportOrder = None,
    per_prompt: PerPrompt = False,
    options: CurriculumOptions = CurriculumOptions(),
    given: Analysed = Analysed(),
) -> None:
    """A difficulty schedule, predicted step by step and written for the trainer.

    Each step draws --batch-size distinct prompts, weighted by their pass rate p as the schedule says:
    gaussian (around a mean that moves from START to END over the run), pools, band, buckets or
    easy-first. Per step: the expected pass rate of a drawn prompt, the silent, all-right and all-wrong
    shares of its groups of G, DAPO's draws per kept group, GRPO's and Dr. GRPO's signal per group, the
    effective number of prompts and the share drawn before; the headline compares uniform sampling and
    says when a sampler that never repeats a prompt runs dry. Exact expectations under the stated
    sampling (docs/curriculum.md); --export-order writes the draws, --per-prompt each row's weight
    (static schedules); --plot draws silent share and pass rate against step.

    Examples:

        sigmatool curriculum sample_data/bigmath_solve_rates.parquet --mean 0.8:0.3

        sigmatool curriculum sample_data/bigmath_solve_rates.parquet --schedule band
    """
    options = checked_for(options, given.inputs.by, given.inputs.cols, given.grader, per_prompt)
    with run.session(given, estimator=options.estimator, stream=False, sizes=(options.G,),
                     imports=ANALYSIS, per_prompt=per_prompt or bool(export_order),
                     outputs=[("--export-order", export_order)]) as s:  # fmt: skip
        result = s.curriculum(options)
        run.note(list(result.notes))
        if export_order:
            run.write_rows(s.curriculum_rows(result, order=True), export_order, _record(s, result, "order"))
        run.answer(_rows(s, result, given.out.output) if per_prompt else result, given, s)


def _rows(s: Run, result: CurriculumResult, output: str | None) -> RowsResult:
    """--per-prompt: the rows of each prompt, with the run's figure and warnings (and into a file, the
    record of what made them)."""
    record = _record(s, result, "weights") if output and output != "-" else None
    return RowsResult(s.curriculum_rows(result, order=False), result, result.warnings(), record)


def _record(s: Run, result: CurriculumResult, kind: str) -> dict[str, Any]:
    """What made a schedule file (:mod:`sigmatool.integrations.meta`), written with it."""
    from sigmatool.integrations.meta import curriculum_record

    assert s.dataset is not None
    return curriculum_record(s.dataset, result, kind, run.command_line())

"""``sigmatool preflight``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import click
import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import Analysed, analysed_options
from sigmatool.cli.params import Epochs, EstimatorOpt, Steps, uses
from sigmatool.errors import UsageError
from sigmatool.options import Estimator, PlotOptions
from sigmatool.options.analyses import check_one_loop
from sigmatool.trainers.loops import loop_settings
from sigmatool.trainers.settings import DEFAULT_RISK, DEFAULT_SILENT_OVER, TRAINERS, LoopSettings

if TYPE_CHECKING:
    from sigmatool.run import Run
    from sigmatool.shown import Shown

# What the command runs once its options are checked (imported before the garbage collector resumes).
ANALYSIS = ("sigmatool.estimators", "sigmatool.preflight", "sigmatool.render")

LOOP = "The trainer's loop (flags win over --config and key=value overrides)"


def _loop(flag: str, *, help: str, default: object) -> object:
    """A setting of the loop: None until given, so that --config and key=value may set it; ``default`` is
    verl's, shown in the help."""
    return typer.Option(flag, metavar="N", help=help, rich_help_panel=LOOP, show_default=str(default))


VERL = LoopSettings()
TrainBatch = Annotated[
    int | None,
    _loop(
        "--train-batch-size",
        help="Kept prompts per step. verl: data.train_batch_size.",
        default=VERL.train_batch_size,
    ),
]
GenBatch = Annotated[
    int | None,
    _loop(
        "--gen-batch-size",
        help="Prompts per generation batch. verl: data.gen_batch_size.",
        default="the train batch size",
    ),
]
Rollouts = Annotated[
    int | None, _loop("--n", help="Rollouts per prompt. verl: actor_rollout_ref.rollout.n.", default=VERL.n)
]
MaxGen = Annotated[
    int | None,
    _loop(
        "--max-gen-batches",
        help="Generation batches a step may draw before it raises; 0: endless "
        "(verl algorithm.filter_groups.max_num_gen_batches).",
        default=VERL.max_gen_batches,
    ),
]
FilterOpt = Annotated[
    bool | None,
    typer.Option(
        "--filter/--no-filter",
        help="Drop groups whose rewards all agree and draw more (DAPO's dynamic sampling); --no-filter "
        "trains on every group (the plain loop).",
        rich_help_panel=LOOP,
        show_default="--filter",
    ),
]
Risk = Annotated[
    float,
    typer.Option(
        "--risk", metavar="ε", help="The acceptable chance of a crash over the whole run, in (0, 1)."
    ),
]
SilentOver = Annotated[
    float,
    typer.Option(
        "--silent-over",
        metavar="X",
        help="Without the filter: the chance that more than this share of a batch is silent.",
    ),
]
ConfigOpt = Annotated[
    str | None,
    typer.Option(
        "--config",
        metavar="FILE",
        help="The loop's settings from the trainer's config (verl, NeMo-RL, SkyRL, AReaL, slime's launch "
        "script, TRL). key=value after DATA overrides them.",
        rich_help_panel=LOOP,
    ),
]
LoopTrainer = Annotated[
    str | None,
    typer.Option(
        "--trainer",
        click_type=click.Choice(list(TRAINERS)),
        help="Whose loop (docs/preflight.md).",
        rich_help_panel=LOOP,
        show_default="whose keys --config holds, else verl",
    ),
]


def _settings(
    given: Analysed, config: str | None, flags: Mapping[str, object], trainer: str | None = None
) -> tuple[LoopSettings, Analysed]:
    """The loop's settings (the trainers wing reads the config, the overrides and the flags) and DATA without
    the key=value arguments; the wing's notes and the settings read from a config, said."""
    settings, paths, notes, read = loop_settings(given.inputs.paths, config, flags, trainer)
    run.note(notes)
    if read:
        run.note([f"the loop's settings: {', '.join(read)}"])
    return settings, replace(given, inputs=replace(given.inputs, paths=paths))


def loop_options(
    train_batch_size: TrainBatch = None,
    gen_batch_size: GenBatch = None,
    n: Rollouts = None,
    max_gen_batches: MaxGen = None,
    filter: FilterOpt = None,
    steps: Steps = 150,
    epochs: Epochs = None,
    risk: Risk = DEFAULT_RISK,
    silent_over: SilentOver = DEFAULT_SILENT_OVER,
) -> dict[str, object]:
    """The loop's flags that the command line gave (a default is not an answer: --config may hold one)."""
    given: dict[str, object] = {"train_batch_size": train_batch_size, "gen_batch_size": gen_batch_size,
                                "n": n, "max_gen_batches": max_gen_batches, "filter": filter,
                                "steps": steps, "epochs": epochs, "risk": risk,
                                "silent_over": silent_over}  # fmt: skip
    ctx = click.get_current_context()
    default = click.core.ParameterSource.DEFAULT
    explicit = {
        k: v for k, v in given.items() if v is not None and ctx.get_parameter_source(k) is not default
    }
    return {"risk": risk, "silent_over": silent_over, **explicit}


@app.command("preflight")
@uses(given=analysed_options, loop=loop_options)
def preflight_command(
    config: ConfigOpt = None,
    whose: LoopTrainer = None,
    estimator: EstimatorOpt = Estimator.auto,
    loop: dict[str, object] = {},  # noqa: B006 - replaced by the loop's flags
    given: Analysed = Analysed(),
) -> None:
    """What a trainer's DAPO batch loop will do with this dataset: crashes, batches, rollouts thrown away.

    Each generation batch draws --gen-batch-size prompts with --n rollouts each; groups whose rewards all
    agree are dropped; batches are drawn until --train-batch-size prompts are kept, the surplus is cut, and a
    step still short after --max-gen-batches batches raises 'Generated too many'. A prompt's group is kept
    with chance 1 − p^n − (1 − p)^n, so a batch's kept count is Binomial(B, mean keep rate), exactly, and
    every figure follows (docs/preflight.md). The smallest gen batch size and the smallest cap that keep the
    run's crash chance ≤ --risk come with it. --no-filter: the silent share of each batch, and the update it
    costs. --trainer models NeMo-RL's, SkyRL's, slime's or AReaL's loop instead of verl's; --config reads
    the trainer's own settings; --prior and --estimator as in the other commands.

    Example:

        sigmatool preflight sample_data/bigmath_solve_rates.parquet --samples 64

        sigmatool preflight sample_data/bigmath_solve_rates.parquet --trainer slime
    """
    settings, given = _settings(given, config, loop, whose)
    check_one_loop(given.inputs, plotted=given.plot.path is not None)
    with run.session(given, estimator=estimator.value, stream=False,
                     sizes=settings.group_sizes, imports=ANALYSIS, size_flag="--n") as s:  # fmt: skip
        run.answer(_answer(s, settings, given.inputs.cols, given.plot), given, s)


def _answer(s: Run, settings: LoopSettings, cols: Sequence[str], plot: PlotOptions) -> Shown:
    """The loop on the run's pass-rate column, or on each of several side by side."""
    from sigmatool.preflight import PreflightColumns

    if cols:
        return PreflightColumns({c: s.column(c).preflight(settings) for c in cols})
    result = s.preflight(settings, figure=plot.path is not None)
    if plot.path is not None and result.curve is None:
        raise UsageError(
            "--plot draws the filtered loop's crash chance against its generation batch: verl's and "
            "NeMo-RL's with the filter only"
        )
    return result

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
# The panel of the flags of open-instruct's, OpenRLHF's, prime-rl's and Pilot-Commit's loops and of
# retirement: only --help-all lists it.
MORE_LOOPS = "Other trainers' loops"


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
        help="Generation batches a step may draw before it raises; 0 or -1: endless "
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
RefillOpt = Annotated[
    bool | None,
    typer.Option(
        "--refill/--no-refill",
        help="Replace each filtered group by a new prompt (open-instruct's active_sampling; prime-rl's "
        "advantage_range gate); --no-refill trains what the step drew.",
        rich_help_panel=MORE_LOOPS,
        show_default="the trainer's default",
    ),
]
PoolsOpt = Annotated[
    str | None,
    typer.Option(
        "--difficulty-pools",
        metavar="NAME:MAX:WEIGHT,…",
        help="prime-rl's DifficultyPoolSampler: each task weighted by the pool of its latest group mean, "
        "as prime-rl's hard:0.25:0.2,normal:0.75:1,easy:1:0.2.",
        rich_help_panel=MORE_LOOPS,
    ),
]
PilotOpt = Annotated[
    int | None,
    typer.Option(
        "--pilot",
        metavar="N0",
        help="Pilot-Commit: pilot rollouts per prompt (algorithm.exploration.n); implies --trainer "
        "pilot-commit.",
        rich_help_panel=MORE_LOOPS,
    ),
]
KeepOpt = Annotated[
    str | None,
    typer.Option(
        "--keep",
        metavar="LO,HI",
        help="Pilot-Commit: a pilot is kept when LO ≤ k/N0 ≤ HI (its yaml: 0.25,0.75).",
        rich_help_panel=MORE_LOOPS,
    ),
]
EvictOpt = Annotated[
    int | None,
    typer.Option(
        "--evict",
        metavar="T",
        help="Pilot-Commit: buffer entries older than T steps are evicted (buffer_max_off_steps, 4). Echoed "
        "in the row; the figures do not depend on it, as pilots are committed before T binds "
        "(docs/preflight.md).",
        rich_help_panel=MORE_LOOPS,
    ),
]
CommitOpt = Annotated[
    int | None,
    typer.Option(
        "--commit",
        metavar="N1",
        help="Pilot-Commit: new rollouts per committed prompt (actor_rollout_ref.rollout.n).",
        rich_help_panel=MORE_LOOPS,
    ),
]
RetireOpt = Annotated[
    float | None,
    typer.Option(
        "--retire",
        metavar="P",
        help="Retire a prompt from later epochs when its group scores k/n ≥ P (open-instruct's "
        "no_resampling_pass_rate, Pilot-Commit's exclude_threshold_upper); one row per epoch.",
        rich_help_panel=MORE_LOOPS,
    ),
]
RecheckOpt = Annotated[
    float | None,
    typer.Option(
        "--recheck",
        metavar="F",
        help="With --retire: each retired prompt returns with chance F at each epoch's start.",
        rich_help_panel=MORE_LOOPS,
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
    refill: RefillOpt = None,
    pools: PoolsOpt = None,
    pilot: PilotOpt = None,
    keep: KeepOpt = None,
    evict: EvictOpt = None,
    commit: CommitOpt = None,
    retire: RetireOpt = None,
    recheck: RecheckOpt = None,
) -> dict[str, object]:
    """The loop's flags that the command line gave (a default is not an answer: --config may hold one)."""
    given: dict[str, object] = {"train_batch_size": train_batch_size, "gen_batch_size": gen_batch_size,
                                "n": n, "max_gen_batches": max_gen_batches, "filter": filter,
                                "steps": steps, "epochs": epochs, "risk": risk,
                                "silent_over": silent_over, "refill": refill, "pilot_n": pilot,
                                "evict": evict, "retire": retire, "recheck": recheck}  # fmt: skip
    if commit is not None:
        given["n"], n = commit, commit
    if pools is not None:
        given["pools"] = parse_pools(pools)
    if keep is not None:
        given["keep_lo"], given["keep_hi"] = parse_pair(keep, "--keep")
    ctx = click.get_current_context()
    default = click.core.ParameterSource.DEFAULT
    # A flag is given when its parameter's value did not come from its default (--keep's and --pools'
    # settings are parsed from theirs, --commit's is n).
    param = {"pilot_n": "pilot", "keep_lo": "keep", "keep_hi": "keep", "pools": "pools"}
    if commit is not None:
        param["n"] = "commit"
    explicit = {
        k: v
        for k, v in given.items()
        if v is not None and ctx.get_parameter_source(param.get(k, k)) is not default
    }
    implied = {"trainer": "pilot-commit"} if commit is not None else {}
    return {"risk": risk, "silent_over": silent_over, **implied, **explicit}


# The settings only Pilot-Commit's loop has: their flags imply it.
PILOT_FLAGS = {"pilot_n", "keep_lo", "keep_hi", "evict"}


def parse_pair(text: str, flag: str) -> tuple[float, float]:
    """``LO,HI`` as two numbers, or a usage error naming the flag."""
    parts = text.split(",")
    try:
        lo, hi = (float(x) for x in parts)
    except ValueError:
        raise UsageError(f"{flag} takes LO,HI (two numbers), not {text!r}") from None
    return lo, hi


def parse_pools(text: str) -> tuple[tuple[str, float, float], ...]:
    """``NAME:MAX:WEIGHT,…`` as prime-rl's pools, or a usage error naming the bad one."""
    out = []
    for part in text.split(","):
        bits = part.split(":")
        try:
            name, top, weight = bits[0], float(bits[1]), float(bits[2])
        except (IndexError, ValueError):
            raise UsageError(f"--difficulty-pools takes NAME:MAX:WEIGHT,…, not {part!r}") from None
        if len(bits) != 3 or not name or weight < 0:
            raise UsageError(f"--difficulty-pools takes NAME:MAX:WEIGHT with WEIGHT ≥ 0, not {part!r}")
        out.append((name, top, weight))
    return tuple(out)


@app.command("preflight")
@uses(given=analysed_options, loop=loop_options)
def preflight_command(
    config: ConfigOpt = None,
    whose: LoopTrainer = None,
    estimator: EstimatorOpt = Estimator.auto,
    loop: dict[str, object] = {},  # noqa: B006 - replaced by the loop's flags
    given: Analysed = Analysed(),
) -> None:
    """What a trainer's loop will do with this dataset: crashes, batches, waste.

    Each generation batch draws --gen-batch-size prompts with --n rollouts each; groups whose rewards all
    agree are dropped; batches are drawn until --train-batch-size prompts are kept, the surplus is cut, and a
    step still short after --max-gen-batches batches raises 'Generated too many'. A prompt's group is kept
    with chance 1 − p^n − (1 − p)^n, so a batch's kept count is Binomial(B, mean keep rate), exactly, and
    every figure follows (docs/preflight.md). The smallest gen batch size and the smallest cap that keep the
    run's crash chance ≤ --risk come with it. --no-filter: the silent share of each batch, and the update it
    costs. --trainer models NeMo-RL's, SkyRL's, slime's, AReaL's, open-instruct's, OpenRLHF's, prime-rl's or
    Pilot-Commit's loop instead of verl's; --config reads the trainer's own settings; --retire P retires
    solved prompts epoch by epoch; every row says what the trainer's logged metrics will read (log:<key>);
    --prior and --estimator as in the other commands.

    Example:

        sigmatool preflight sample_data/bigmath_solve_rates.parquet --samples 64

        sigmatool preflight sample_data/bigmath_solve_rates.parquet --trainer slime
    """
    implied = loop.pop("trainer", None)
    if whose is None and config is None and (implied or PILOT_FLAGS & set(loop)):
        whose = "pilot-commit"  # --pilot, --keep, --evict, --commit: Pilot-Commit's loop
    elif whose is None and config is None and "pools" in loop:
        whose = "prime-rl"
    settings, given = _settings(given, config, loop, whose)
    check_one_loop(given.inputs, plotted=given.plot.path is not None)
    with run.session(given, estimator=estimator.value, stream=False,
                     sizes=settings.group_sizes, imports=ANALYSIS, trained=("--n", (settings.n,))) as s:  # fmt: skip
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

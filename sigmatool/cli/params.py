"""Options shared by several commands, each declared once, and the decorator that splices them in.

A group of options is a *builder*: a function whose parameters are the options (typer reads them as it
reads a command's) and whose body turns them into one typed object. ``@uses(inputs=input_options)``
puts the builder's options into a command's signature and hands the command the built object, as
sqlite-utils stacks its option decorators. Builders compose: a builder may itself use another.
Nothing here imports polars or numpy.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any, TypeVar

import typer

from sigmatool.cli.helptext import SHARED
from sigmatool.errors import UsageError
from sigmatool.options import (
    DEFAULT_SEED,
    Counts,
    Engine,
    Estimator,
    FigureStyle,
    InputFormat,
    InputOptions,
    LogOptions,
    Method,
    OutputFormat,
    OutputOptions,
    PlotOptions,
    Std,
)
from sigmatool.options.common import DEFAULT_BINS, DEFAULT_FIDELITY, DEFAULT_G, DEFAULT_MAX_G, DEFAULT_MIN_G
from sigmatool.options.inputs import parsed_log_options, parsed_read_options, prompt_columns
from sigmatool.options.verifier import InvalidRewards, Measured

# The shared options that only --help-all lists (the most used ones are in the SHARED panel).
INPUT = "Input"
OUTPUT = "Output"
F = TypeVar("F", bound=Callable[..., Any])


def uses(**builders: Callable[..., Any]) -> Callable[[F], F]:
    """Replace each named parameter of the command by the options of its builder; pass the built object."""

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        owned: dict[str, list[str]] = {}
        params: list[inspect.Parameter] = []
        for param in signature.parameters.values():
            builder = builders.get(param.name)
            if builder is None:
                params.append(param)
                continue
            spliced = list(inspect.signature(builder, eval_str=True).parameters.values())
            owned[param.name] = [p.name for p in spliced]
            params += spliced

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            for name, names in owned.items():
                # an option that takes no value (a renamed flag's old spelling) is not passed
                kwargs[name] = builders[name](**{n: kwargs.pop(n) for n in names if n in kwargs})
            return command(**kwargs)

        wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper  # type: ignore[return-value]

    return decorate


# --------------------------------------------------------------------------------------------- reading


# A typer option in the Input panel of the help (or in the one its rich_help_panel names).
_input = functools.partial(typer.Option, rich_help_panel=INPUT)


InputFormatOpt = Annotated[
    InputFormat | None,
    _input("--input-format", help="Format of stdin or of files without a known extension (stdin: detected)."),
]
SeparatorOpt = Annotated[
    str | None,
    _input(
        "--separator",
        metavar="CHAR",
        help="Field separator of CSV input.",
        show_default="detected among , ; tab |",
    ),
]
ColOpt = Annotated[
    list[str] | None,
    _input(
        "--col",
        rich_help_panel=SHARED,
        metavar="COL",
        help="Pass-rate column, or a dotted path into nested records (a.b.c). It may hold rates, 'k/n' text, "
        "lists of true/false grades, or whole-number counts (with --samples, --counts). Repeat it, or give a "
        "glob such as 'pass_rate_*', to analyse each column apart: every output gains a 'column' key. When "
        "not given: pass_rate, solve_rate, pass@1, accuracy, *solve_rate, *pass_rate, "
        "correctness_math_verify, a 'k/n' difficulty.",
    ),
]
# The spelling people guess for --col (several tools call it so): an alias that works, kept out of the help.
RateColOpt = Annotated[str | None, typer.Option("--rate-col", hidden=True, help="Same as --col.")]
PercentOpt = Annotated[bool, _input("--percent", help="The pass-rate column is in percent (45 or 45%).")]
KColOpt = Annotated[
    str | None, _input("--k-col", metavar="COL", help="Column of right answers k (with --n-col).")
]
NColOpt = Annotated[str | None, _input("--n-col", metavar="COL", help="Column of samples n behind each k.")]
SamplesOpt = Annotated[
    int | None,
    _input(
        "--samples",
        rich_help_panel=SHARED,
        metavar="N",
        help="Samples n behind every pass rate (e.g. 64 for Big-Math): turns rates into counts.",
    ),
]
CountsOpt = Annotated[
    Counts | None,
    _input(
        "--counts",
        help="A whole-number --col counts right or wrong answers out of --samples N (Skywork-OR1's "
        "model_difficulty: wrong out of 16 unless told).",
    ),
]
NanMissingOpt = Annotated[
    bool,
    _input(
        "--nan-missing",
        help="NaN in the pass-rate column means not measured: skip and count those rows (without it, an "
        "error).",
    ),
]
# The writers are more than a line of choices holds: a name checked by the options (LogOptions), listed in the help.
TrainerOpt = Annotated[
    str | None,
    _input(
        "--from",
        rich_help_panel=SHARED,
        metavar="WRITER",
        help="DATA are rollouts as WRITER wrote them: verl, trl, nemo-rl, areal, skyrl, roll, verifiers, "
        "nemo-gym, open-instruct, wandb-table, rlprobe, miles. Files, globs or folders, read as a rollout log: "
        "k, n per prompt pooled over the run.",
    ),
]
RolloutsOpt = Annotated[
    bool,
    _input(
        "--rollouts",
        help="Input is raw rollouts, one row per sampled answer; aggregated to (k, n) per prompt.",
    ),
]
PromptColOpt = Annotated[
    list[str] | None,
    _input(
        "--prompt-col",
        metavar="COL",
        help="Prompt id column of a rollout log; repeat it for a key of several columns (--prompt-col task "
        "--prompt-col example_id).",
    ),
]
GroupColOpt = Annotated[
    str | None,
    _input(
        "--group-col",
        metavar="COL",
        help="The column of a rollout log that names each sampled group (uid, group_index).",
        show_default="one group per prompt key",
    ),
]
RolloutsPerGroupOpt = Annotated[
    int | None,
    _input(
        "--rollouts-per-group",
        metavar="N",
        help="Rollouts the run sampled per group: groups of another size are counted in a note.",
        show_default="from the log's metadata",
    ),
]
PromptMaskOpt = Annotated[
    list[str] | None,
    _input(
        "--prompt-mask",
        metavar="REGEX",
        help="Cut this pattern from prompt texts before keying them (a per-rollout path, uuid or hash in the "
        "prompt); repeatable.",
    ),
]
RolloutColOpt = Annotated[
    str | None,
    _input(
        "--rollout-col",
        metavar="COL",
        help="A rollout's id: its rows (the turns of a conversation) count once, its first row's prompt and "
        "its last row's reward; graders pairs two logs' rollouts by it (else by their order in each prompt).",
    ),
]
RewardColOpt = Annotated[
    str | None,
    _input(
        "--reward-col",
        metavar="COL",
        help="Reward column of a rollout log: 0/1, boolean, or numbers graded by --threshold; with --from it "
        "overrides the trainer's own field (±1 counts as 0/1 there).",
    ),
]
ThresholdOpt = Annotated[
    float | None,
    _input("--threshold", help="Count a rollout as right when its reward ≥ T (for non-binary rewards)."),
]
WeightColOpt = Annotated[
    str | None,
    _input(
        "--weight-col",
        metavar="COL",
        help="Each row stands for this many prompts (a histogram, or a SQL GROUP BY result).",
    ),
]
SkipInvalidOpt = Annotated[
    bool, _input("--skip-invalid", help="Skip and count rows with a bad value instead of stopping.")
]
DataArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Files or globs, '-' for stdin. Read: .parquet, .csv, .tsv, .csv.gz, .jsonl, .ndjson, .json; "
        "with no DATA, stdin when it is a pipe or a file, else the bundled Big-Math sample. With --from: the "
        "trainer's dump files, globs or folders.",
        show_default=False,
        rich_help_panel=SHARED,
    ),
]
ByOpt = Annotated[
    list[str] | None,
    _input(
        "--by",
        metavar="COL",
        help="Also break every summary down by this column (repeatable); sql keeps it in the histogram, for "
        "the --by of the command that reads it.",
    ),
]
IdColOpt = Annotated[
    str | None,
    _input("--id-col", metavar="COL", help="Prompt id for per-prompt output.", show_default="the row number"),
]
EngineOpt = Annotated[
    Engine,
    _input(
        "--engine",
        help="Where a --rollouts log is reduced to its counts: polars (here), or duckdb or spark, where only "
        "the counts come back; the rest runs here.",
    ),
]
SparkRemoteOpt = Annotated[
    str | None,
    _input(
        "--spark-remote",
        metavar="URL",
        help="The Spark Connect server of --engine spark (sc://host:15002).",
        show_default="$SPARK_REMOTE, else a local Spark",
    ),
]
TABLE_HELP = (
    "The rollout log's table as the engine names it (rollouts, lake.rl.rollouts); with --engine duckdb, a "
    "table of the database file given as DATA."
)
TableOpt = Annotated[str | None, _input("--table", metavar="NAME", help=TABLE_HELP)]


def log_options(
    trainer: TrainerOpt = None,
    reward_col: RewardColOpt = None,
    threshold: ThresholdOpt = None,
    engine: EngineOpt = Engine.polars,
    spark_remote: SparkRemoteOpt = None,
    table: TableOpt = None,
    group_col: GroupColOpt = None,
    rollouts_per_group: RolloutsPerGroupOpt = None,
    prompt_mask: PromptMaskOpt = None,
    rollout_col: RolloutColOpt = None,
) -> LogOptions:
    """How a rollout log is graded (whose dumps, which reward field, which threshold), where it is read, and
    how its rows make its groups."""
    return parsed_log_options(trainer=trainer, reward_col=reward_col, threshold=threshold,
                              engine=engine, spark_remote=spark_remote, table=table, group_col=group_col,
                              rollouts_per_group=rollouts_per_group, prompt_masks=prompt_mask,
                              rollout_col=rollout_col)  # fmt: skip


STEP_COL_HELP = (
    "The column that tells the steps apart (a training step, a checkpoint, an eval run): sql makes one "
    "histogram per value; track one row per step (whole numbers as they are, other values numbered in "
    "their order)."
)
StepColOpt = Annotated[str | None, _input("--step-col", metavar="COL", help=STEP_COL_HELP)]


@uses(log=log_options)
def run_log_options(
    rollouts: RolloutsOpt = False,
    prompt_col: PromptColOpt = None,
    step_col: StepColOpt = None,
    log: LogOptions = LogOptions(),
) -> LogOptions:
    """A run followed step by step: a trainer's dumps (--from), or any rollout log and its step column."""
    return replace(log, rollouts=rollouts, step_col=step_col, **prompt_columns(prompt_col))


@uses(log=log_options)
def read_options(
    input_format: InputFormatOpt = None,
    separator: SeparatorOpt = None,
    col: ColOpt = None,
    rate_col: RateColOpt = None,
    percent: PercentOpt = False,
    k_col: KColOpt = None,
    n_col: NColOpt = None,
    samples: SamplesOpt = None,
    counts: CountsOpt = None,
    nan_missing: NanMissingOpt = False,
    rollouts: RolloutsOpt = False,
    prompt_col: PromptColOpt = None,
    log: LogOptions = LogOptions(),
    weight_col: WeightColOpt = None,
    skip_invalid: SkipInvalidOpt = False,
) -> InputOptions:
    """How to read the values: the options every input shares (no paths, --by or --id-col yet), parsed by
    :func:`~sigmatool.options.inputs.parsed_read_options`."""
    return parsed_read_options(input_format=input_format, separator=separator, col=col,
                               rate_col=rate_col, percent=percent, k_col=k_col, n_col=n_col,
                               samples=samples, counts=counts, nan_missing=nan_missing,
                               rollouts=rollouts, prompt_col=prompt_col, log=log,
                               weight_col=weight_col, skip_invalid=skip_invalid)  # fmt: skip


def group_options(by: ByOpt = None) -> tuple[str, ...]:
    """The columns every summary is broken down by."""
    return tuple(by or ())


@uses(read=read_options, by=group_options)
def input_options(
    read: InputOptions, data: DataArg = None, by: tuple[str, ...] = (), id_col: IdColOpt = None
) -> InputOptions:
    """The input of an analysis: DATA, how to read it, and how to group it."""
    return replace(read, paths=tuple(data or ()), by=by, id_col=id_col)


OutputFile = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write to this file (atomically; never one of the inputs); the format follows its extension. "
        "report: FILE.html or FILE.md, required; sql: the query's text.",
        rich_help_panel=SHARED,
        show_default=False,
    ),
]


def output_options(
    fmt: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            help="auto: a table on a terminal, CSV in a pipe, or by -o's extension.",
            rich_help_panel=SHARED,
        ),
    ] = OutputFormat.auto,
    output: OutputFile = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="The table view shows every row: with several pass-rate columns or --by groups it "
            "otherwise compares their overall rows at a glance (the data formats always hold every row).",
            rich_help_panel="Output",
        ),
    ] = False,
) -> OutputOptions:
    """Where the result goes, and in which format."""
    return OutputOptions(fmt.value, output, full)


def plot_options(
    plot: Annotated[
        str | None,
        typer.Option(
            "--plot",
            metavar="FILE",
            help="Also draw the result in FILE (.png, .svg or .pdf); written atomically, never over an input "
            "or the -o file.",
            rich_help_panel=SHARED,
        ),
    ] = None,
    caption: Annotated[
        bool | None,
        typer.Option(
            "--caption/--no-caption",
            help="Draw the caption (what is shown, the options, the data) under the --plot figure; "
            "--no-caption for a paper, which sets its own (the file's embedded data keeps it).",
            rich_help_panel=OUTPUT,
            show_default="caption on screen, none on paper",
        ),
    ] = None,
    style: Annotated[
        FigureStyle,
        typer.Option(
            "--style",
            help="The --plot figure's look. paper: one column of a two-column paper (3.25 in), serif text "
            "like LaTeX's, no caption unless --caption; best as .pdf or .svg.",
            rich_help_panel=OUTPUT,
        ),
    ] = FigureStyle.screen,
) -> PlotOptions:
    """Where the command's figure goes, if anywhere, in which style, and whether it carries its caption."""
    return PlotOptions(plot, caption, style)


# --------------------------------------------------------------------------------------------- the glossary
# Every flag that more than one command takes is declared here, once: one type, range, default and help in
# every command (tests/test_flags.py reads the app and checks it). The ranges are checked by the option
# objects of sigmatool.options, which the library checks too.

GroupSizes = Annotated[
    list[str] | None,
    typer.Option(
        "--G",
        "-G",
        "--group-size",
        metavar="SIZES",
        help="Group size G, a whole number: repeatable or a comma list, e.g. --G 4,8,16; budget also takes inf "
        "(the large-group limit); simulate and curriculum train at one G (simulate: 2–100,000).",
        show_default=str(DEFAULT_G),
    ),
]
Bins = Annotated[
    int | None,
    typer.Option(
        "--bins",
        metavar="N",
        help="Add a row per equal-width bin of p, 0–1,000, beside the summary's overall rows. 0: the overall "
        "rows only (budget needs at least 1); 10: deciles of difficulty.",
        show_default=str(DEFAULT_BINS),
    ),
]
UpdateRule = Annotated[
    Method,
    typer.Option(
        "--method",
        help="The update rule: grpo divides each group's advantages by its std σ, drgrpo does not. groupsize: "
        "φ = E[σ]/√(p(1−p)) or 1 − 1/G; plan: Σ E[σ] or Σ E[σ²], and the gradient shares.",
    ),
]
Fidelity = Annotated[
    float | None,
    typer.Option(
        "--fidelity",
        metavar="φ*",
        help="Target fidelity in (0, 1): the share of its large-group update a group should give each "
        "prompt. Used by groupsize and by plan --objective fidelity; 0.9 loses at most a tenth of the update "
        "to the group's noise, which G = 8 gives prompts near p = ½ (φ = 0.93).",
        show_default=str(DEFAULT_FIDELITY),
    ),
]
StdConvention = Annotated[
    Std | None,
    typer.Option(
        "--std",
        help="The std --method grpo divides by. population: the group's own; bessel: torch's (TRL, "
        "verl, OpenRLHF), which realises √((G−1)/G) of the update, so more G is needed.",
        show_default="population; with --from, the trainer's (docs/trainers.md)",
    ),
]
MinG = Annotated[
    int | None,
    typer.Option(
        "--min-G",
        metavar="G",
        help="No prompt gets a group smaller than this. groupsize's search starts here; plan leaves out the "
        "smaller --sizes. A group of one has σ = 0.",
        show_default=str(DEFAULT_MIN_G),
    ),
]
MaxG = Annotated[
    int | None,
    typer.Option(
        "--max-G",
        metavar="G",
        help="No prompt gets a group larger than this. At most 2^31; groupsize calls a prompt that needs more "
        "unreachable; plan leaves out the larger --sizes. 4096 is far above any trainer's G.",
        show_default=str(DEFAULT_MAX_G),
    ),
]
Seed = Annotated[
    int | None,
    typer.Option(
        "--seed",
        help="Seed of every random draw; of simulate's run, the --ci bootstrap and curriculum's "
        "--export-order. The same seed gives byte-identical output.",
        show_default=str(DEFAULT_SEED),
    ),
]
DapoCap = Annotated[
    int | None,
    typer.Option(
        "--dapo-cap",
        metavar="T",
        help="DAPO draws at most T groups for a prompt, 1–1,000,000. silent: no cap unless given (the cost "
        "1/(1 − P); T adds dapo_unfilled_rate); simulate draws at most 4 per prompt and step unless given, as "
        "a run must end.",
        show_default=False,
    ),
]
PlanBudgetOpt = Annotated[
    float | None,
    typer.Option(
        "--plan-budget",
        metavar="B",
        help="Plan B rollouts per prompt as `sigmatool plan --budget B` does: report adds the plan's section "
        "(one DATA, no --by); simulate trains at its sizes against uniform G = ⌊B⌋.",
        show_default=False,
    ),
]
Steps = Annotated[int, typer.Option("--steps", help="Training steps.")]
Epochs = Annotated[
    int | None,
    typer.Option(
        "--epochs",
        help="The run's length in epochs of the data, in place of --steps (verl trainer.total_epochs).",
        show_default=False,
    ),
]
Grader = tuple[float, float] | None  # --grader-error's FP, FN, as grader_option gives it
GraderErrorOpt = Annotated[
    str | None,
    typer.Option(
        "--grader-error",
        metavar="FP,FN",
        help="The trainer's grader marks a wrong answer right with probability FP and a right one wrong "
        "with probability FN: every figure then reads rewards of rate FP + (1 − FP − FN) p, and the "
        "headline says what that moves (docs/curriculum.md).",
        show_default=False,
        rich_help_panel="The grader",
    ),
]


PassAtOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--pass-at",
        metavar="K[,K…]",
        help="The trainer trains on pass@K (PKPO, Pass@k Training): a group is silent when no answer's "
        "credit differs (c = 0 or c > G − K right), and GRPO's and Dr. GRPO's weights are pass@K's "
        "(docs/passk.md). silent and budget take a list; 1 is pass@1, today's figures.",
        show_default=False,
        rich_help_panel="The grader",
    ),
]


def pass_at_option(pass_at: PassAtOpt = None) -> tuple[int, ...]:
    """``--pass-at K[,K…]``, each K whole and ≥ 1 (() when absent)."""
    from sigmatool.options.curriculum import parse_pass_at

    return parse_pass_at(pass_at)


GraderErrorFromOpt = Annotated[
    str | None,
    typer.Option(
        "--grader-error-from",
        metavar="FILE",
        help="--grader-error's FP and FN from a verifier audit (falsepass, reward-doctor, evalproof, "
        "sigmatool graders JSON; docs/verifiers.md).",
        show_default=False,
        rich_help_panel="The grader",
    ),
]
DenoiseOpt = Annotated[
    str | None,
    typer.Option(
        "--denoise",
        metavar="FP,FN",
        help="The data were graded by a verifier that marks a wrong answer right with probability FP and a "
        "right one wrong with FN: every figure is for the true pass rate, the counts read back through "
        "the inverse of that grader (docs/verifiers.md).",
        show_default=False,
        rich_help_panel="The grader",
    ),
]
DenoiseFromOpt = Annotated[
    str | None,
    typer.Option(
        "--denoise-from",
        metavar="FILE",
        help="--denoise's FP and FN, with the trials behind them, from a verifier audit (falsepass, "
        "reward-doctor, evalproof, sigmatool graders JSON; docs/verifiers.md).",
        show_default=False,
        rich_help_panel="The grader",
    ),
]


def grader_option(
    grader_error: GraderErrorOpt = None, grader_error_from: GraderErrorFromOpt = None
) -> tuple[float, float] | None:
    """``--grader-error FP,FN``, checked (FP + FN < 1), or its rates read from ``--grader-error-from``."""
    from sigmatool.options.curriculum import parse_grader_error

    if grader_error_from is None:
        return parse_grader_error(grader_error)
    if grader_error is not None:
        raise UsageError("--grader-error and --grader-error-from: give one")
    from sigmatool.audits import read_audit

    return read_audit(grader_error_from, "--grader-error-from").rates


def denoise_option(denoise: DenoiseOpt = None, denoise_from: DenoiseFromOpt = None) -> Measured | None:
    """``--denoise FP,FN``, checked (FP + FN < 1), or the rates and their trials of ``--denoise-from``."""
    from sigmatool.options.verifier import parse_denoise

    if denoise_from is None:
        return parse_denoise(denoise)
    if denoise is not None:
        raise UsageError("--denoise and --denoise-from: give one")
    from sigmatool.audits import read_audit

    return read_audit(denoise_from, "--denoise-from")


InvalidOpt = Annotated[
    InvalidRewards | None,
    typer.Option(
        "--invalid",
        help="A rollout log's invalid rewards (null, NaN, ±inf, text): skip removes them before grouping, "
        "mask leaves them out of the group's baseline and std, zero reads them as 0 (docs/verifiers.md).",
        show_default=False,
        rich_help_panel="The grader",
    ),
]
ResolutionOpt = Annotated[
    float | None,
    typer.Option(
        "--resolution",
        metavar="ε",
        help="A rollout log's raw rewards tie when they differ by less than ε ≥ 0: a group whose rewards "
        "span less than ε is silent (docs/verifiers.md).",
        show_default=False,
        rich_help_panel="The grader",
    ),
]


PerPrompt = Annotated[
    bool, typer.Option("--per-prompt", help="One row per input prompt instead of a summary (streamed).")
]
EstimatorOpt = Annotated[
    Estimator,
    typer.Option(
        "--estimator",
        help="How each prompt's value at each G is estimated (auto: the one rule of docs/prior.md). auto: "
        "exact for pass rates; for counts k of n, unbiased where G ≤ n and a prior's posterior mean beyond "
        "n where the data identify one, else not identified. plugin: p̂ as p everywhere; unbiased: the "
        "group drawn from the logged samples (G ≤ n only).",
    ),
]

# Kept for scripts from before these flags were renamed: each stops with a usage error naming the new flag.


def renamed(old: str, *aliases: str, now: str) -> Any:
    """A hidden option under a flag's old spelling that refuses any use and says what replaced it."""

    def refuse(value: object) -> None:
        if value is not None:
            raise UsageError(f"{old} no longer applies here: {now}")

    return typer.Option(old, *aliases, hidden=True, callback=refuse, expose_value=False)

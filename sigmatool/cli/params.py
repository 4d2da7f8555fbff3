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

from sigmatool.options import (
    Counts,
    Estimator,
    InputFormat,
    InputOptions,
    LogOptions,
    OutputFormat,
    OutputOptions,
    PlotOptions,
    Trainer,
)

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
                kwargs[name] = builders[name](**{n: kwargs.pop(n) for n in names})
            return command(**kwargs)

        wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper  # type: ignore[return-value]

    return decorate


# --------------------------------------------------------------------------------------------- reading


def _input(*names: str, help: str, **extra: Any) -> Any:
    """A typer option in the Input panel of the help."""
    return typer.Option(*names, help=help, rich_help_panel=INPUT, **extra)


InputFormatOpt = Annotated[
    InputFormat | None,
    _input("--input-format", help="Format of stdin or of files without a known extension (stdin: detected)."),
]
SeparatorOpt = Annotated[
    str | None,
    _input(
        "--separator", metavar="CHAR", help="Field separator of CSV input (default: detected: , ; tab |)."
    ),
]
ColOpt = Annotated[
    str | None,
    _input(
        "--col",
        help="Pass-rate column, or a dotted path into nested records (a.b.c). It may hold rates, 'k/n' text, "
        "lists of true/false grades, or whole-number counts (with --samples, --counts). Default: detected: "
        "pass_rate, solve_rate, pass@1, accuracy, *solve_rate, *pass_rate, correctness_math_verify, a 'k/n' "
        "difficulty.",
    ),
]
PercentOpt = Annotated[bool, _input("--percent", help="The pass-rate column is in percent (45 or 45%).")]
KColOpt = Annotated[str | None, _input("--k-col", help="Column of right answers k (with --n-col).")]
NColOpt = Annotated[str | None, _input("--n-col", help="Column of samples n behind each k.")]
SamplesOpt = Annotated[
    int | None,
    _input(
        "--samples", help="Samples n behind every pass rate (e.g. 64 for Big-Math): turns rates into counts."
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
        help="NaN in the pass-rate column means not measured: skip and count those rows (default: an error).",
    ),
]
TrainerOpt = Annotated[
    Trainer | None,
    _input(
        "--from",
        help="DATA are this trainer's rollout dumps (files, globs or folders), read as a rollout log: k, n per "
        "prompt pooled over the run, prompts keyed by a hash of their text.",
    ),
]
RolloutsOpt = Annotated[
    bool,
    _input(
        "--rollouts",
        help="Input is raw rollouts, one row per sampled answer; aggregated to (k, n) per prompt.",
    ),
]
PromptColOpt = Annotated[str | None, _input("--prompt-col", help="Prompt id column of a rollout log.")]
RewardColOpt = Annotated[
    str | None,
    _input(
        "--reward-col",
        help="Reward column of a rollout log (0/1, or boolean); with --from: overrides the trainer's default "
        "field (±1 counts as 0/1 there).",
    ),
]
ThresholdOpt = Annotated[
    float | None,
    _input("--threshold", help="Count a rollout as right when its reward ≥ T (for non-binary rewards)."),
]
WeightColOpt = Annotated[
    str | None,
    _input(
        "--weight-col", help="Each row stands for this many prompts (a histogram, or a SQL GROUP BY result)."
    ),
]
SkipInvalidOpt = Annotated[
    bool, _input("--skip-invalid", help="Skip and count rows with a bad value instead of stopping.")
]
DataArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Files or globs (.parquet, .csv, .tsv, .csv.gz, .jsonl, .ndjson, .json), '-' for stdin. "
        "Default: stdin when it is a pipe or a file, else the bundled Big-Math sample. With --from: the "
        "trainer's dump files, globs or folders.",
        show_default=False,
    ),
]
ByOpt = Annotated[
    list[str] | None, _input("--by", help="Also break every summary down by this column (repeatable).")
]
IdColOpt = Annotated[
    str | None, _input("--id-col", help="Prompt id for per-prompt output (default: row number).")
]


def log_options(
    trainer: TrainerOpt = None, reward_col: RewardColOpt = None, threshold: ThresholdOpt = None
) -> LogOptions:
    """How a rollout log is graded: whose dumps (--from), which reward field, which threshold."""
    return LogOptions(trainer.value if trainer else None, reward_col, threshold)


@uses(log=log_options)
def read_options(
    input_format: InputFormatOpt = None,
    separator: SeparatorOpt = None,
    col: ColOpt = None,
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
    """How to read the values: the options every input shares (no paths, --by or --id-col yet)."""
    return InputOptions(
        input_format=input_format.value if input_format else None,
        separator=separator,
        col=col,
        percent=percent,
        k_col=k_col,
        n_col=n_col,
        samples=samples,
        rollouts=rollouts,
        prompt_col=prompt_col,
        reward_col=log.reward_col,
        threshold=log.threshold,
        weight_col=weight_col,
        skip_invalid=skip_invalid,
        trainer=log.trainer,
        counts=counts.value if counts else None,
        nan_missing=nan_missing,
    )


def group_options(by: ByOpt = None) -> tuple[str, ...]:
    """The columns every summary is broken down by."""
    return tuple(by or ())


@uses(read=read_options, by=group_options)
def input_options(
    read: InputOptions, data: DataArg = None, by: tuple[str, ...] = (), id_col: IdColOpt = None
) -> InputOptions:
    """The input of an analysis: DATA, how to read it, and how to group it."""
    return replace(read, paths=tuple(data or ()), by=by, id_col=id_col)


def output_options(
    fmt: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            help="auto: a table on a terminal, CSV in a pipe (or from -o's extension).",
            rich_help_panel=OUTPUT,
        ),
    ] = OutputFormat.auto,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="Write to this file (atomically; never one of the inputs); the format follows its extension.",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
) -> OutputOptions:
    """Where the result goes, and in which format."""
    return OutputOptions(fmt.value, output)


def plot_options(
    plot: Annotated[
        str | None,
        typer.Option(
            "--plot",
            metavar="FILE",
            help="Also draw the result as a figure in FILE: .png, .svg or .pdf, by the extension (atomically; "
            "never one of the inputs or the -o file).",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
) -> PlotOptions:
    """Where the command's figure goes, if anywhere."""
    return PlotOptions(plot)


# --------------------------------------------------------------------------------------------- analyses

GroupSizes = Annotated[
    list[str] | None,
    typer.Option(
        "--G",
        "-G",
        "--group-size",
        help="Group size G: repeatable or a comma list, e.g. --G 4,8,16.",
        show_default="8",
    ),
]
PerPrompt = Annotated[
    bool, typer.Option("--per-prompt", help="One row per input prompt instead of a summary (streamed).")
]
EstimatorOpt = Annotated[
    Estimator,
    typer.Option(
        "--estimator",
        help="plugin: use p̂ as p. unbiased: draw the group from the logged samples (needs counts).",
    ),
]

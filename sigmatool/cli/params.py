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

from sigmatool.options import Estimator, InputFormat, InputOptions, OutputFormat, OutputOptions, PlotOptions

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


def read_options(
    input_format: Annotated[
        InputFormat | None,
        typer.Option(
            "--input-format",
            help="Format of stdin or of files without a known extension (stdin: detected if not given).",
            rich_help_panel=INPUT,
        ),
    ] = None,
    separator: Annotated[
        str | None,
        typer.Option(
            "--separator",
            metavar="CHAR",
            help="Field separator of CSV input (default: detected from the header: , ; tab |).",
            rich_help_panel=INPUT,
        ),
    ] = None,
    col: Annotated[
        str | None,
        typer.Option(
            "--col",
            help="Pass-rate column (default: detected: pass_rate, solve_rate, pass@1, accuracy, *solve_rate, "
            "*pass_rate).",
            rich_help_panel=INPUT,
        ),
    ] = None,
    percent: Annotated[
        bool,
        typer.Option(
            "--percent", help="The pass-rate column is in percent (45 or 45%).", rich_help_panel=INPUT
        ),
    ] = False,
    k_col: Annotated[
        str | None,
        typer.Option("--k-col", help="Column of right answers k (with --n-col).", rich_help_panel=INPUT),
    ] = None,
    n_col: Annotated[
        str | None, typer.Option("--n-col", help="Column of samples n behind each k.", rich_help_panel=INPUT)
    ] = None,
    samples: Annotated[
        int | None,
        typer.Option(
            "--samples",
            help="Samples n behind every pass rate (e.g. 64 for Big-Math): turns rates into counts.",
            rich_help_panel=INPUT,
        ),
    ] = None,
    rollouts: Annotated[
        bool,
        typer.Option(
            "--rollouts",
            help="Input is raw rollouts, one row per sampled answer; aggregated to (k, n) per prompt.",
            rich_help_panel=INPUT,
        ),
    ] = False,
    prompt_col: Annotated[
        str | None,
        typer.Option("--prompt-col", help="Prompt id column of a rollout log.", rich_help_panel=INPUT),
    ] = None,
    reward_col: Annotated[
        str | None,
        typer.Option(
            "--reward-col", help="Reward column of a rollout log (0/1 or boolean).", rich_help_panel=INPUT
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            help="Count a rollout as right when its reward ≥ T (for non-binary rewards).",
            rich_help_panel=INPUT,
        ),
    ] = None,
    weight_col: Annotated[
        str | None,
        typer.Option(
            "--weight-col",
            help="Each row stands for this many prompts (a histogram, or a SQL GROUP BY result).",
            rich_help_panel=INPUT,
        ),
    ] = None,
    skip_invalid: Annotated[
        bool,
        typer.Option(
            "--skip-invalid",
            help="Skip and count rows with a bad value instead of stopping.",
            rich_help_panel=INPUT,
        ),
    ] = False,
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
        reward_col=reward_col,
        threshold=threshold,
        weight_col=weight_col,
        skip_invalid=skip_invalid,
    )


def group_options(
    by: Annotated[
        list[str] | None,
        typer.Option(
            "--by", help="Also break every summary down by this column (repeatable).", rich_help_panel=INPUT
        ),
    ] = None,
) -> tuple[str, ...]:
    """The columns every summary is broken down by."""
    return tuple(by or ())


@uses(read=read_options, by=group_options)
def input_options(
    read: InputOptions,
    data: Annotated[
        list[str] | None,
        typer.Argument(
            help="Files or globs (.parquet, .csv, .tsv, .csv.gz, .jsonl, .ndjson, .json), '-' for stdin. "
            "Default: stdin when it is a pipe or a file, else the bundled Big-Math sample.",
            show_default=False,
        ),
    ] = None,
    by: tuple[str, ...] = (),
    id_col: Annotated[
        str | None,
        typer.Option(
            "--id-col", help="Prompt id for per-prompt output (default: row number).", rich_help_panel=INPUT
        ),
    ] = None,
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

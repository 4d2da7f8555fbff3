"""The typer app: each command loads, computes and renders; the work lives in the other modules."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from enum import Enum
from typing import Annotated, Any

import polars as pl
import typer
from rich.text import Text

from sigmatool import __version__, silent
from sigmatool.aggregate import parse_group_sizes
from sigmatool.errors import ExitCode, SigmaError
from sigmatool.load import Dataset, InputOptions, histogram, load, row_count
from sigmatool.render import View, sink_frame, stderr_console, write_frame

app = typer.Typer(
    name="sigmatool",
    help=(
        "What a prompt set will do to GRPO, Dr. GRPO and DAPO training, from its pass rates.\n\n"
        "For 0/1 rewards the per-prompt GRPO update is exactly the group's reward std σ times a direction "
        "(arXiv:2607.00152). sigmatool turns that identity into answers on a difficulty dataset: silent "
        "groups, the gradient budget across difficulty, the group size each prompt needs, and a controlled "
        "training run.\n\nWith no DATA and nothing piped in, commands run on the bundled Big-Math sample."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)

INPUT = "Input"
OUTPUT = "Output"


class InputFormatChoice(str, Enum):
    csv = "csv"
    tsv = "tsv"
    parquet = "parquet"
    jsonl = "jsonl"
    json = "json"


class OutputFormat(str, Enum):
    auto = "auto"
    table = "table"
    csv = "csv"
    tsv = "tsv"
    json = "json"
    jsonl = "jsonl"
    parquet = "parquet"


class EstimatorChoice(str, Enum):
    plugin = "plugin"
    unbiased = "unbiased"


# Shared options, declared once. Flags are spelled for people (see the README's option list).
DataArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Files or globs (.parquet, .csv, .tsv, .csv.gz, .jsonl, .ndjson, .json), '-' for stdin. "
        "Default: stdin when piped, else the bundled Big-Math sample.",
        show_default=False,
    ),
]
InputFormatOpt = Annotated[
    InputFormatChoice | None,
    typer.Option(
        "--input-format", help="Format of stdin or of files without a known extension.", rich_help_panel=INPUT
    ),
]
ColOpt = Annotated[
    str | None,
    typer.Option(
        "--col",
        help="Pass-rate column (default: detected: pass_rate, solve_rate, pass@1, accuracy, *solve_rate, *pass_rate).",
        rich_help_panel=INPUT,
    ),
]
KColOpt = Annotated[
    str | None,
    typer.Option("--k-col", help="Column of right answers k (with --n-col).", rich_help_panel=INPUT),
]
NColOpt = Annotated[
    str | None, typer.Option("--n-col", help="Column of samples n behind each k.", rich_help_panel=INPUT)
]
SamplesOpt = Annotated[
    int | None,
    typer.Option(
        "--samples",
        min=1,
        help="Samples n behind every pass rate (e.g. 64 for Big-Math): turns rates into counts.",
        rich_help_panel=INPUT,
    ),
]
RolloutsOpt = Annotated[
    bool,
    typer.Option(
        "--rollouts",
        help="Input is raw rollouts, one row per sampled answer; aggregated to (k, n) per prompt.",
        rich_help_panel=INPUT,
    ),
]
PromptColOpt = Annotated[
    str | None,
    typer.Option("--prompt-col", help="Prompt id column of a rollout log.", rich_help_panel=INPUT),
]
RewardColOpt = Annotated[
    str | None,
    typer.Option(
        "--reward-col", help="Reward column of a rollout log (0/1 or boolean).", rich_help_panel=INPUT
    ),
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        help="Count a rollout as right when its reward ≥ T (for non-binary rewards).",
        rich_help_panel=INPUT,
    ),
]
WeightColOpt = Annotated[
    str | None,
    typer.Option(
        "--weight-col",
        help="Each row stands for this many prompts (a histogram, or a SQL GROUP BY result).",
        rich_help_panel=INPUT,
    ),
]
ByOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--by", help="Also break every summary down by this column (repeatable).", rich_help_panel=INPUT
    ),
]
IdColOpt = Annotated[
    str | None,
    typer.Option(
        "--id-col", help="Prompt id for per-prompt output (default: row number).", rich_help_panel=INPUT
    ),
]
SkipInvalidOpt = Annotated[
    bool,
    typer.Option(
        "--skip-invalid",
        help="Skip and count rows with a bad value instead of stopping.",
        rich_help_panel=INPUT,
    ),
]
FormatOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        "-f",
        help="auto: a table on a terminal, CSV in a pipe (or from -o's extension).",
        rich_help_panel=OUTPUT,
    ),
]
OutputOpt = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="Write to this file (atomically); the format follows its extension.",
        rich_help_panel=OUTPUT,
    ),
]
GroupSizesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--G",
        "-G",
        "--group-size",
        help="Group size G: repeatable or a comma list, e.g. --G 4,8,16.",
        show_default="8",
    ),
]
BinsOpt = Annotated[
    int | None,
    typer.Option("--bins", min=1, max=1000, help="Also break the summary down into N equal-width bins of p."),
]
PerPromptOpt = Annotated[
    bool, typer.Option("--per-prompt", help="One row per input prompt instead of a summary (streamed).")
]
EstimatorOpt = Annotated[
    EstimatorChoice,
    typer.Option(
        "--estimator",
        help="plugin: use p̂ as p. unbiased: draw the group from the logged samples (needs counts).",
    ),
]


def _input_options(params: dict[str, Any]) -> InputOptions:
    """The shared input options, from a command's parameters (its ``locals()``); absent ones are unset."""
    input_format = params.get("input_format")
    return InputOptions(
        paths=tuple(params.get("data") or ()),
        input_format=input_format.value if input_format else None,
        col=params.get("col"),
        k_col=params.get("k_col"),
        n_col=params.get("n_col"),
        samples=params.get("samples"),
        rollouts=bool(params.get("rollouts")),
        prompt_col=params.get("prompt_col"),
        reward_col=params.get("reward_col"),
        threshold=params.get("threshold"),
        weight_col=params.get("weight_col"),
        by=tuple(params.get("by") or ()),
        id_col=params.get("id_col"),
        skip_invalid=bool(params.get("skip_invalid")),
    )


@contextlib.contextmanager
def _reported() -> Iterator[None]:
    """Turn sigmatool's own errors into one line on stderr and the documented exit code."""
    try:
        yield
    except SigmaError as exc:
        stderr_console().print(Text(f"error: {exc}", style="bold red"))
        raise typer.Exit(int(exc.exit_code)) from None
    except KeyboardInterrupt:
        stderr_console().print(Text("interrupted", style="red"))
        raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
    except OSError as exc:
        if not _is_broken_pipe(exc):
            raise
        # `sigmatool … | head` closed the pipe: that is the reader's choice, not an error.
        _quiet_stdout()
        raise typer.Exit(int(ExitCode.OK)) from None


def _is_broken_pipe(exc: OSError) -> bool:
    # polars reports a closed pipe as a plain OSError carrying the OS's text, without errno.
    return exc.errno == errno.EPIPE or "Broken pipe" in str(exc)


def _note(lines: list[str]) -> None:
    console = stderr_console()
    for line in lines:
        console.print(Text(f"note: {line}", style="dim"))
    lines.clear()


def _scan(options: InputOptions) -> tuple[pl.DataFrame, Dataset]:
    """Load and histogram the input, with rows read shown on a terminal; notes go to stderr."""
    ds = load(options)
    console = stderr_console()
    if not console.is_terminal:
        hist, ds = histogram(ds)
    else:
        # Imported here: only a terminal shows progress, and start-up time counts on every run.
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        columns = (
            SpinnerColumn(),
            TextColumn("reading"),
            BarColumn(),
            TextColumn("{task.completed:,} rows"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("reading", total=row_count(ds))
            hist, ds = histogram(ds, on_rows=lambda rows: progress.advance(task, rows))
    _note(ds.notes)
    return hist, ds


@app.command("silent")
def silent_command(
    data: DataArg = None,
    group_sizes: GroupSizesOpt = None,
    estimator: EstimatorOpt = EstimatorChoice.plugin,
    dapo_cap: Annotated[
        int | None,
        typer.Option("--dapo-cap", min=1, help="DAPO draws at most T groups per prompt (default: no cap)."),
    ] = None,
    bins: BinsOpt = None,
    per_prompt: PerPromptOpt = False,
    input_format: InputFormatOpt = None,
    col: ColOpt = None,
    k_col: KColOpt = None,
    n_col: NColOpt = None,
    samples: SamplesOpt = None,
    rollouts: RolloutsOpt = False,
    prompt_col: PromptColOpt = None,
    reward_col: RewardColOpt = None,
    threshold: ThresholdOpt = None,
    weight_col: WeightColOpt = None,
    by: ByOpt = None,
    id_col: IdColOpt = None,
    skip_invalid: SkipInvalidOpt = False,
    fmt: FormatOpt = OutputFormat.auto,
    output: OutputOpt = None,
) -> None:
    """Share of groups that teach nothing (all right or all wrong) at group size G, and DAPO's cost.

    A group of G answers whose rewards are all equal has σ = 0: GRPO and Dr. GRPO get no gradient from it,
    DAPO throws it away and draws another. For a prompt with pass rate p that happens with probability
    p^G + (1−p)^G.

    Example:

        sigmatool silent sample_data/bigmath_solve_rates.parquet --G 4,8,16
    """
    with _reported():
        options = _input_options(locals())
        sizes = parse_group_sizes(group_sizes or ["8"])
        hist, ds = _scan(options)
        if per_prompt:
            rows = silent.per_prompt(ds, hist, sizes, estimator=estimator.value, cap=dapo_cap)
            sink_frame(rows, fmt.value, output)
            return
        summary = silent.summarize(hist, ds.by, sizes, estimator=estimator.value, cap=dapo_cap, bins=bins)
        overall = (
            summary
            if not ds.by and bins is None
            else silent.summarize(hist, (), sizes, estimator=estimator.value, cap=dapo_cap)
        )
        view = View(
            headline=silent.headline(overall),
            percent=(
                "silent_rate",
                "all_right_rate",
                "all_wrong_rate",
                "always_silent_share",
                "dapo_unfilled_rate",
            ),
            bars=("silent_rate",),
            labels={
                "silent_rate": "silent groups",
                "all_right_rate": "all right",
                "all_wrong_rate": "all wrong",
                "always_silent_share": "always\nsilent",
                "dapo_draws_per_group": "DAPO draws\nper group",
                "dapo_draws_per_group_learnable": "…learnable\nprompts only",
                "dapo_unfilled_rate": "DAPO\nunfilled",
            },
            footer=[
                "DAPO draws per group: groups drawn per usable group when silent groups are redrawn from fresh "
                "prompts; …learnable: the same once never- and always-solved prompts are dropped"
            ],
        )
        write_frame(summary, fmt.value, output, view)


@app.command("budget")
def budget_command(
    data: DataArg = None,
    group_sizes: Annotated[
        list[str] | None,
        typer.Option(
            "--G",
            "-G",
            "--group-size",
            help="Group size G, or inf for the large-group limits; repeatable or a comma list: --G 8,inf.",
            show_default="8",
        ),
    ] = None,
    estimator: EstimatorOpt = EstimatorChoice.plugin,
    bins: Annotated[
        int, typer.Option("--bins", min=1, max=1000, help="Equal-width bins of p (the last one closed).")
    ] = 10,
    extreme: Annotated[
        float, typer.Option("--extreme", help="Extreme prompts: p < x or p > 1 − x, with 0 < x < 0.5.")
    ] = 0.1,
    medium: Annotated[
        str, typer.Option("--medium", help="Medium prompts: lo ≤ p ≤ hi, given as lo,hi.")
    ] = "0.4,0.6",
    input_format: InputFormatOpt = None,
    col: ColOpt = None,
    k_col: KColOpt = None,
    n_col: NColOpt = None,
    samples: SamplesOpt = None,
    rollouts: RolloutsOpt = False,
    prompt_col: PromptColOpt = None,
    reward_col: RewardColOpt = None,
    threshold: ThresholdOpt = None,
    weight_col: WeightColOpt = None,
    by: ByOpt = None,
    id_col: IdColOpt = None,
    skip_invalid: SkipInvalidOpt = False,
    fmt: FormatOpt = OutputFormat.auto,
    output: OutputOpt = None,
) -> None:
    """Where GRPO and Dr. GRPO spend their gradient across difficulty: each segment's share of the update.

    Three operations on the group std σ: GRPO divides the advantages by σ, so a prompt's update is σ times
    a direction and weighs E[σ] (→ √(p(1−p)) as G grows); Dr. GRPO does not divide, so it weighs E[σ²]
    (→ p(1−p)) and gives less to very easy and very hard prompts; DAPO keeps GRPO's σ and redraws groups
    with σ = 0, which weigh nothing anyway, so DAPO's shares equal GRPO's (it changes the cost, not the
    direction).

    Rows per G (--G inf: the large-group limits): bins of p, then extreme (p < x or p > 1 − x), medium
    (lo ≤ p ≤ hi) and all. Prompts with p̂ = 0 or 1 weigh nothing but are counted.

    Example:

        sigmatool budget sample_data/bigmath_solve_rates.parquet --G 8 --G inf
    """
    with _reported():
        from sigmatool import budget  # imported by its command only: start-up time counts

        options = _input_options(locals())
        sizes = parse_group_sizes(group_sizes or ["8"], allow_inf=True, option="--G")
        budget.check_sizes(sizes, estimator.value)
        segments = budget.Segments(bins, extreme, budget.parse_medium(medium))
        hist, ds = _scan(options)
        summary = budget.summarize(hist, ds.by, sizes, estimator=estimator.value, segments=segments)
        overall = summary
        if ds.by:
            overall = budget.summarize(hist, (), sizes, estimator=estimator.value, segments=segments)
        full = budget.bar_scale(summary)
        view = View(
            headline=budget.headline(overall),
            percent=("prompt_share", "grpo_share", "drgrpo_share", "silent_rate"),
            bars=("grpo_share", "drgrpo_share"),
            bar_full=full,
            labels={
                "prompt_share": "prompts\nshare",
                "grpo_share": "GRPO\n(= DAPO)",
                "drgrpo_share": "Dr. GRPO",
                "grpo_over_drgrpo": "GRPO ÷\nDr. GRPO",
                "silent_rate": "silent\ngroups",
            },
            footer=budget.notes(overall, full),
        )
        write_frame(summary, fmt.value, output, view)


@app.command("simulate")
def simulate_command(
    init: Annotated[
        str | None,
        typer.Option(
            "--init",
            metavar="DATA",
            help="Start population: the interior p̂ of this data (any input; the input options apply), or "
            "beta-mix for the paper's fallback mixture. Default: the bundled Big-Math sample (stdin only as -).",
            show_default=False,
        ),
    ] = None,
    prompts: Annotated[int, typer.Option("--prompts", min=1, help="Number of simulated prompts M.")] = 6000,
    group_size: Annotated[
        int, typer.Option("--G", "-G", "--group-size", min=2, max=100_000, help="Group size G.")
    ] = 8,
    steps: Annotated[int, typer.Option("--steps", min=1, help="Training steps.")] = 150,
    lr: Annotated[float, typer.Option("--lr", help="Learning rate on θ = logit(p), > 0.")] = 0.5,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="The same seed gives byte-identical output.")
    ] = 7,
    methods: Annotated[
        str, typer.Option("--methods", help="Comma list of update rules: grpo, drgrpo, dapo.")
    ] = "grpo,drgrpo,dapo",
    dapo_cap: Annotated[
        int, typer.Option("--dapo-cap", min=1, help="DAPO draws at most T groups per prompt and step.")
    ] = 4,
    trace: Annotated[
        bool, typer.Option("--trace", help="Output the per-step trace instead of the per-method summary.")
    ] = False,
    input_format: InputFormatOpt = None,
    col: ColOpt = None,
    k_col: KColOpt = None,
    n_col: NColOpt = None,
    samples: SamplesOpt = None,
    rollouts: RolloutsOpt = False,
    prompt_col: PromptColOpt = None,
    reward_col: RewardColOpt = None,
    threshold: ThresholdOpt = None,
    weight_col: WeightColOpt = None,
    skip_invalid: SkipInvalidOpt = False,
    fmt: FormatOpt = OutputFormat.auto,
    output: OutputOpt = None,
) -> None:
    """The paper's controlled training run: M one-parameter prompts trained by GRPO, Dr. GRPO and DAPO.

    Each prompt is a policy p = sigmoid(θ). A step draws k ~ Binomial(G, p) and moves θ by lr·σ (GRPO),
    lr·σ² (Dr. GRPO), or lr·σ of the first non-silent group of up to --dapo-cap draws (DAPO; 0 if all are
    silent), σ = √(k(G−k))/G: the exact update of the group-std identity for the score y − p. The summary
    sets the observed silent fraction against the closed form mean p^G + (1−p)^G (R²), follows the
    hardest start quartile, counts DAPO's samples against GRPO's, and gives the gradient share of extreme
    prompts (p < 0.1 or p > 0.9) at the start, measured from simulated draws and predicted from E[σ]
    (GRPO, DAPO) or E[σ²] (Dr. GRPO). The start is --prompts draws of the data's p̂ with 0 < p̂ < 1,
    clipped to [0.02, 0.98].

    Example:

        sigmatool simulate --init sample_data/bigmath_solve_rates.parquet --trace -o trace.parquet
    """
    from rich.progress import Progress  # only this command draws a progress bar

    with _reported():
        from sigmatool.simulate import (
            PROGRESS_WORK,
            check_run,
            headline,
            simulate,
            start_input,
        )  # imported by its command only: start-up time counts

        chosen = check_run(prompts, group_size, steps, lr, seed, methods, dapo_cap)
        options = start_input(
            init,
            _input_options(locals()),
        )
        start = options if isinstance(options, str) else _scan(options)[0]
        notes: list[str] = []
        console = stderr_console()
        quick = prompts * steps * len(chosen) < PROGRESS_WORK
        with Progress(console=console, transient=True, disable=quick or not console.is_terminal) as bar:
            task = bar.add_task("simulating", total=steps * len(chosen))
            frames = simulate(
                start,
                prompts=prompts,
                group_size=group_size,
                steps=steps,
                lr=lr,
                seed=seed,
                methods=chosen,
                dapo_cap=dapo_cap,
                notes=notes,
                on_step=lambda: bar.advance(task),
            )
        _note(notes)
        view = View(
            headline=headline(frames[1], steps=steps, group_size=group_size, prompts=prompts),
            percent=(
                "observed_silent",
                "predicted_silent",
                "extreme_share_measured",
                "extreme_share_predicted",
            ),
            labels={
                "observed_silent": "silent\nobserved",
                "predicted_silent": "silent\npredicted",
                "q1_mean_p": "q1 mean p\n(hardest)",
                "silent_r2": "silent R²",
                "start_hardest_quartile_mean_p": "hardest ¼\nstart p",
                "final_hardest_quartile_mean_p": "hardest ¼\nfinal p",
                "samples_vs_grpo": "samples\n÷ GRPO's",
                "extreme_share_measured": "extreme share\nmeasured",
                "extreme_share_predicted": "extreme share\npredicted",
            },
        )
        write_frame(frames[0] if trace else frames[1], fmt.value, output, view)


@app.command("groupsize")
def groupsize_command(
    data: DataArg = None,
    fidelity: Annotated[
        float,
        typer.Option(
            "--fidelity",
            min=0.0,
            max=1.0,
            metavar="φ*",
            help="Target fidelity, strictly between 0 and 1: the share of its large-group update each prompt "
            "should get.",
        ),
    ] = 0.9,
    objective: Annotated[
        str,
        typer.Option(
            "--objective",
            metavar="grpo|drgrpo",
            help="grpo: φ = E[σ]/√(p(1−p)), exact at every G. drgrpo: φ = 1 − 1/G, the same at every p.",
        ),
    ] = "grpo",
    max_silent: Annotated[
        float | None,
        typer.Option(
            "--max-silent",
            min=0.0,
            max=1.0,
            metavar="S",
            help="Also require P_silent = p^G + (1−p)^G ≤ S; the answer is the larger of the two G.",
        ),
    ] = None,
    min_size: Annotated[int, typer.Option("--min-G", min=1, help="Smallest group size considered.")] = 2,
    max_size: Annotated[
        int, typer.Option("--max-G", min=1, max=2**31, help="A prompt that needs a larger G is unreachable.")
    ] = 4096,
    std: Annotated[
        str,
        typer.Option(
            "--std",
            metavar="population|bessel",
            help="bessel: torch's std (TRL, verl, OpenRLHF) realises √((G−1)/G) of the update: more G needed.",
        ),
    ] = "population",
    law: Annotated[
        bool,
        typer.Option(
            "--law", help="Also give the closed-form law ⌈1/(8εp(1−p))⌉, ε = 1 − φ*, beside the exact G."
        ),
    ] = False,
    uniform: Annotated[
        int,
        typer.Option("--uniform", min=1, help="The uniform G compared against (share_at_target_uniform)."),
    ] = 8,
    bins: Annotated[
        int,
        typer.Option("--bins", min=0, max=1000, help="Equal-width bins of p; 0 for the overall row only."),
    ] = 10,
    per_prompt: PerPromptOpt = False,
    input_format: InputFormatOpt = None,
    col: ColOpt = None,
    k_col: KColOpt = None,
    n_col: NColOpt = None,
    samples: SamplesOpt = None,
    rollouts: RolloutsOpt = False,
    prompt_col: PromptColOpt = None,
    reward_col: RewardColOpt = None,
    threshold: ThresholdOpt = None,
    weight_col: WeightColOpt = None,
    by: ByOpt = None,
    id_col: IdColOpt = None,
    skip_invalid: SkipInvalidOpt = False,
    fmt: FormatOpt = OutputFormat.auto,
    output: OutputOpt = None,
) -> None:
    """The group size each prompt needs to reach a target fidelity, and what a per-prompt schedule saves.

    Fidelity is the share of its large-group update that a group of G answers gives a prompt: for GRPO
    φ(G, p) = E[σ]/√(p(1−p)), which rises with G, fastest at p = ½ (φ(8, 0.5) = 0.93, φ(8, 0.05) = 0.54).
    Each prompt gets the smallest G ≥ --min-G with φ ≥ φ*, exact (not the law 1/(8εp(1−p))). Prompts
    with p̂ = 0 or 1 have no signal at any G and, like those needing G > --max-G, are unreachable: counted,
    never given a number. Rows: all prompts, then bins of p, per --by group; --per-prompt streams one row
    per prompt, ready for a trainer's config.

    Example:

        sigmatool groupsize sample_data/bigmath_solve_rates.parquet --fidelity 0.9
    """
    with _reported():
        from sigmatool import groupsize  # imported by its command only: start-up time counts

        options = _input_options(locals())
        target = groupsize.GroupSizeOptions(
            fidelity, objective, std, min_size, max_size, max_silent, uniform, law
        )
        hist, ds = _scan(options)
        table = groupsize.group_size_table(hist, target, detail=per_prompt)
        if per_prompt:
            sink_frame(groupsize.per_prompt(ds, table, target), fmt.value, output)
            return
        summary = groupsize.summarize(hist, ds.by, target, bins=bins, table=table)
        view = View(
            headline=groupsize.headline(hist, table, target),
            percent=("share_at_target_uniform",),
            labels=groupsize.LABELS,
            footer=groupsize.footer(target),
        )
        write_frame(summary, fmt.value, output, view)


def version_callback(value: bool) -> None:
    if value:
        typer.echo(f"sigmatool {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """What a prompt set will do to GRPO, Dr. GRPO and DAPO training, from its pass rates."""


# typer's parsing errors derive from click's ClickException; typer re-exports BadParameter from whichever
# click it uses (its own copy in newer releases), so find the base class through it.
_PARSE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at devnull so that the final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main() -> None:
    """Console entry point: one-line usage errors, documented exit codes, quiet on a broken pipe."""
    try:
        code = app(prog_name="sigmatool", standalone_mode=False)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        code = ExitCode.OK
    except _PARSE_ERROR as exc:
        # Parsing errors from typer (an option out of its range, an unknown flag): one line, exit 2.
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if type(exc).__name__ == "NoArgsIsHelpError":
            typer.echo(message, err=True)
        else:
            command = " ".join(sys.argv[1:2]) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else ""
            hint = f" (see 'sigmatool {command} --help')".replace("  ", " ")
            stderr_console().print(Text(f"error: {message}{hint}", style="bold red"))
        code = getattr(exc, "exit_code", ExitCode.USAGE)
    sys.exit(int(code or 0))

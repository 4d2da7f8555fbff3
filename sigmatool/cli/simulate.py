"""``sigmatool simulate``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.params import output_options, read_options, uses
from sigmatool.errors import UsageError
from sigmatool.options import InputOptions, OutputOptions, SimulateOptions

if TYPE_CHECKING:
    import polars as pl

BETA_MIX = "beta-mix"


def _start_input(init: str | None, read: InputOptions) -> InputOptions | None:
    """The data the start population is drawn from (None for the beta mixture); never stdin unless '-'."""
    if init == BETA_MIX:
        if read != InputOptions():
            raise UsageError(
                "--init beta-mix reads no data: the input options (--col, --weight-col, …) do not apply"
            )
        return None
    if init:
        return replace(read, paths=(init,))
    if read.trainer is not None:
        raise UsageError(f"--from {read.trainer}: give the dump files or their folder with --init")
    from sigmatool.load import sample_options

    return sample_options(read)


InitOpt = Annotated[
    str | None,
    typer.Option(
        "--init",
        metavar="DATA",
        help="Start population: the interior p̂ of this data (any input; the input options apply), or "
        "beta-mix for the paper's fallback mixture. Default: the bundled Big-Math sample (stdin only as -).",
        show_default=False,
    ),
]
PromptsOpt = Annotated[int, typer.Option("--prompts", help="Number of simulated prompts M.")]
GroupSizeOpt = Annotated[int, typer.Option("--G", "-G", "--group-size", help="Group size G, 2–100,000.")]
StepsOpt = Annotated[int, typer.Option("--steps", help="Training steps.")]
LrOpt = Annotated[float, typer.Option("--lr", help="Learning rate on θ = logit(p), > 0.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="The same seed gives byte-identical output.")]
MethodsOpt = Annotated[str, typer.Option("--methods", help="Comma list of update rules: grpo, drgrpo, dapo.")]
DapoCapOpt = Annotated[
    int, typer.Option("--dapo-cap", help="DAPO draws at most T groups per prompt and step.")
]
TraceOpt = Annotated[
    bool, typer.Option("--trace", help="Output the per-step trace instead of the per-method summary.")
]


@app.command("simulate")
@uses(read=read_options, out=output_options)
def simulate_command(
    init: InitOpt = None,
    prompts: PromptsOpt = 6000,
    group_size: GroupSizeOpt = 8,
    steps: StepsOpt = 150,
    lr: LrOpt = 0.5,
    seed: SeedOpt = 7,
    methods: MethodsOpt = "grpo,drgrpo,dapo",
    dapo_cap: DapoCapOpt = 4,
    trace: TraceOpt = False,
    read: InputOptions = InputOptions(),
    out: OutputOptions = OutputOptions(),
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
    options = SimulateOptions(prompts, group_size, steps, lr, seed, (methods,), dapo_cap)
    start_input = _start_input(init, read)
    run.check(start_input, out)
    from sigmatool import simulate
    from sigmatool.render import write_frame

    if start_input is None:
        trace_frame, summary = _simulate(BETA_MIX, options)
    else:
        with run.histogram_of(start_input) as hist:
            trace_frame, summary = _simulate(hist.frame, options)
    write_frame(trace_frame if trace else summary, out, simulate.view(summary, options))


def _simulate(start: pl.DataFrame | str, options: SimulateOptions) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Run the simulation with a progress bar on a terminal; notes on how the start was drawn."""
    import sys

    from rich.progress import Progress

    from sigmatool.simulate import PROGRESS_WORK, simulate

    notes: list[str] = []
    work = options.prompts * options.steps * len(options.methods)
    with Progress(transient=True, disable=work < PROGRESS_WORK or not sys.stderr.isatty()) as bar:
        task = bar.add_task("simulating", total=options.steps * len(options.methods))
        frames = simulate(
            start,
            prompts=options.prompts,
            group_size=options.group_size,
            steps=options.steps,
            lr=options.lr,
            seed=options.seed,
            methods=options.methods,
            dapo_cap=options.dapo_cap,
            notes=notes,
            on_step=lambda: bar.advance(task),
        )
    run.note(notes)
    return frames

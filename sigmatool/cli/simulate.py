"""``sigmatool simulate``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.params import output_options, plot_options, read_options, uses
from sigmatool.errors import UsageError
from sigmatool.options import InputOptions, OutputOptions, PlotOptions, SimulateOptions

if TYPE_CHECKING:
    import polars as pl

    from sigmatool.figures import Plot

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
    from sigmatool.load import sample_options

    return sample_options(read)


@app.command("simulate")
@uses(read=read_options, out=output_options, plot=plot_options)
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
    prompts: Annotated[int, typer.Option("--prompts", help="Number of simulated prompts M.")] = 6000,
    group_size: Annotated[
        int, typer.Option("--G", "-G", "--group-size", help="Group size G, 2–100,000.")
    ] = 8,
    steps: Annotated[int, typer.Option("--steps", help="Training steps.")] = 150,
    lr: Annotated[float, typer.Option("--lr", help="Learning rate on θ = logit(p), > 0.")] = 0.5,
    seed: Annotated[int, typer.Option("--seed", help="The same seed gives byte-identical output.")] = 7,
    methods: Annotated[
        str, typer.Option("--methods", help="Comma list of update rules: grpo, drgrpo, dapo.")
    ] = ("grpo,drgrpo,dapo"),
    dapo_cap: Annotated[
        int, typer.Option("--dapo-cap", help="DAPO draws at most T groups per prompt and step.")
    ] = 4,
    trace: Annotated[
        bool, typer.Option("--trace", help="Output the per-step trace instead of the per-method summary.")
    ] = False,
    read: InputOptions = InputOptions(),
    out: OutputOptions = OutputOptions(),
    plot: PlotOptions = PlotOptions(),
) -> None:
    """The paper's controlled training run: M one-parameter prompts trained by GRPO, Dr. GRPO and DAPO.

    Each prompt is a policy p = sigmoid(θ). A step draws k ~ Binomial(G, p) and moves θ by lr·σ (GRPO),
    lr·σ² (Dr. GRPO), or lr·σ of the first non-silent group of up to --dapo-cap draws (DAPO; 0 if all are
    silent), σ = √(k(G−k))/G: the exact update of the group-std identity for the score y − p. The summary
    sets the observed silent fraction against the closed form mean p^G + (1−p)^G (R²), follows the
    hardest start quartile, counts DAPO's samples against GRPO's, and gives the gradient share of extreme
    prompts (p < 0.1 or p > 0.9) at the start, measured from simulated draws and predicted from E[σ]
    (GRPO, DAPO) or E[σ²] (Dr. GRPO). The start is --prompts draws of the data's p̂ with 0 < p̂ < 1,
    clipped to [0.02, 0.98]. --plot draws each step's observed silent share against the prediction, and the
    hardest quartile's mean p per step.

    Example:

        sigmatool simulate --init sample_data/toy_pass_rates.csv --trace -o run.csv

        sigmatool simulate --steps 50 --plot run.png
    """
    options = SimulateOptions(prompts, group_size, steps, lr, seed, (methods,), dapo_cap)
    start_input = _start_input(init, read)
    run.check(start_input, out, plot.output)
    from sigmatool import simulate
    from sigmatool.render import write_frame

    trace_frame, summary, source = _run(start_input, options)
    run.save_plot(plot, lambda: _figure(trace_frame, summary, source))
    write_frame(trace_frame if trace else summary, out, simulate.view(summary, options))


def _run(
    start_input: InputOptions | None, options: SimulateOptions
) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    """The trace and summary of the run, and its start population as a figure's caption names it."""
    if start_input is None:
        return (*_simulate(BETA_MIX, options), "the paper's beta mixture (--init beta-mix)")
    with run.histogram_of(start_input) as hist:
        return (*_simulate(hist.frame, options), run.source_of(hist))


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


def _figure(trace: pl.DataFrame, summary: pl.DataFrame, source: str) -> Plot:
    from sigmatool.figures.commands import simulate_plot

    return simulate_plot(trace, summary, source)

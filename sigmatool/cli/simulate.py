"""``sigmatool simulate``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import Analysed
from sigmatool.cli.params import (
    DapoCap,
    GroupSizes,
    Seed,
    Steps,
    output_options,
    pass_at_option,
    plot_options,
    read_options,
    uses,
)
from sigmatool.cli.plan_params import simulate_plan_options
from sigmatool.errors import UsageError
from sigmatool.options import InputOptions, OutputOptions, PlotOptions, SimulateOptions
from sigmatool.options.analyses import BETA_MIX, SimulateRequest, simulate_start
from sigmatool.options.plan import SimulatePlan

if TYPE_CHECKING:
    import polars as pl

    from sigmatool.render import View

Frames = tuple["pl.DataFrame", "pl.DataFrame"]


def run_options(
    prompts: Annotated[int, typer.Option("--prompts", help="Number of simulated prompts M.")] = 6000,
    group_sizes: GroupSizes = None,
    steps: Steps = 150,
    lr: Annotated[float, typer.Option("--lr", help="Learning rate on θ = logit(p), > 0.")] = 0.5,
    seed: Seed = None,
    methods: Annotated[
        str | None,
        typer.Option(
            "--methods",
            metavar="[grpo|drgrpo|dapo],…",
            help="Comma list of update rules: grpo, drgrpo, dapo (with a plan: one of them).",
            show_default="grpo,drgrpo,dapo; with a plan grpo",
        ),
    ] = None,
    dapo_cap: DapoCap = None,
) -> SimulateRequest:
    """The run: its size, group size, length, learning rate, seed and update rules."""
    return SimulateRequest(prompts, tuple(group_sizes or ()), steps, lr, seed, methods, dapo_cap)


InitOpt = Annotated[
    str | None,
    typer.Option(
        "--init",
        metavar="DATA",
        help="Start population: the interior p̂ of this data (any input; the input options apply), or "
        "beta-mix for the paper's fallback mixture; stdin only as -.",
        show_default="the bundled Big-Math sample",
    ),
]
TraceOpt = Annotated[
    bool, typer.Option("--trace", help="Output the per-step trace instead of the per-method summary.")
]


@app.command("simulate")
@uses(
    read=read_options,
    out=output_options,
    request=run_options,
    planned=simulate_plan_options,
    plot=plot_options,
    pass_at=pass_at_option,
)
def simulate_command(
    init: InitOpt = None,
    trace: TraceOpt = False,
    read: InputOptions = InputOptions(),
    out: OutputOptions = OutputOptions(),
    request: SimulateRequest = SimulateRequest(),
    planned: SimulatePlan | None = None,
    plot: PlotOptions = PlotOptions(),
    pass_at: tuple[int, ...] = (),
) -> None:
    """The paper's controlled training run: M one-parameter prompts trained by GRPO, Dr. GRPO and DAPO.

    Each prompt is a policy p = sigmoid(θ). A step draws k ~ Binomial(G, p) and moves θ by lr·σ (GRPO),
    lr·σ² (Dr. GRPO), or lr·σ of the first non-silent group of up to --dapo-cap draws (DAPO; 0 if all are
    silent), σ = √(k(G−k))/G: the exact update of the group-std identity for the score y − p. The summary
    sets the observed silent fraction against the closed form mean p^G + (1−p)^G (R²), follows the
    hardest start quartile, counts DAPO's samples against GRPO's, and gives the gradient share of extreme
    prompts (p < 0.1 or p > 0.9) at the start, measured from simulated draws and predicted from E[σ]
    (GRPO, DAPO) or E[σ²] (Dr. GRPO). The start is --prompts draws of the data's p̂ with 0 < p̂ < 1,
    clipped to [0.02, 0.98]. With --plan or --plan-budget one rule trains at planned per-prompt group
    sizes and at uniform G with the same rollouts per step (docs/plan.md). --plot draws each step's observed
    silent share against the prediction, and the hardest quartile's mean p per step.

    Examples:

        sigmatool simulate --init sample_data/toy_pass_rates.csv --trace -o run.csv

        sigmatool simulate --steps 50 --plot run.png
    """
    options = _credited(request.options(planned=planned is not None), pass_at, planned)
    plan_file = planned.file if planned is not None else None
    start_input = _start(simulate_start(init, read, plan_file))
    run.check(start_input, out, plot.output)
    from sigmatool.simulate import SimulationRun

    frames, view, source = _started(start_input, options, planned)
    run.show(SimulationRun(*frames, view, trace), out, plot, source)


def _credited(
    options: SimulateOptions, pass_at: tuple[int, ...], planned: SimulatePlan | None
) -> SimulateOptions:
    """The run under --pass-at's one K: the uniform rules only (a plan's sizes are made under pass@1)."""
    K = run.checked_credits(pass_at, (), many=False)
    if K and planned is not None:
        raise UsageError(
            "--pass-at trains the uniform rules; a plan's sizes are pass@1's (plan --pass-at K makes one)"
        )
    return replace(options, pass_at=K[0] if K else 1)


def _start(start: InputOptions | None) -> InputOptions | None:
    """The start's input, the bundled sample where it names no data (never stdin unless '-')."""
    if start is None or start.paths:
        return start
    from sigmatool.load import sample_options

    return sample_options(start)


def _started(
    start_input: InputOptions | None, options: SimulateOptions, planned: SimulatePlan | None
) -> tuple[Frames, View, str]:
    """The run from the paper's beta mixture (no input) or from the input's pass rates, and its source."""
    if start_input is None:
        return (*_simulate(BETA_MIX, options, planned), "the paper's beta mixture (--init beta-mix)")
    from sigmatool.load import sample_options
    from sigmatool.load.sources import SAMPLE_LABEL

    with run.session(Analysed(start_input), stream=False) as start:
        assert start.histogram is not None  # stream=False: the histogram, never streamed rows
        frames, view = _simulate(start.histogram, options, planned)
        sample = start_input.paths == sample_options().paths  # the caption names it, not its path
        return frames, view, SAMPLE_LABEL if sample else run.source_of(start)


def _simulate(
    start: pl.DataFrame | str, options: SimulateOptions, planned: SimulatePlan | None
) -> tuple[Frames, View]:
    """Run the simulation (with a progress bar on a terminal, for a run of a second or more); notes on how
    the start was drawn."""
    from sigmatool.simulate.asked import simulated

    frames, view, notes = simulated(start, options, planned)
    run.note(notes)
    return frames, view

"""``sigmatool groupsize``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.params import PerPrompt, input_options, output_options, plot_options, uses
from sigmatool.errors import UsageError
from sigmatool.options import (
    GroupSizeOptions,
    InputOptions,
    Objective,
    OutputOptions,
    PlotOptions,
    Std,
    check_count,
)

if TYPE_CHECKING:
    from sigmatool.figures import Plot
    from sigmatool.load import Histogram


def target_options(
    fidelity: Annotated[
        float,
        typer.Option(
            "--fidelity",
            metavar="φ*",
            help="Target fidelity in (0, 1): the share of its large-group update each prompt should get.",
        ),
    ] = 0.9,
    objective: Annotated[
        Objective,
        typer.Option(
            "--objective",
            help="grpo: φ = E[σ]/√(p(1−p)), exact at every G. drgrpo: φ = 1 − 1/G, the same at every p.",
        ),
    ] = Objective.grpo,
    max_silent: Annotated[
        float | None,
        typer.Option(
            "--max-silent",
            metavar="S",
            help="Also require P_silent = p^G + (1−p)^G ≤ S, S in (0, 1]; the answer is the larger of the two G.",
        ),
    ] = None,
    min_size: Annotated[int, typer.Option("--min-G", help="Smallest group size considered (≥ 1).")] = 2,
    max_size: Annotated[
        int, typer.Option("--max-G", help="A prompt that needs a larger G is unreachable (≤ 2^31).")
    ] = 4096,
    std: Annotated[
        Std,
        typer.Option(
            "--std",
            help="bessel: torch's std (TRL, verl, OpenRLHF) realises √((G−1)/G) of the update: more G needed.",
        ),
    ] = Std.population,
    law: Annotated[
        bool,
        typer.Option(
            "--law", help="Also give the closed-form law ⌈1/(8εp(1−p))⌉, ε = 1 − φ*, beside the exact G."
        ),
    ] = False,
    uniform: Annotated[
        int, typer.Option("--uniform", help="The uniform G compared against (share_at_target_uniform).")
    ] = 8,
) -> GroupSizeOptions:
    """The target each prompt's group size must reach, and the rules it is found by."""
    return GroupSizeOptions(
        fidelity, objective.value, std.value, min_size, max_size, max_silent, uniform, law
    )


@app.command("groupsize")
@uses(target=target_options, inputs=input_options, out=output_options, plot=plot_options)
def groupsize_command(
    target: GroupSizeOptions = GroupSizeOptions(),
    bins: Annotated[
        int | None,
        typer.Option(
            "--bins", help="Equal-width bins of p, 0–1000; 0 for the overall row only.", show_default="10"
        ),
    ] = None,
    per_prompt: PerPrompt = False,
    inputs: InputOptions = InputOptions(),
    out: OutputOptions = OutputOptions(),
    plot: PlotOptions = PlotOptions(),
) -> None:
    """The group size each prompt needs to reach a target fidelity, and what a per-prompt schedule saves.

    Fidelity is the share of its large-group update that a group of G answers gives a prompt: for GRPO
    φ(G, p) = E[σ]/√(p(1−p)), which rises with G, fastest at p = ½ (φ(8, 0.5) = 0.93, φ(8, 0.05) = 0.54).
    Each prompt gets the smallest G ≥ --min-G with φ ≥ φ*, exact (not the law 1/(8εp(1−p))). Prompts
    with p̂ = 0 or 1 have no signal at any G and, like those needing G > --max-G, are unreachable: counted,
    never given a number. Rows: all prompts, then bins of p, per --by group; --per-prompt streams one row
    per prompt, ready for a trainer's config. --plot draws the exact G against p (and the law) over the
    prompts' histogram of p.

    Example:

        sigmatool groupsize sample_data/bigmath_solve_rates.parquet --fidelity 0.9

        sigmatool groupsize sample_data/toy_pass_rates.csv --plot groupsize.png
    """
    if bins is not None:
        check_count("--bins", bins, 0, 1000)
        if per_prompt:
            raise UsageError("--bins summarises by bin; with --per-prompt there is no summary to break down")
    run.check(inputs, out, plot.output)
    from sigmatool import groupsize
    from sigmatool.render import sink_frame, write_frame

    with run.histogram_of(inputs) as hist:
        table = groupsize.group_size_table(hist.frame, target, detail=per_prompt)
        run.save_plot(plot, lambda: _figure(hist, target, inputs.by))
        if per_prompt:
            sink_frame(groupsize.per_prompt(hist.dataset, table, target), out)
            return
        summary = groupsize.summarize(
            hist.frame, inputs.by, target, bins=10 if bins is None else bins, table=table
        )
        write_frame(summary, out, groupsize.view(hist.frame, table, target, inputs.by))


def _figure(hist: Histogram, target: GroupSizeOptions, by: tuple[str, ...]) -> Plot:
    from sigmatool.figures.commands import groupsize_plot

    return groupsize_plot(hist.frame, target, by, run.source_of(hist))

"""``sigmatool silent``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import beyond_options
from sigmatool.cli.params import (
    DapoCap,
    EstimatorOpt,
    GroupSizes,
    PerPrompt,
    input_options,
    output_options,
    plot_options,
    renamed,
    uses,
)
from sigmatool.options import (
    BeyondOptions,
    Estimator,
    InputOptions,
    OutputOptions,
    PlotOptions,
    SilentOptions,
    parse_group_sizes,
)

if TYPE_CHECKING:
    pass

# What the command runs once its options are checked (imported before the garbage collector resumes).
ANALYSIS = ("sigmatool.estimators", "sigmatool.silent", "sigmatool.render")

ByBins = Annotated[
    int | None,
    typer.Option(
        "--by-bins",
        metavar="N",
        help="Break the summary down into N equal-width bins of p, 1–1,000; in place of its overall rows, as "
        "--by does by a column.",
    ),
]
OldBins = Annotated[
    str | None,
    renamed(
        "--bins",
        now="silent's breakdown by bins of p is --by-bins N (in budget and groupsize, --bins adds bin rows "
        "beside the overall ones)",
    ),
]


@app.command("silent")
@uses(inputs=input_options, out=output_options, beyond=beyond_options, plot=plot_options)
def silent_command(
    group_sizes: GroupSizes = None,
    estimator: EstimatorOpt = Estimator.plugin,
    dapo_cap: DapoCap = None,
    bins: ByBins = None,
    per_prompt: PerPrompt = False,
    old_bins: OldBins = None,
    inputs: InputOptions = InputOptions(),
    out: OutputOptions = OutputOptions(),
    beyond: BeyondOptions = BeyondOptions(),
    plot: PlotOptions = PlotOptions(),
) -> None:
    """Share of groups that teach nothing (all right or all wrong) at group size G, and DAPO's cost.

    A group of G answers whose rewards are all equal has σ = 0: GRPO and Dr. GRPO get no gradient from it,
    DAPO throws it away and draws another. For a prompt with pass rate p that happens with probability
    p^G + (1−p)^G. The table view adds a sparkline of the silent share against G, and --plot a figure,
    both over the powers of two that span a quarter of the smallest G asked to four times the largest.

    With counts k of n, --prior predicts beyond the samples (a never-solved prompt need not be impossible),
    --bounds gives what the data allow, and --ci a bootstrap interval (docs/prior.md).

    Examples:

        sigmatool silent sample_data/bigmath_solve_rates.parquet --G 4,8,16

        sigmatool silent sample_data/example_run --from verl --G 16 --prior beta

        sigmatool silent sample_data/toy_pass_rates.csv --plot silent.png
    """
    options = SilentOptions(
        tuple(parse_group_sizes(group_sizes or ["8"])), estimator.value, dapo_cap, bins, per_prompt
    )
    # Counts are checked once read: a rate column on a 1/n grid is read as counts of n.
    beyond.check(has_counts=True, estimator=options.estimator, per_prompt=options.per_prompt)
    run.check(inputs, out, plot.output, imports=ANALYSIS)
    from sigmatool import estimators, load, silent
    from sigmatool.render import resolve_format, sink_frame, write_frame

    stream = options.estimator == "plugin" and not (beyond.prior.active or beyond.bounds or beyond.ci)
    with run.values_of(inputs, stream, silent.totals_asked(options, inputs.groups)) as hist:
        beyond.check(has_counts=hist.dataset.has_counts, estimator=options.estimator)
        val = estimators.valuation(hist.frame, inputs.groups, options.sizes, options.estimator, beyond.prior)
        run.note([*val.notes(), *(load.id_notes(hist.dataset) if options.per_prompt else [])])
        if options.per_prompt:
            if plot.path is not None:
                grid = silent.curve(hist.frame, options, inputs.groups, val)
                run.save_plot(plot, grid, run.source_of(hist))
            sink_frame(
                silent.per_prompt(hist.dataset, hist.frame, options.sizes, cap=options.cap, prior=val), out
            )
            return
        table = resolve_format(out.fmt, out.output) == "table"
        figure = plot.path is not None
        result = silent.analyse(
            hist.frame, inputs.groups, options, val, beyond, spark=table, figure=figure, totals=hist.totals
        )
        if result.curve is not None:
            run.save_plot(plot, result.curve, run.source_of(hist))
        write_frame(result.summary, out, silent.view(result))

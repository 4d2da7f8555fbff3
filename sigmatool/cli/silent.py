"""``sigmatool silent``."""

from __future__ import annotations

from typing import Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import Analysed, analysed_beyond_options
from sigmatool.cli.params import (
    DapoCap,
    EstimatorOpt,
    GroupSizes,
    InvalidOpt,
    PerPrompt,
    ResolutionOpt,
    renamed,
    uses,
)
from sigmatool.options import Estimator, SilentOptions, parse_group_sizes
from sigmatool.shown import RowsResult

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


def silent_options(
    group_sizes: GroupSizes = None,
    estimator: EstimatorOpt = Estimator.auto,
    dapo_cap: DapoCap = None,
    bins: ByBins = None,
    per_prompt: PerPrompt = False,
    old_bins: OldBins = None,
    invalid: InvalidOpt = None,
    resolution: ResolutionOpt = None,
) -> SilentOptions:
    """The G asked, the estimator, DAPO's cap, the bins, per-prompt rows, and how raw rewards are read."""
    sizes = tuple(parse_group_sizes(group_sizes or ["8"]))
    return SilentOptions(
        sizes, estimator.value, dapo_cap, bins, per_prompt, invalid and invalid.value, resolution
    )


@app.command("silent")
@uses(given=analysed_beyond_options, options=silent_options)
def silent_command(options: SilentOptions = SilentOptions(), given: Analysed = Analysed()) -> None:
    """Share of groups that teach nothing (all right or all wrong) at group size G, and DAPO's cost.

    A group of G answers whose rewards are all equal has σ = 0: GRPO and Dr. GRPO get no gradient from it,
    DAPO throws it away and draws another. For a prompt with pass rate p that happens with probability
    p^G + (1−p)^G. The table view adds a sparkline of the silent share against G, and --plot a figure,
    both over the powers of two that span a quarter of the smallest G asked to four times the largest.

    With counts k of n, --prior predicts beyond the samples (a never-solved prompt need not be impossible),
    --bounds gives what the data allow, and --ci a bootstrap interval (docs/prior.md). With a rollout log,
    --invalid reads its invalid rewards as skipped, masked or 0, and --resolution ε ties rewards that
    differ by less than ε; --denoise reads counts graded by a noisy verifier back (docs/verifiers.md).

    Examples:

        sigmatool silent sample_data/bigmath_solve_rates.parquet --G 4,8,16

        sigmatool silent sample_data/example_run --from verl --G 16 --prior beta

        sigmatool silent sample_data/toy_pass_rates.csv --plot silent.png
    """
    if options.raw:  # --invalid, --resolution: from the raw rewards
        return run.raw_rewards(given, options)
    with run.session(given, estimator=options.estimator, sizes=options.sizes, per_prompt=options.per_prompt,
                     silent=options, imports=ANALYSIS, credits_many=True) as s:  # fmt: skip
        if options.per_prompt:
            run.note(s.id_notes())
            rows = RowsResult(s.silent_rows(options), s.curve_for(given.plot, options), (s.val.bias_note(),))
            run.answer(rows, given, s)
        else:
            spark = run.is_table(given.out)
            run.answer(s.silent(options, spark=spark, figure=bool(given.plot.path)), given, s)

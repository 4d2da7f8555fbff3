"""``sigmatool budget``."""

from __future__ import annotations

from typing import Annotated

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import Analysed, analysed_beyond_options
from sigmatool.cli.params import Bins, EstimatorOpt, GroupSizes, uses
from sigmatool.options import (
    DEFAULT_BINS,
    BudgetOptions,
    Estimator,
    Segments,
    parse_group_sizes,
    parse_medium,
)

# What the command runs once its options are checked (imported before the garbage collector resumes).
ANALYSIS = ("sigmatool.estimators", "sigmatool.budget", "sigmatool.render")

ExtremeOpt = Annotated[
    float,
    typer.Option("--extreme", metavar="X", help="Extreme prompts: p < x or p > 1 − x, with 0 < x < 0.5."),
]
MediumOpt = Annotated[
    str, typer.Option("--medium", metavar="LO,HI", help="Medium prompts: lo ≤ p ≤ hi, given as lo,hi.")
]


@app.command("budget")
@uses(given=analysed_beyond_options)
def budget_command(
    group_sizes: GroupSizes = None,
    estimator: EstimatorOpt = Estimator.auto,
    bins: Bins = None,
    extreme: ExtremeOpt = 0.1,
    medium: MediumOpt = "0.4,0.6",
    given: Analysed = Analysed(),
) -> None:
    """Where GRPO and Dr. GRPO spend their gradient across difficulty: each segment's share of the update.

    Three operations on the group std σ: GRPO divides the advantages by σ, so a prompt's update is σ times
    a direction and weighs E[σ] (→ √(p(1−p)) as G grows); Dr. GRPO does not divide, so it weighs E[σ²]
    (→ p(1−p)) and gives less to very easy and very hard prompts; DAPO keeps GRPO's σ and redraws groups
    with σ = 0, which weigh nothing anyway, so DAPO's shares equal GRPO's (it changes the cost, not the
    direction).

    Rows per G (--G inf: the large-group limits): bins of p, then extreme (p < x or p > 1 − x), medium
    (lo ≤ p ≤ hi) and all. Prompts with p̂ = 0 or 1 weigh nothing but are counted; with counts, --prior
    gives them (and every prompt) their posterior weights, --bounds and --ci ranges (docs/prior.md). --plot draws each G's shares
    per bin of p, with the extreme and medium totals beside.

    Example:

        sigmatool budget sample_data/bigmath_solve_rates.parquet --G 8 --G inf

        sigmatool budget sample_data/toy_pass_rates.csv --G 8,inf --plot budget.png
    """
    sizes = tuple(parse_group_sizes(group_sizes or ["8"], allow_inf=True))
    segments = Segments(DEFAULT_BINS if bins is None else bins, extreme, parse_medium(medium))
    options = BudgetOptions(sizes, estimator.value, segments)
    with run.session(
        given, estimator=options.estimator, sizes=options.sizes, imports=ANALYSIS, credits_many=True
    ) as s:
        run.answer(s.budget(options), given, s)

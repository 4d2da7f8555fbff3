"""``sigmatool plan``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from sigmatool.cli import run
from sigmatool.cli.app import app
from sigmatool.cli.beyond import Analysed, analysed_options
from sigmatool.cli.params import EstimatorOpt, PerPrompt, uses
from sigmatool.cli.plan_params import plan_request
from sigmatool.options import Estimator, PlanOptions
from sigmatool.options.plan import check_plan_output
from sigmatool.shown import RowsResult
from sigmatool.trainers.std import plan_std

if TYPE_CHECKING:
    from sigmatool.plan.groups import Plans
    from sigmatool.run import Run
    from sigmatool.shown import Shown

# What the command runs once its options are checked (imported before the garbage collector resumes).
ANALYSIS = ("sigmatool.estimators", "sigmatool.plan", "sigmatool.render")


DistributionOpt = Annotated[
    bool,
    typer.Option("--distribution", help="Output prompts and rollouts per group size and strategy instead."),
]


@app.command("plan")
@uses(given=analysed_options, request=plan_request)
def plan_command(
    request: PlanOptions = PlanOptions(),
    per_prompt: PerPrompt = False,
    estimator: EstimatorOpt = Estimator.auto,
    distribution: DistributionOpt = False,
    given: Analysed = Analysed(),
) -> None:
    """A group size for every prompt, under a rollout budget, where it teaches most.

    Each prompt gets one of --sizes or 0 (left out) so that the objective summed over prompts is as large
    as the budget allows; the plan is compared with every prompt at one G (the best uniform G, and the best
    uniform G with the prompts at p̂ = 0 or 1 dropped) at the same budget. The summary gives the budget
    used, prompts kept and left out, mean G, objective, silent rate and extreme prompts' share of the
    update (p < 0.1 or p > 0.9). --per-prompt streams the input rows with
    every column they have, plus group_size, keep, p_used, p_silent_at_G, expected_sigma, fidelity_at_G and hit_utility:
    a dataset for the trainer (docs/plan.md). Prompts that share a pass rate may split between two sizes:
    the first by --id-col, then by row, get the larger. With --by each group gets its own plan at --budget
    per prompt. --plot draws each pass rate's group size and the plan against uniform G at other budgets.
    With counts, --prior values prompts by their posterior (docs/prior.md), --estimator unbiased by their
    logged samples (sizes ≤ n).

    Example:

        sigmatool plan sample_data/toy_pass_rates.csv --per-prompt -o plan.csv
    """
    request, std_notes = plan_std(request, given.inputs.trainer)
    check_plan_output(request, given.inputs, per_prompt=per_prompt, distribution=distribution,
                      plot=given.plot.path is not None, pass_at=given.pass_at)  # fmt: skip
    with run.session(given, estimator=estimator.value, sizes=request.sizes,
                     stream=False, imports=ANALYSIS, per_prompt=per_prompt) as s:  # fmt: skip
        run.note(std_notes)
        plans = s.plans(request)
        if per_prompt:
            run.note(s.plan_notes(plans))
        record = _record(s, request, given) if per_prompt else None
        run.answer(_shown(s, plans, per_prompt, distribution, record), given, s)


def _shown(s: Run, plans: Plans, per_prompt: bool, distribution: bool, record: Record = None) -> Shown:
    """The plans (``distribution``: prompts and rollouts per size), or the input's rows with their sizes
    (and the ``record`` of what made them)."""
    from sigmatool.estimators.report import warned
    from sigmatool.plan.report import PlanResult

    result = PlanResult(plans, distribution, warned(plans.summary, s.val))
    return RowsResult(s.plan_rows(plans), result, result.warnings(), record) if per_prompt else result


Record = dict[str, Any] | None


def _record(s: Run, request: PlanOptions, given: Analysed) -> Record:
    """What made ``--per-prompt -o FILE`` (:mod:`sigmatool.integrations.meta`); None for other outputs."""
    output = given.out.output
    if not output or output == "-" or s.dataset is None or s.dataset.parts:
        return None
    from sigmatool.integrations.meta import plan_record

    return plan_record(s.dataset, request, run.command_line())

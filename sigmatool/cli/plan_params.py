"""The options of a plan request (``plan``, and ``simulate --plan-budget``), each declared once."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Annotated

import typer

from sigmatool.cli.params import Fidelity, MaxG, MinG, PlanBudgetOpt, StdConvention, UpdateRule, uses
from sigmatool.options import Method
from sigmatool.options.plan import (
    DEFAULT_BUDGET,
    DEFAULT_SIZES,
    PlanBudget,
    PlanOptions,
    SimulatePlan,
    plan_options,
    simulate_plan_request,
)

PLAN = "Plan"  # the panel of the help that lists the plan's options
_plan = functools.partial(typer.Option, rich_help_panel=PLAN)
DEFAULT_SPEC = ",".join(map(str, DEFAULT_SIZES))

Sizes = Annotated[
    str | None,
    _plan(
        "--sizes",
        metavar="SIZES",
        show_default=DEFAULT_SPEC,
        help="Allowed group sizes, each 2–100,000. A list 4,8,16,32, a range 2..64, or a range with a step "
        "8..64:8 (micro-batch multiples).",
    ),
]
ObjectiveName = Annotated[
    str | None,
    typer.Option(
        "--objective",
        metavar="[signal|fidelity|learnable|knapsack-rl|hit]",
        show_default="signal",
        help="What the plan maximises. signal: Σ E[σ] (E[σ²] with --method drgrpo). fidelity: prompts "
        "reaching φ* (--fidelity). "
        "learnable: expected non-silent groups. knapsack-rl: (1 − p^G − (1 − p)^G)·p(1 − p)² "
        "(arXiv:2509.25849). hit: expected prompts with a right rollout, 1 − E[(1 − p)^G] (HORA, "
        "arXiv:2605.07114; sizes may start at 1).",
        rich_help_panel=PLAN,
    ),
]


def budget_options(
    budget: Annotated[
        float | None,
        _plan(
            "--budget",
            metavar="B",
            help="Mean rollouts per prompt, > 0: the budget is ⌊B × prompts⌋ (p̂ ∈ {0, 1} counted).",
            show_default=f"{DEFAULT_BUDGET:g}",
        ),
    ] = None,
    total: Annotated[
        int | None,
        _plan("--total-rollouts", metavar="N", help="Or the budget as rollouts in all, ≥ 1."),
    ] = None,
    sizes: Sizes = None,
    min_size: MinG = None,
    max_size: MaxG = None,
    keep_all: Annotated[
        bool,
        _plan(
            "--keep-all",
            help="Leave no prompt out. Each gets at least the smallest size (the budget must cover that).",
        ),
    ] = False,
) -> PlanBudget:
    """How many rollouts, and the sizes they come in."""
    return PlanBudget(budget, total, sizes or DEFAULT_SPEC, min_size, max_size, keep_all)


@uses(limits=budget_options)
def plan_request(
    limits: PlanBudget,
    objective: ObjectiveName = None,
    method: UpdateRule = Method.grpo,
    fidelity: Fidelity = None,
    std: StdConvention = None,
) -> PlanOptions:
    """The whole plan request, checked at once (every problem named in one message); without --std,
    ``std_given`` is false, so that --from can choose the trainer's
    (:func:`sigmatool.options.plan.for_trainer`)."""
    request = plan_options(
        sizes=limits.sizes,
        objective=objective or "signal",
        method=method.value,
        std=std.value if std else "population",
        target=fidelity,
        keep_all=limits.keep_all,
        budget=limits.budget,
        total=limits.total,
        min_G=limits.min_size,
        max_G=limits.max_size,
    )
    return request if std else replace(request, std_given=False)


def simulate_plan_options(
    plan: Annotated[
        str | None,
        _plan(
            "--plan",
            metavar="FILE",
            help="Train at the group sizes of a per-prompt plan (sigmatool plan --per-prompt -o FILE; its "
            "p_used and group_size), against uniform G at the same rollouts per step. It is the start.",
        ),
    ] = None,
    plan_budget: PlanBudgetOpt = None,
    sizes: Sizes = None,
    objective: ObjectiveName = None,
    replan_every: Annotated[
        int,
        _plan(
            "--replan-every",
            metavar="K",
            help="With --plan-budget, also re-make the plan from the current p every K steps (0: never).",
        ),
    ] = 10,
) -> SimulatePlan | None:
    """A controlled run at planned group sizes (None: the plain run)."""
    return simulate_plan_request(plan, plan_budget, sizes, objective, replan_every)

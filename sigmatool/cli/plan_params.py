"""The options of a plan request (``plan``, and ``simulate --plan-budget``), each declared once."""

from __future__ import annotations

from typing import Annotated

import typer

from sigmatool.cli.params import uses
from sigmatool.options.plan import PlanBudget, PlanOptions, plan_options

PLAN = "Plan"

Sizes = Annotated[
    str,
    typer.Option(
        "--sizes",
        metavar="SIZES",
        help="Allowed group sizes, each 2–100,000: a list 4,8,16,32, a range 2..64, or a range with a step "
        "8..64:8 (micro-batch multiples).",
        rich_help_panel=PLAN,
    ),
]
ObjectiveName = Annotated[
    str,
    typer.Option(
        "--objective",
        help="signal: Σ E[σ] (E[σ²] with --method drgrpo). fidelity: prompts reaching φ* (--fidelity). "
        "learnable: expected non-silent groups. knapsack-rl: (1 − p^G − (1 − p)^G)·p(1 − p)² "
        "(arXiv:2509.25849).",
        rich_help_panel=PLAN,
    ),
]


def budget_options(
    budget: Annotated[
        float | None,
        typer.Option(
            "--budget",
            metavar="B",
            help="Mean rollouts per prompt, > 0: the budget is ⌊B × prompts⌋ (p̂ ∈ {0, 1} counted). Default 8.",
            show_default=False,
            rich_help_panel=PLAN,
        ),
    ] = None,
    total: Annotated[
        int | None,
        typer.Option("--total-rollouts", help="Or the budget as rollouts in all, ≥ 1.", rich_help_panel=PLAN),
    ] = None,
    sizes: Sizes = "4,8,16,32",
    min_size: Annotated[
        int | None,
        typer.Option("--min-G", help="Leave out the allowed sizes below this.", rich_help_panel=PLAN),
    ] = None,
    max_size: Annotated[
        int | None,
        typer.Option("--max-G", help="Leave out the allowed sizes above this.", rich_help_panel=PLAN),
    ] = None,
    keep_all: Annotated[
        bool,
        typer.Option(
            "--keep-all",
            help="Leave no prompt out: each gets at least the smallest size (the budget must cover that).",
            rich_help_panel=PLAN,
        ),
    ] = False,
) -> PlanBudget:
    """How many rollouts, and the sizes they come in."""
    return PlanBudget(budget, total, sizes, min_size, max_size, keep_all)


@uses(limits=budget_options)
def plan_request(
    limits: PlanBudget,
    objective: ObjectiveName = "signal",
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="grpo or drgrpo: the update signal and gradient shares measure.",
            rich_help_panel=PLAN,
        ),
    ] = "grpo",
    fidelity: Annotated[
        float | None,
        typer.Option(
            "--fidelity",
            metavar="φ*",
            help="Target fidelity in (0, 1) of --objective fidelity.",
            show_default="0.95",
            rich_help_panel=PLAN,
        ),
    ] = None,
    std: Annotated[
        str,
        typer.Option(
            "--std", help="population or bessel (torch's std: E[σ] × √((G−1)/G)).", rich_help_panel=PLAN
        ),
    ] = "population",
) -> PlanOptions:
    """The whole plan request, checked at once (every problem named in one message)."""
    return plan_options(
        sizes=limits.sizes,
        objective=objective,
        method=method,
        std=std,
        target=fidelity,
        keep_all=limits.keep_all,
        budget=limits.budget,
        total=limits.total,
        min_G=limits.min_size,
        max_G=limits.max_size,
    )

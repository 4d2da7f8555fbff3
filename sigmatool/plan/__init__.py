"""Rollout budgets spent where they teach: a group size per prompt under a budget (docs/plan.md)."""

from __future__ import annotations

from sigmatool.options.plan import OBJECTIVES, PlanOptions, parse_sizes, plan_options
from sigmatool.plan.compare import DISTRIBUTION_COLUMNS, STRATEGIES, SUMMARY_COLUMNS
from sigmatool.plan.core import VALUE_COLUMNS, Plan, distinct_values, plan, plan_values

__all__ = [
    "DISTRIBUTION_COLUMNS",
    "OBJECTIVES",
    "STRATEGIES",
    "SUMMARY_COLUMNS",
    "VALUE_COLUMNS",
    "Plan",
    "PlanOptions",
    "distinct_values",
    "parse_sizes",
    "plan",
    "plan_options",
    "plan_values",
]

"""Rollout budgets spent where they teach: a group size per prompt under a budget (docs/plan.md).

:mod:`.core` makes one plan (:func:`plan`, :func:`plan_values`) with :mod:`.curves`, :mod:`.hull`,
:mod:`.allocate` and :mod:`.reach`; :mod:`.compare` sets it against uniform G; :mod:`.groups` makes one per
``--by`` group; :mod:`.export` and :mod:`.rows` put it on the user's rows; :mod:`.report` is its table view;
:mod:`sigmatool.simulate.planned` trains with it in the controlled run.
"""

from __future__ import annotations

from sigmatool.options.plan import OBJECTIVES, PlanOptions, parse_sizes, plan_options
from sigmatool.plan.compare import DISTRIBUTION_COLUMNS, STRATEGIES, SUMMARY_COLUMNS
from sigmatool.plan.core import VALUE_COLUMNS, Plan, distinct_values, plan, plan_values
from sigmatool.plan.groups import Plans, plan_histogram

__all__ = [
    "DISTRIBUTION_COLUMNS",
    "OBJECTIVES",
    "STRATEGIES",
    "SUMMARY_COLUMNS",
    "VALUE_COLUMNS",
    "Plan",
    "PlanOptions",
    "Plans",
    "distinct_values",
    "parse_sizes",
    "plan",
    "plan_histogram",
    "plan_options",
    "plan_values",
]

"""How each prompt's value is estimated, and how far the data support a dataset-level number.

- :mod:`.rule`: the one rule that picks each (prompt, G) cell's estimator, and :func:`valuation`, which
  builds a run's valuation (docs/prior.md).
- :mod:`.value`: the value of each distinct (k, n) or p̂ under the chosen estimator — plug-in, unbiased,
  or the posterior mean under a prior fitted per ``--by`` group.
- :mod:`.bounds`: the smallest and largest value of a summary's rates over every pass-rate distribution that
  reproduces the observed histogram (``--bounds``).
- :mod:`.bootstrap`: percentile intervals with multinomial weights on the histogram (``--ci``).
"""

from __future__ import annotations

from sigmatool.estimators.bootstrap import beyond_intervals, interval_columns
from sigmatool.estimators.bounds import Bounded, Cut, bin_of, bound_columns, row_groups
from sigmatool.estimators.checks import check_estimator, value_keys
from sigmatool.estimators.report import (
    ESTIMATOR,
    contradiction,
    contradictions,
    identification,
    outside,
    range_notes,
    said_once,
    unidentified,
    warned,
)
from sigmatool.estimators.rule import PRIOR_PROMPTS, PerCell, valuation
from sigmatool.estimators.value import NOT_IDENTIFIED, PerColumn, Valuation, describe

__all__ = [
    "ESTIMATOR",
    "NOT_IDENTIFIED",
    "PRIOR_PROMPTS",
    "Bounded",
    "Cut",
    "PerCell",
    "PerColumn",
    "Valuation",
    "beyond_intervals",
    "bin_of",
    "bound_columns",
    "check_estimator",
    "contradiction",
    "contradictions",
    "describe",
    "identification",
    "interval_columns",
    "outside",
    "range_notes",
    "row_groups",
    "said_once",
    "unidentified",
    "valuation",
    "value_keys",
    "warned",
]

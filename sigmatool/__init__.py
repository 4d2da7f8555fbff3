"""sigmatool: what a prompt set will do to GRPO, Dr. GRPO and DAPO training, from its pass rates.

Built on the group-standard-deviation identity of arXiv:2607.00152: for 0/1 rewards the per-prompt GRPO
update is exactly the group's reward std σ times a direction.
"""

from __future__ import annotations

__version__ = "0.1.0"

import importlib
from typing import TYPE_CHECKING, Any

from sigmatool import kernels
from sigmatool.errors import DataError, ExitCode, SigmaError, UsageError
from sigmatool.load import Dataset, InputOptions, bundled_sample, histogram, load, per_prompt_frame
from sigmatool.silent import summarize as silent_summary

if TYPE_CHECKING:
    from sigmatool.budget import Segments as BudgetSegments
    from sigmatool.budget import summarize as budget_summary
    from sigmatool.groupsize import GroupSizeOptions, group_size_table, group_sizes
    from sigmatool.groupsize import summarize as groupsize_summary
    from sigmatool.simulate import simulate as run_simulation
    from sigmatool.sql import histogram_query

# The other analyses load on first use, so that `sigmatool silent` does not pay for their imports.
_LAZY = {
    "BudgetSegments": ("sigmatool.budget", "Segments"),
    "budget_summary": ("sigmatool.budget", "summarize"),
    "GroupSizeOptions": ("sigmatool.groupsize", "GroupSizeOptions"),
    "group_size_table": ("sigmatool.groupsize", "group_size_table"),
    "group_sizes": ("sigmatool.groupsize", "group_sizes"),
    "groupsize_summary": ("sigmatool.groupsize", "summarize"),
    "run_simulation": ("sigmatool.simulate", "simulate"),
    "histogram_query": ("sigmatool.sql", "histogram_query"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'sigmatool' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


__all__ = [
    "BudgetSegments",
    "DataError",
    "Dataset",
    "ExitCode",
    "GroupSizeOptions",
    "InputOptions",
    "SigmaError",
    "UsageError",
    "__version__",
    "budget_summary",
    "bundled_sample",
    "group_size_table",
    "group_sizes",
    "groupsize_summary",
    "histogram",
    "histogram_query",
    "kernels",
    "load",
    "per_prompt_frame",
    "run_simulation",
    "silent_summary",
]

"""sigmatool: what a prompt set will do to GRPO, Dr. GRPO and DAPO training, from its pass rates.

Built on the group-standard-deviation identity of arXiv:2607.00152: for 0/1 rewards the per-prompt GRPO
update is exactly the group's reward std σ times a direction.
"""

from __future__ import annotations

__version__ = "0.1.0"

from sigmatool import kernels
from sigmatool.budget import Segments as BudgetSegments
from sigmatool.budget import summarize as budget_summary
from sigmatool.errors import DataError, ExitCode, SigmaError, UsageError
from sigmatool.groupsize import GroupSizeOptions, group_size_table, group_sizes
from sigmatool.groupsize import summarize as groupsize_summary
from sigmatool.load import Dataset, InputOptions, bundled_sample, histogram, load, per_prompt_frame
from sigmatool.silent import summarize as silent_summary
from sigmatool.simulate import simulate as run_simulation

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
    "kernels",
    "load",
    "per_prompt_frame",
    "run_simulation",
    "silent_summary",
]

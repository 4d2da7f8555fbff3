"""sigmatool: what a prompt set will do to GRPO, Dr. GRPO and DAPO training, from its pass rates.

Built on the group-standard-deviation identity of arXiv:2607.00152: for 0/1 rewards the per-prompt GRPO
update is exactly the group's reward std σ times a direction.

Every public name loads on first use, so that ``sigmatool --version`` imports neither polars nor numpy.
"""

# Run as the command line, a Ctrl-C from here on exits 130 without a traceback (sigmatool.interrupts): first,
# before anything else is imported (and so with no `from __future__` import, which imports a module).
import sys as _sys

from sigmatool import interrupts as _interrupts

if _interrupts.as_command_line(_sys.argv):
    _interrupts.quiet()

__version__ = "0.5.0"

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sigmatool import kernels
    from sigmatool.budget import BudgetResult
    from sigmatool.budget import summarize as budget_summary
    from sigmatool.errors import DataError, ExitCode, SigmaError, UsageError
    from sigmatool.estimators import Valuation, valuation
    from sigmatool.groupsize import GroupSizeResult, group_size_table, group_sizes
    from sigmatool.groupsize import summarize as groupsize_summary
    from sigmatool.load import (
        Dataset,
        Histogram,
        bundled_sample,
        dataset,
        histogram,
        per_prompt_frame,
        read_histogram,
        sample_histogram,
    )
    from sigmatool.options import GroupSizeOptions, InputOptions
    from sigmatool.options import Segments as BudgetSegments
    from sigmatool.plan import Plan
    from sigmatool.plan import plan as rollout_plan
    from sigmatool.prior import fit_prior
    from sigmatool.silent import SilentResult
    from sigmatool.silent import summarize as silent_summary
    from sigmatool.sql import histogram_query
    from sigmatool.track import export_pass_rates
    from sigmatool.track import track as track_run
    from sigmatool.trainers.dumps import find_dump_files, scan_trainer

_LAZY = {
    "kernels": ("sigmatool.kernels", None),
    "BudgetSegments": ("sigmatool.options", "Segments"),
    "budget_summary": ("sigmatool.budget", "summarize"),
    "BudgetResult": ("sigmatool.budget", "BudgetResult"),
    "GroupSizeResult": ("sigmatool.groupsize", "GroupSizeResult"),
    "SilentResult": ("sigmatool.silent", "SilentResult"),
    "DataError": ("sigmatool.errors", "DataError"),
    "ExitCode": ("sigmatool.errors", "ExitCode"),
    "SigmaError": ("sigmatool.errors", "SigmaError"),
    "UsageError": ("sigmatool.errors", "UsageError"),
    "GroupSizeOptions": ("sigmatool.options", "GroupSizeOptions"),
    "Valuation": ("sigmatool.estimators", "Valuation"),
    "valuation": ("sigmatool.estimators", "valuation"),
    "fit_prior": ("sigmatool.prior", "fit_prior"),
    "group_size_table": ("sigmatool.groupsize", "group_size_table"),
    "group_sizes": ("sigmatool.groupsize", "group_sizes"),
    "groupsize_summary": ("sigmatool.groupsize", "summarize"),
    "Dataset": ("sigmatool.load", "Dataset"),
    "Histogram": ("sigmatool.load", "Histogram"),
    "bundled_sample": ("sigmatool.load", "bundled_sample"),
    "dataset": ("sigmatool.load", "dataset"),
    "histogram": ("sigmatool.load", "histogram"),
    "per_prompt_frame": ("sigmatool.load", "per_prompt_frame"),
    "read_histogram": ("sigmatool.load", "read_histogram"),
    "sample_histogram": ("sigmatool.load", "sample_histogram"),
    "Plan": ("sigmatool.plan", "Plan"),
    # Not "plan": that name is the sigmatool.plan package once it is imported.
    "rollout_plan": ("sigmatool.plan", "plan"),
    "InputOptions": ("sigmatool.options", "InputOptions"),
    "silent_summary": ("sigmatool.silent", "summarize"),
    "find_dump_files": ("sigmatool.trainers.dumps", "find_dump_files"),
    "scan_trainer": ("sigmatool.trainers.dumps", "scan_trainer"),
    "track_run": ("sigmatool.track", "track"),
    "export_pass_rates": ("sigmatool.track", "export_pass_rates"),
    "histogram_query": ("sigmatool.sql", "histogram_query"),
}


def run_simulation(start: Any = None, **options: Any) -> Any:
    """The controlled training run of docs/theory.md §6 (see :func:`sigmatool.simulate.simulate`).

    ``start`` is a histogram frame, an array of pass rates, ``"beta-mix"``, a data file's path, or None for
    the bundled Big-Math sample. Returns the (trace, summary) frames.
    """
    from sigmatool.load import read_histogram, sample_histogram
    from sigmatool.options import InputOptions
    from sigmatool.simulate import BETA_MIX, simulate

    if start is None:
        start = sample_histogram().frame
    elif isinstance(start, str) and start != BETA_MIX:
        start = read_histogram(InputOptions(paths=(start,))).frame
    return simulate(start, **options)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'sigmatool' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    loaded = importlib.import_module(module)
    value = loaded if attribute is None else getattr(loaded, attribute)
    globals()[name] = value
    return value


__all__ = [
    "BudgetResult",
    "BudgetSegments",
    "DataError",
    "Dataset",
    "ExitCode",
    "GroupSizeOptions",
    "GroupSizeResult",
    "Histogram",
    "InputOptions",
    "Plan",
    "SigmaError",
    "SilentResult",
    "UsageError",
    "Valuation",
    "__version__",
    "budget_summary",
    "bundled_sample",
    "dataset",
    "export_pass_rates",
    "find_dump_files",
    "fit_prior",
    "group_size_table",
    "group_sizes",
    "groupsize_summary",
    "histogram",
    "histogram_query",
    "kernels",
    "per_prompt_frame",
    "read_histogram",
    "rollout_plan",
    "run_simulation",
    "sample_histogram",
    "scan_trainer",
    "silent_summary",
    "track_run",
    "valuation",
]

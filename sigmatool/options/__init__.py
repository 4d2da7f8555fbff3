"""The options of sigmatool as typed values, each checked here, once, with one message.

The CLI builds these objects before anything heavy is imported, so that a usage error costs no more than
start-up; the library checks the same objects, so a notebook user gets the same message. Nothing here
imports polars or numpy.
"""

from __future__ import annotations

from sigmatool.options.analyses import (
    DEFAULT_BINS,
    DEFAULT_EXTREME,
    DEFAULT_MEDIUM,
    METHODS,
    BudgetOptions,
    GroupSizeOptions,
    Segments,
    SilentOptions,
    SimulateOptions,
    TrackOptions,
    parse_medium,
    parse_methods,
    parse_steps,
)
from sigmatool.options.common import (
    INF,
    MAX_G,
    Counts,
    Estimator,
    InputFormat,
    Objective,
    OutputFormat,
    Std,
    Trainer,
    check_count,
    check_fraction,
    g_label,
    parse_group_sizes,
)
from sigmatool.options.inputs import (
    COUNT_DIRECTIONS,
    RESERVED,
    TRAINERS,
    InputOptions,
    LogOptions,
    OutputOptions,
    check_outputs,
)

__all__ = [
    "COUNT_DIRECTIONS",
    "DEFAULT_BINS",
    "DEFAULT_EXTREME",
    "DEFAULT_MEDIUM",
    "INF",
    "MAX_G",
    "METHODS",
    "RESERVED",
    "TRAINERS",
    "BudgetOptions",
    "Counts",
    "Estimator",
    "GroupSizeOptions",
    "InputFormat",
    "InputOptions",
    "LogOptions",
    "Objective",
    "OutputFormat",
    "OutputOptions",
    "Segments",
    "SilentOptions",
    "SimulateOptions",
    "Std",
    "TrackOptions",
    "Trainer",
    "check_count",
    "check_fraction",
    "check_outputs",
    "g_label",
    "parse_group_sizes",
    "parse_medium",
    "parse_methods",
    "parse_steps",
]

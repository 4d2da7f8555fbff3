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
from sigmatool.options.beyond import (
    BOUNDS_LEVEL,
    DEFAULT_REPLICATES,
    BeyondOptions,
    PriorSpec,
    check_prior,
    parse_prior,
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
from sigmatool.options.figures import FIGURE_FORMATS, PlotOptions, ReportFile, figure_format
from sigmatool.options.inputs import (
    COUNT_DIRECTIONS,
    NOT_WRITABLE,
    RESERVED,
    TRAINERS,
    InputOptions,
    LogOptions,
    OutputOptions,
    check_folder,
    check_outputs,
    written_in_place,
)
from sigmatool.options.plan import PlanOptions, parse_sizes, plan_options
from sigmatool.options.sql import Dialect, HistogramCommand, RewardType, SqlOptions

__all__ = [
    "BOUNDS_LEVEL",
    "COUNT_DIRECTIONS",
    "DEFAULT_BINS",
    "DEFAULT_EXTREME",
    "DEFAULT_MEDIUM",
    "DEFAULT_REPLICATES",
    "FIGURE_FORMATS",
    "INF",
    "MAX_G",
    "METHODS",
    "NOT_WRITABLE",
    "RESERVED",
    "TRAINERS",
    "BeyondOptions",
    "BudgetOptions",
    "Counts",
    "Dialect",
    "Estimator",
    "GroupSizeOptions",
    "HistogramCommand",
    "InputFormat",
    "InputOptions",
    "LogOptions",
    "Objective",
    "OutputFormat",
    "OutputOptions",
    "PlanOptions",
    "PlotOptions",
    "PriorSpec",
    "ReportFile",
    "RewardType",
    "Segments",
    "SilentOptions",
    "SimulateOptions",
    "SqlOptions",
    "Std",
    "TrackOptions",
    "Trainer",
    "check_count",
    "check_folder",
    "check_fraction",
    "check_outputs",
    "check_prior",
    "figure_format",
    "g_label",
    "parse_group_sizes",
    "parse_medium",
    "parse_methods",
    "parse_prior",
    "parse_sizes",
    "parse_steps",
    "plan_options",
    "written_in_place",
]

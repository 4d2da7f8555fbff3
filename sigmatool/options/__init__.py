"""The options of sigmatool as typed values, each checked here, once, with one message.

The CLI builds these objects before anything heavy is imported, so that a usage error costs no more than
start-up; the library checks the same objects, so a notebook user gets the same message. Nothing here
imports polars or numpy.
"""

from __future__ import annotations

from sigmatool.options.analyses import (
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
    summary_bins,
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
    DEFAULT_BINS,
    DEFAULT_FIDELITY,
    DEFAULT_SEED,
    INF,
    MAX_G,
    Counts,
    Estimator,
    InputFormat,
    Method,
    OutputFormat,
    Std,
    Trainer,
    check_bins,
    check_count,
    check_fraction,
    g_label,
    parse_group_sizes,
)
from sigmatool.options.figures import FIGURE_FORMATS, FigureStyle, PlotOptions, ReportFile, figure_format
from sigmatool.options.inputs import (
    COLUMN,
    COUNT_DIRECTIONS,
    ENGINES,
    NOT_WRITABLE,
    RESERVED,
    TRAINERS,
    Engine,
    InputOptions,
    LogOptions,
    OutputOptions,
    by_columns,
    check_folder,
    check_outputs,
    check_terminal,
    over_all_prompts,
    written_in_place,
)
from sigmatool.options.plan import PlanOptions, parse_sizes, plan_options
from sigmatool.options.sql import Dialect, HistogramCommand, RewardType, SqlOptions

# Grouped by kind, several names a line (the formatter would give each its own), so that the face stays short.
# fmt: off
__all__ = [
    # constants
    "BOUNDS_LEVEL", "COLUMN", "COUNT_DIRECTIONS", "DEFAULT_BINS", "DEFAULT_EXTREME", "DEFAULT_FIDELITY",
    "DEFAULT_MEDIUM", "DEFAULT_REPLICATES", "DEFAULT_SEED", "ENGINES", "FIGURE_FORMATS", "INF", "MAX_G",
    "METHODS", "NOT_WRITABLE", "RESERVED", "TRAINERS",
    # types
    "BeyondOptions", "BudgetOptions", "Counts", "Dialect", "Engine", "Estimator", "FigureStyle",
    "GroupSizeOptions", "HistogramCommand", "InputFormat", "InputOptions", "LogOptions", "Method",
    "OutputFormat", "OutputOptions", "PlanOptions", "PlotOptions", "PriorSpec", "ReportFile",
    "RewardType", "Segments", "SilentOptions", "SimulateOptions", "SqlOptions", "Std", "TrackOptions",
    "Trainer",
    # functions
    "by_columns", "check_bins", "check_count", "check_folder", "check_fraction", "check_outputs",
    "check_prior", "check_terminal", "figure_format", "g_label", "over_all_prompts", "parse_group_sizes",
    "parse_medium", "parse_methods", "parse_prior", "parse_sizes", "parse_steps", "plan_options",
    "summary_bins", "written_in_place",
]
# fmt: on

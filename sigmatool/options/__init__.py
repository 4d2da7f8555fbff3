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
    parse_medium,
    parse_methods,
)
from sigmatool.options.common import (
    INF,
    MAX_G,
    Estimator,
    InputFormat,
    Objective,
    OutputFormat,
    Std,
    check_count,
    check_fraction,
    g_label,
    parse_group_sizes,
)
from sigmatool.options.figures import FIGURE_FORMATS, PlotOptions, ReportFile, figure_format
from sigmatool.options.inputs import RESERVED, InputOptions, OutputOptions, check_folder, check_outputs

__all__ = [
    "DEFAULT_BINS",
    "DEFAULT_EXTREME",
    "DEFAULT_MEDIUM",
    "FIGURE_FORMATS",
    "INF",
    "MAX_G",
    "METHODS",
    "RESERVED",
    "BudgetOptions",
    "Estimator",
    "GroupSizeOptions",
    "InputFormat",
    "InputOptions",
    "Objective",
    "OutputFormat",
    "OutputOptions",
    "PlotOptions",
    "ReportFile",
    "Segments",
    "SilentOptions",
    "SimulateOptions",
    "Std",
    "check_count",
    "check_folder",
    "check_fraction",
    "check_outputs",
    "figure_format",
    "g_label",
    "parse_group_sizes",
    "parse_medium",
    "parse_methods",
]

"""A one-page report of every analysis: HTML (self-contained, inline SVG, no script) or Markdown with figures.

``build_report([report_input(InputOptions(...))]).write_html("report.html")``; several inputs (or ``by``
groups) are compared side by side.
"""

from __future__ import annotations

from sigmatool.report.build import Headline, Report, build_report
from sigmatool.report.model import PlanFrames, ReportInput, ReportOptions, described, report_input

__all__ = [
    "Headline",
    "PlanFrames",
    "Report",
    "ReportInput",
    "ReportOptions",
    "build_report",
    "described",
    "report_input",
]

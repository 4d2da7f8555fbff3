"""A one-page report of every analysis: HTML (self-contained, inline SVG, no script) or Markdown with figures.

``build_report([report_input(InputOptions(...))]).write_html("report.html")``; several inputs (or ``by``
groups) are compared side by side.
"""

from __future__ import annotations

from sigmatool.plan.core import PlanFrames
from sigmatool.report.build import Report, build_report, plan_frames_of, tracked_run
from sigmatool.report.model import ReportInput, ReportOptions, described, report_input
from sigmatool.report.page import Headline

__all__ = [
    "Headline",
    "PlanFrames",
    "Report",
    "ReportInput",
    "ReportOptions",
    "build_report",
    "described",
    "plan_frames_of",
    "report_input",
    "tracked_run",
]

"""The report's tables as rows of display text, shared by the HTML and Markdown writers.

Numbers are rounded for reading only here; the full-precision frames are the analyses' own output.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from sigmatool.columns import PASS_RATE, column
from sigmatool.report.model import ReportInput

SILENT = (
    "G",
    "prompts",
    "silent_rate",
    "all_right_rate",
    "all_wrong_rate",
    "always_silent_share",
    "dapo_draws_per_group",
)
LONG_TABLE = 30  # longer frames show their first and last rows
EDGE_ROWS = 10


@dataclass(frozen=True)
class Table:
    """Headings (with the output column each shows), rows of text, and which columns are numbers."""

    columns: tuple[str, ...]
    headings: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]
    omitted: int = 0  # rows left out of the middle of a long frame


def cell(value: object, name: str) -> str:
    """One value for people: percentages, thousands separators, ∞, and '–' for a missing value."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        declared = column(name)
        if declared.percent:
            return f"{100 * value:.2f} %"
        if declared.unit == PASS_RATE:
            return f"{value:g}"
        if value.is_integer() and abs(value) >= 1e4:
            return f"{value:,.0f}"
        return f"{value:,.4g}" if abs(value) < 1e15 else f"{value:.4g}"
    text = str(value)
    return "∞" if name == "G" and text == "inf" else text


def table(frame: pl.DataFrame, columns: Sequence[str] | None = None, *, shorten: bool = False) -> Table:
    """``frame``'s ``columns`` (all by default) as display text; with ``shorten``, a long frame keeps its
    first and last rows (for per-step traces; the analyses' own tables are shown whole)."""
    names = tuple(c for c in (columns or frame.columns) if c in frame.columns)
    shown = frame.select(names)
    omitted = 0
    if shorten and shown.height > LONG_TABLE:
        omitted = shown.height - 2 * EDGE_ROWS
        shown = pl.concat([shown.head(EDGE_ROWS), shown.tail(EDGE_ROWS)])
    rows = tuple(tuple(cell(v, c) for v, c in zip(row, names, strict=True)) for row in shown.iter_rows())
    numeric = tuple(frame.schema[c].is_numeric() or c == "G" for c in names)
    return Table(names, tuple(column(c).heading for c in names), rows, numeric, omitted)


def silent_table(frames: dict[str, pl.DataFrame], by: Sequence[str]) -> Table:
    """The silent summaries, one block per estimator when there are several."""
    columns = [*by, *SILENT]
    if len(frames) == 1:
        return table(next(iter(frames.values())), columns)
    parts = [f.with_columns(pl.lit(name).alias("estimator")) for name, f in frames.items()]
    return table(pl.concat(parts, how="diagonal_relaxed"), ["estimator", *columns])


def inputs_table(inputs: Sequence[ReportInput]) -> Table:
    """One row per input: label, files, rows, prompts, distinct rates, columns used, --by columns."""
    rows = tuple(
        (
            i.label,
            i.source or "–",
            f"{i.rows:,}",
            cell(int(i.prompts) if i.prompts.is_integer() else i.prompts, "prompts"),
            f"{i.hist.select('p').n_unique():,}",
            ", ".join(i.columns) or "–",
            ", ".join(i.by) or "–",
        )
        for i in inputs
    )
    names = ("input", "files", "rows", "prompts", "distinct p", "columns used", "by")
    return Table(names, names, rows, (False, False, True, True, True, False, False))

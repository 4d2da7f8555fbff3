"""A controlled run's answer and its table view: the per-step trace, the per-method summary, the headline."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.columns import labels, percent
from sigmatool.options import SimulateOptions
from sigmatool.render import View, also_in_data
from sigmatool.simulate.dynamics import TRACE_COLUMNS

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot

LABELS = {"grpo": "GRPO", "drgrpo": "Dr. GRPO", "dapo": "DAPO"}


@dataclass(frozen=True)
class SimulationRun:
    """``simulate``'s answer: the per-step ``trace`` and the per-method ``summary`` with its table view
    (``table``); ``traced`` (``--trace``) writes the trace instead of the summary."""

    trace: pl.DataFrame
    summary: pl.DataFrame
    table: View | None = None
    traced: bool = False

    def frame(self) -> pl.DataFrame:
        return self.trace if self.traced else self.summary

    def view(self) -> View | None:
        """The summary's view; the trace keeps its headline, not the footnotes on the summary's columns."""
        return replace(self.table, footer=[]) if self.traced and self.table is not None else self.table

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
        """Observed against predicted silent share per step, and the hardest quartile's p."""
        from sigmatool.figures.simulate import simulate_figure

        return simulate_figure(self.trace, self.summary, source=source, caption=caption, style=style)

    def warnings(self) -> tuple[str, ...]:
        return ()


def headline(summary: pl.DataFrame, *, steps: int, group_size: int, prompts: int) -> str:
    """One plain sentence for the summary table."""
    rows = {r["method"]: r for r in summary.iter_rows(named=True)}
    reached = ", ".join(
        f"{r['final_hardest_quartile_mean_p']:.2f} ({LABELS[m]})"
        for m, r in rows.items()
        if r["final_hardest_quartile_mean_p"] is not None
    )
    parts = [f"After {steps:,} steps at G={group_size} on {prompts:,} prompts: hardest quartile p={reached}"]
    if "dapo" in rows:
        parts.append(f"DAPO drew {rows['dapo']['samples_vs_grpo']:.2f}× GRPO's samples")
    r2 = [
        r["silent_r2"] for r in rows.values() if r["silent_r2"] is not None and math.isfinite(r["silent_r2"])
    ]
    if r2:
        parts.append(f"silent R² ≥ {math.floor(min(r2) * 1000) / 1000:.3f}")
    return "; ".join(parts) + "."


# Left to the data formats, so that the table fits 80 columns: samples_vs_grpo and the headline compare them.
TABLE_HIDES = ("samples_drawn",)


def view(summary: pl.DataFrame, options: SimulateOptions) -> View:
    """The table view of the summary (or trace): headline, percentages, short headers."""
    return View(
        headline=headline(
            summary, steps=options.steps, group_size=options.group_size, prompts=options.prompts
        ),
        percent=percent((*summary.columns, *TRACE_COLUMNS)),
        labels=labels((*summary.columns, *TRACE_COLUMNS)),
        hide=TABLE_HIDES,
        footer=[
            "extreme: the gradient's share on extreme prompts (start p < 0.1 or > 0.9) at the start, measured "
            "over simulated steps and predicted by the exact kernels",
            also_in_data(TABLE_HIDES),
        ],
    )

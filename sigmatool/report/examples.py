"""The documentation's figures (one PNG per analysis) and example report, on the bundled Big-Math sample.

``python -m sigmatool.report.examples FIGURES_DIR REPORT.html`` (what ``make figures`` runs).
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

from sigmatool import budget, silent
from sigmatool.figures import (
    Plot,
    budget_figure,
    difficulty_figure,
    groupsize_curve,
    groupsize_figure,
    silent_figure,
    simulate_figure,
)
from sigmatool.groupsize import GroupSizeOptions
from sigmatool.load import InputOptions, bundled_sample
from sigmatool.report.build import build_report
from sigmatool.report.model import SILENT_SIZES, ReportInput, report_input
from sigmatool.simulate import simulate

# The installed sample's path differs between machines; the report names the copy in the repository.
SAMPLE_LABEL = "bigmath_solve_rates.parquet"
SAMPLE_SOURCE = "sample_data/bigmath_solve_rates.parquet (the bundled Big-Math sample)"
SOURCE = "Big-Math, 215,608 prompts, llama8b_solve_rate (sample_data/bigmath_solve_rates.parquet)"


def sample_input() -> ReportInput:
    """The bundled sample as a report input."""
    item = report_input(InputOptions(paths=(str(bundled_sample()),)), label=SAMPLE_LABEL)
    return replace(item, source=SAMPLE_SOURCE, notes=())


def example_plots(item: ReportInput) -> dict[str, Plot]:
    """One figure per analysis, captions drawn; the simulation is the paper's run (docs/theory.md §6)."""
    hist = item.hist
    options = GroupSizeOptions()
    trace, summary = simulate(hist)
    return {
        "difficulty": difficulty_figure(hist, source=SOURCE),
        "silent": silent_figure(silent.summarize(hist, (), [float(G) for G in SILENT_SIZES]), source=SOURCE),
        "budget": budget_figure(budget.summarize(hist, (), [8.0, math.inf]), source=SOURCE),
        "groupsize": groupsize_figure(groupsize_curve(options), hist, options=options, source=SOURCE),
        "simulate": simulate_figure(trace, summary, source=SOURCE),
    }


def write_examples(figures: Path, report: Path) -> list[Path]:
    """Write ``figures``/<analysis>.png and the HTML ``report``; returns the files written."""
    figures.mkdir(parents=True, exist_ok=True)
    item = sample_input()
    written = [plot.save(figures / f"{name}.png") for name, plot in example_plots(item).items()]
    written.append(build_report([item]).write_html(report))
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m sigmatool.report.examples FIGURES_DIR REPORT.html", file=sys.stderr)
        return 2
    for path in write_examples(Path(args[0]), Path(args[1])):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

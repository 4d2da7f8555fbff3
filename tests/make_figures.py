"""The documentation's figures (one PNG per command) and example report, made by the command line itself.

    python -m tests.make_figures [FOLDER]     # (make figures) FOLDER defaults to docs/

writes FOLDER/figures/{silent,budget,groupsize,simulate,track,plan}.png and FOLDER/example-report.html from
the bundled Big-Math sample (track: the bundled verl run). The commands run from the repository's root, so captions name
``sample_data/bigmath_solve_rates.parquet`` wherever the checkout is. tests/test_cli_figures.py runs the
same commands into a temporary folder and compares what they draw with the committed files.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

from sigmatool.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = "sample_data/bigmath_solve_rates.parquet"
FIGURES = ("silent", "budget", "groupsize", "simulate", "track", "plan")
COMMANDS: dict[str, tuple[str, ...]] = {
    "silent": ("silent", SAMPLE, "--G", "4,8,16,32,64"),
    "budget": ("budget", SAMPLE, "--G", "8,inf"),
    "groupsize": ("groupsize", SAMPLE, "--fidelity", "0.9"),
    "simulate": ("simulate", "--init", SAMPLE),
    "track": ("track", "sample_data/example_run", "--from", "verl"),
    "plan": ("plan", SAMPLE, "--budget", "8"),
}
REPORT = "example-report.html"
# The report's provenance gives the time it was made: the committed example keeps this one.
SOURCE_DATE_EPOCH = "1767225600"  # 2026-01-01T00:00:00Z


def command_lines(folder: Path) -> list[list[str]]:
    """The command lines that write every example into ``folder`` (an absolute path), run from the root:
    the report's file is named relative to it, as its provenance shows the command line."""
    lines = [[*COMMANDS[name], "--plot", str(folder / "figures" / f"{name}.png")] for name in FIGURES]
    return [*lines, ["report", SAMPLE, "-o", os.path.relpath(folder / REPORT, ROOT)]]


def make(folder: Path) -> list[Path]:
    """Run every command into ``folder``; returns the files written."""
    folder = folder.resolve()
    (folder / "figures").mkdir(parents=True, exist_ok=True)
    here, epoch = Path.cwd(), os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = SOURCE_DATE_EPOCH
    os.chdir(ROOT)
    try:
        for line in command_lines(folder):
            with contextlib.redirect_stdout(io.StringIO()):  # the tables themselves are not wanted here
                code = main([*line, "--format", "csv"] if line[0] in COMMANDS else line)
            if code != 0:
                raise SystemExit(f"sigmatool {' '.join(line)}: exit {code}")
    finally:
        os.chdir(here)
        if epoch is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = epoch
    return [folder / "figures" / f"{name}.png" for name in FIGURES] + [folder / REPORT]


if __name__ == "__main__":
    for path in make(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"):
        print(path)

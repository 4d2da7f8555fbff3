#!/usr/bin/env python3
"""How long `sigmatool report` takes on the bundled Big-Math sample: end to end, and step by step.

    .venv/bin/python bench/report_time.py [--repeat 5]

End to end is the wall time of ``sigmatool report sample_data/bigmath_solve_rates.parquet -o report.html``
in a fresh process (start-up, imports, reading, every analysis and figure, writing the page). The steps are
timed inside another fresh process: importing sigmatool.report (matplotlib included), reading the sample
into its histogram, ``build_report`` (every analysis and figure), rendering the page (the figures to SVG),
writing it. Prints the median and the slowest of the repeats (wall time, and the CPU time of the end-to-end
runs, which a busy machine inflates less), the page's size and the load average. The target: under 3 s
end to end on 2 cores. Nothing is asserted: the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = "sample_data/bigmath_solve_rates.parquet"
STEPS = ("import", "histogram", "build_report", "html", "write")
ONE_RUN = """
import sys, time
t0 = time.perf_counter()
from sigmatool.options import InputOptions
from sigmatool.report import build_report, report_input
t1 = time.perf_counter()
item = report_input(InputOptions(paths=(sys.argv[2],)))
t2 = time.perf_counter()
report = build_report([item])
t3 = time.perf_counter()
page = report.html()
t4 = time.perf_counter()
with open(sys.argv[1], "w", encoding="utf-8") as handle:
    handle.write(page)
t5 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)
"""


def sigmatool() -> list[str]:
    """The console script beside this Python, as a user runs it; else ``python -m sigmatool``."""
    script = Path(sys.executable).with_name("sigmatool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "sigmatool"]


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def end_to_end(folder: str) -> tuple[float, float, int]:
    """Wall and CPU seconds of one `sigmatool report` run, and the page's size in bytes."""
    page = Path(folder) / "report.html"
    start, cpu = time.perf_counter(), _cpu()
    subprocess.run(
        [*sigmatool(), "report", SAMPLE, "-o", str(page)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - start, _cpu() - cpu, page.stat().st_size


def steps(folder: str) -> list[float]:
    out = subprocess.run(
        [sys.executable, "-c", ONE_RUN, f"{folder}/steps.html", SAMPLE],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [float(v) for v in out]


def row(name: str, times: list[float]) -> str:
    return f"{name:<14}{statistics.median(times):>10.3f}{max(times):>11.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes to time (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        whole = [end_to_end(folder) for _ in range(args.repeat)]
        parts = [steps(folder) for _ in range(args.repeat)]
    print(f"{'step':<14}{'median s':>10}{'slowest s':>11}")
    print(row("end to end", [run[0] for run in whole]))
    print(row("  (CPU)", [run[1] for run in whole]))
    for i, step in enumerate(STEPS):
        print(row(f"  {step}", [run[i] for run in parts]))
    load = os.getloadavg()[0]
    print(
        f"page: {whole[0][2]:,} bytes; {args.repeat} runs of each; load average {load:.2f} on {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

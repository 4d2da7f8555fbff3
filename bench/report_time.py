#!/usr/bin/env python3
"""How long the HTML report of the bundled Big-Math sample takes, step by step, in a fresh process.

    .venv/bin/python bench/report_time.py [--repeat 5]

Prints the median and the slowest of the repeats for each step: importing sigmatool.report (matplotlib
included), reading the sample into its histogram, ``build_report`` (every analysis and figure), rendering
the page (the figures to SVG) and writing it. The target: build and render well under 3 s on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile

STEPS = ("import", "histogram", "build_report", "html", "write")
ONE_RUN = """
import sys, time
t0 = time.perf_counter()
from sigmatool.report import build_report
from sigmatool.report.examples import sample_input
t1 = time.perf_counter()
item = sample_input()
t2 = time.perf_counter()
report = build_report([item])
t3 = time.perf_counter()
page = report.html()
t4 = time.perf_counter()
with open(sys.argv[1], "w", encoding="utf-8") as handle:
    handle.write(page)
t5 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, len(page.encode("utf-8")))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes to time (default 5)")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeat):
            out = subprocess.run(
                [sys.executable, "-c", ONE_RUN, f"{folder}/report.html"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            runs.append([float(v) for v in out])
    print(f"{'step':<14}{'median s':>10}{'slowest s':>11}")
    for i, step in enumerate(STEPS):
        times = [run[i] for run in runs]
        print(f"{step:<14}{statistics.median(times):>10.3f}{max(times):>11.3f}")
    build = [run[2] + run[3] for run in runs]
    print(f"{'build + html':<14}{statistics.median(build):>10.3f}{max(build):>11.3f}")
    print(f"page size: {int(runs[0][5]):,} bytes; {args.repeat} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

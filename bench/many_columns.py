#!/usr/bin/env python3
"""Many columns and few samples: the report over 19 model columns, and each figure and the unbiased path on
an 8-sample column, each timed in fresh processes beside the run it should cost little more than.

    .venv/bin/python bench/many_columns.py                  # every case, 3 pairs each
    .venv/bin/python bench/many_columns.py --only report --rounds 5
    .venv/bin/python bench/many_columns.py --out bench/results-many-columns-2026-12-03.md

The data: 12,500 prompts drawn without replacement from Big-Math's 215,608 (seed 26, as bench/latency.py's
MATH-sized file), each with its k right of 64. ``models.parquet`` holds 19 columns, as a file of model
evaluations would: column i keeps m = 50, 8 or 5 (i mod 3) of each prompt's 64 answers, drawn without
replacement (one seeded hypergeometric draw per prompt and column), as k/m; ``math_8.csv`` is one such
8-sample column as counts k, n.

Cases (sigmatool, then its reference, as one pair; rounds repeat the pairs, so a busy machine slows both):

- ``report``: ``report models.parquet --col ×19 -o page.html`` beside ``report`` of its first column alone;
  target: at most 4 s.
- ``unbiased``: ``silent math_8.csv --estimator unbiased`` beside ``--estimator plugin``; target: under 1 s.
- ``silent-plot``, ``budget-plot``, ``groupsize-plot``, ``track-plot``: each command with ``--plot fig.png``
  beside the same command without it (track on the bundled verl run); target: under 1 s.

Prints a Markdown table: medians, the ratio's median and min–max over the pairs, the target and whether the
median meets it, and the load average before and after. Nothing is asserted: the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.timing import measure
from latency import compiled

ROOT = Path(__file__).resolve().parent.parent
COUNTS = ROOT / "sample_data" / "bigmath_solve_rate_counts.csv"
RUN = str(ROOT / "sample_data" / "example_run")
SIGMA = [sys.executable, "-m", "sigmatool"]
COLUMNS = 19
SAMPLES = (50, 8, 5)


@dataclass(frozen=True)
class Case:
    name: str
    label: str
    sigma: list[str]
    ref: list[str]
    target_s: float


def prompts_k() -> np.ndarray:
    """k of 64 for 12,500 Big-Math prompts drawn without replacement (seed 26)."""
    table = np.loadtxt(COUNTS, delimiter=",", skiprows=1, usecols=(0, 3)).astype(np.int64)
    return np.random.default_rng(26).choice(np.repeat(table[:, 0], table[:, 1]), 12_500, replace=False)


def make_data(folder: Path) -> tuple[Path, Path]:
    """``models.parquet`` (19 columns of k/m) and ``math_8.csv`` (k, n = 8), written once into ``folder``."""
    import polars as pl

    models, eight = folder / "models.parquet", folder / "math_8.csv"
    if models.exists() and eight.exists():
        return models, eight
    k = prompts_k()
    rng = np.random.default_rng(19)
    columns = {}
    for i in range(COLUMNS):
        m = SAMPLES[i % len(SAMPLES)]
        columns[f"model_{i:02d}"] = rng.hypergeometric(k, 64 - k, m) / m
    pl.DataFrame(columns).write_parquet(models)
    j = rng.hypergeometric(k, 64 - k, 8)
    pl.DataFrame({"k": j, "n": np.full(j.size, 8)}).write_csv(eight)
    return models, eight


def cases(folder: Path, only: list[str]) -> list[Case]:
    models, eight = make_data(folder)
    cols = [arg for i in range(COLUMNS) for arg in ("--col", f"model_{i:02d}")]
    page, fig = str(folder / "page.html"), str(folder / "fig.png")
    out = [
        Case(
            "report",
            "report, 19 columns of 12,500 prompts (ref: its first column alone)",
            [*SIGMA, "report", str(models), *cols, "-o", page],
            [*SIGMA, "report", str(models), "--col", "model_00", "-o", page],
            4.0,
        ),
        Case(
            "unbiased",
            "silent --estimator unbiased, 8 samples (ref: plugin)",
            [*SIGMA, "silent", str(eight), "--estimator", "unbiased", "--format", "csv"],
            [*SIGMA, "silent", str(eight), "--estimator", "plugin", "--format", "csv"],
            1.0,
        ),
    ]
    for command, data in (
        ("silent", [str(eight)]),
        ("budget", [str(eight)]),
        ("groupsize", [str(eight)]),
        ("track", [RUN, "--from", "verl"]),
    ):
        base = [*SIGMA, command, *data, "--format", "csv"]
        out.append(
            Case(f"{command}-plot", f"{command} --plot (ref: without)", [*base, "--plot", fig], base, 1.0)
        )
    return [c for c in out if not only or c.name in only]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        choices=["report", "unbiased", "silent-plot", "budget-plot", "groupsize-plot", "track-plot"],
    )
    parser.add_argument("--data", type=Path, help="keep the generated files here for the next run")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.data or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        todo = cases(folder, args.only)
        compiled()
        before = os.getloadavg()[0]
        times: dict[str, list[tuple[float, float]]] = {c.name: [] for c in todo}
        for r in range(args.rounds):
            for case in todo:
                pair = (measure(case.sigma).wall_s, measure(case.ref).wall_s)
                times[case.name].append(pair)
                print(
                    f"round {r + 1} {case.name}: {pair[0]:.2f} s / {pair[1]:.2f} s",
                    file=sys.stderr,
                    flush=True,
                )
        after = os.getloadavg()[0]
    lines = [
        f"load average before {before:.1f}, after {after:.1f} ({os.cpu_count()} CPUs); {args.rounds} pairs per case",
        "",
        "| case | sigmatool median s (min–max) | reference median s | ratio median (min–max) | target | met |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for case in todo:
        pairs = times[case.name]
        wall = [s for s, _ in pairs]
        ratios = [s / r for s, r in pairs]
        median = statistics.median(wall)
        lines.append(
            f"| {case.label} | {median:.2f} ({min(wall):.2f}–{max(wall):.2f}) "
            f"| {statistics.median(r for _, r in pairs):.2f} "
            f"| {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) "
            f"| < {case.target_s:g} s | {'yes' if median < case.target_s else 'no'} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Interactive latency: each slow question against the run it should cost little more than, side by side.

    .venv/bin/python bench/latency.py                     # every case, 3 pairs each
    .venv/bin/python bench/latency.py --only bounds --rounds 5
    .venv/bin/python bench/latency.py --data /tmp/latency  # keep the generated files for the next run

Cases (target: the median of the pair ratios):
- ``ci``: ``silent --prior npmle --ci 0.95`` ÷ ``silent --prior npmle`` on a MATH-sized dataset (12,500
  prompts drawn without replacement, seed 26, from Big-Math's 215,608; k right of n = 64 each); target ≤ 3.
- ``bounds``: ``budget --samples 64 --bounds`` ÷ ``budget --samples 64`` on the bundled sample; target ≤ 3.
- ``report``: ``report -o page.html`` ÷ the sum of ``silent --G 2,…,256``, ``budget --G 8,inf`` and
  ``groupsize``, each alone with ``--format csv``, on the bundled sample; target ≤ 2.
- ``continuous``: ``silent --G 8`` ÷ DuckDB's ``avg(pow(p, 8) + pow(1 - p, 8))`` on 10^7 continuous pass
  rates (bench/harness/data.py's ``continuous`` file); target ≤ 1.2.

Every command is its own process, timed as bench/run.py times them (wall time from a small launcher);
sigmatool runs as ``python -m sigmatool`` with this interpreter, so a worktree on PYTHONPATH is measured.
A pair is sigmatool then its reference; rounds repeat the pairs, so a busy machine slows both sides of a
pair. The report gives each ratio's median and min–max and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import Data, generate
from harness.timing import measure

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = str(ROOT / "sample_data" / "bigmath_solve_rates.parquet")
COUNTS = ROOT / "sample_data" / "bigmath_solve_rate_counts.csv"
SIGMA = [sys.executable, "-m", "sigmatool"]
CSV = ["--format", "csv"]


@dataclass(frozen=True)
class Case:
    name: str
    label: str
    sigma: list[str]
    refs: list[list[str]]  # run one after another; their times are summed
    target: float


def math_sized(folder: Path) -> Path:
    """12,500 prompts drawn without replacement from Big-Math (seed 26): k of n = 64 per prompt."""
    path = folder / "math_12500.csv"
    if not path.exists():
        table = np.loadtxt(COUNTS, delimiter=",", skiprows=1, usecols=(0, 3)).astype(np.int64)
        k = np.random.default_rng(26).choice(np.repeat(table[:, 0], table[:, 1]), 12_500, replace=False)
        path.write_text("k,n\n" + "".join(f"{x},64\n" for x in k.tolist()))
    return path


def cases(folder: Path, only: list[str]) -> list[Case]:
    out = []
    if not only or "ci" in only:
        math = [str(math_sized(folder)), "--k-col", "k", "--n-col", "n", "--prior", "npmle", *CSV]
        out.append(
            Case(
                "ci",
                "silent --prior npmle --ci 0.95 (12,500 prompts)",
                [*SIGMA, "silent", *math, "--ci", "0.95"],
                [[*SIGMA, "silent", *math]],
                3.0,
            )
        )
    if not only or "bounds" in only:
        base = [*SIGMA, "budget", SAMPLE, "--samples", "64", *CSV]
        out.append(
            Case("bounds", "budget --samples 64 --bounds (bundled sample)", [*base, "--bounds"], [base], 3.0)
        )
    if not only or "report" in only:
        alone = [
            [*SIGMA, "silent", SAMPLE, "--G", "2,4,8,16,32,64,128,256", *CSV],
            [*SIGMA, "budget", SAMPLE, "--G", "8,inf", *CSV],
            [*SIGMA, "groupsize", SAMPLE, *CSV],
        ]
        page = str(folder / "report.html")
        out.append(
            Case(
                "report",
                "report (bundled sample) vs its commands alone",
                [*SIGMA, "report", SAMPLE, "-o", page],
                alone,
                2.0,
            )
        )
    if not only or "continuous" in only:
        path = generate(Data("continuous", 10**7), folder)
        spec = {
            "path": str(path),
            "col": "pass_rate",
            "by": None,
            "rollouts": False,
            "task": "silent",
            "G": [8],
        }
        duck = json.dumps({**spec, "out": str(folder / "duckdb.json")})
        ref = [sys.executable, str(ROOT / "bench" / "harness" / "refs" / "duckdb_ref.py"), duck]
        out.append(
            Case(
                "continuous",
                "silent --G 8, 10^7 continuous rates vs duckdb",
                [*SIGMA, "silent", str(path), "--col", "pass_rate", "--G", "8", *CSV],
                [ref],
                1.2,
            )
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--only", action="append", default=[], choices=["ci", "bounds", "report", "continuous"]
    )
    parser.add_argument("--data", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.data or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        todo = cases(folder, args.only)
        load_before = os.getloadavg()
        times: dict[str, list[tuple[float, float]]] = {c.name: [] for c in todo}
        for r in range(args.rounds):
            for case in todo:
                sigma = measure(case.sigma).wall_s
                ref = sum(measure(argv).wall_s for argv in case.refs)
                times[case.name].append((sigma, ref))
                print(
                    f"round {r + 1} {case.name}: {sigma:.2f} s / {ref:.2f} s = {sigma / ref:.2f}",
                    file=sys.stderr,
                    flush=True,
                )
        load_after = os.getloadavg()
    lines = [
        f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} (2 cores); {args.rounds} pairs per case",
        "",
        "| case | sigmatool median s | reference median s | ratio median | ratio min–max | target | met |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for case in todo:
        pairs = times[case.name]
        ratios = [s / r for s, r in pairs]
        median = statistics.median(ratios)
        lines.append(
            f"| {case.label} | {statistics.median(s for s, _ in pairs):.2f} | {statistics.median(r for _, r in pairs):.2f} "
            f"| {median:.2f} | {min(ratios):.2f}–{max(ratios):.2f} | ≤ {case.target:g} | {'yes' if median <= case.target else 'no'} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

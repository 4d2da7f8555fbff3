#!/usr/bin/env python3
"""Interactive latency: each slow question against the run it should cost little more than, side by side.

    .venv/bin/python bench/latency.py                     # every case, 3 pairs each
    .venv/bin/python bench/latency.py --only bounds --rounds 5
    .venv/bin/python bench/latency.py --data /tmp/latency  # keep the generated files for the next run

Cases (target: the median of the pair ratios):
- ``ci``: ``silent --prior npmle --ci 0.95`` ÷ ``silent --prior npmle`` on a MATH-sized dataset (12,500
  prompts drawn without replacement, seed 26, from Big-Math's 215,608; k right of n = 64 each); target ≤ 3.
- ``ci8``, ``ci5``: the same on those 12,500 prompts with 8 and with 5 of their 64 answers each
  (hypergeometric draws from the same generator, 8 first), data whose NPMLE reproduces its histogram, so
  every replicate is refitted on the face of equally likely fits (docs/prior.md, "Cost"); target ≤ 3.
- ``bounds``: ``budget --samples 64 --bounds`` ÷ ``budget --samples 64`` on the bundled sample; target ≤ 3.
- ``report``: ``report -o page.html`` ÷ the sum of ``silent --G 2,…,256``, ``budget --G 8,inf`` and
  ``groupsize``, each alone with ``--format csv``, on the bundled sample; target ≤ 2.
- ``continuous``: ``silent --G 8`` ÷ DuckDB's ``avg(pow(p, 8) + pow(1 - p, 8))`` on 10^7 continuous pass
  rates (bench/harness/data.py's ``continuous`` file); target ≤ 1.2.

Every command is its own process, timed as bench/run.py times them (wall time from a small launcher);
sigmatool runs as ``python -m sigmatool`` with this interpreter, so a worktree on PYTHONPATH is measured.
A pair is sigmatool then its reference; rounds repeat the pairs, so a busy machine slows both sides of a
pair. The report gives each ratio's median and min–max and the load average before and after.

sigmatool's bytecode is compiled once before the runs (``compileall``), as installing it does: with
PYTHONDONTWRITEBYTECODE set, or from a fresh source tree, every run would otherwise compile its modules
again (0.1–0.3 s) and that is no part of the question's cost. The continuous case also times its floor in
each round, right after the pair: a Python process that imports polars and scans the same column into the
same mean, ``python -c "import polars as pl; pl.scan_parquet(path).select(...).collect()"``; the DuckDB
reference is likewise a Python process (``import duckdb``, bench/harness/refs/duckdb_ref.py, which asks for
the all-right rate as well).
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
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
    floor: list[str] | None = None  # a lower bound for both sides, timed after each pair


def math_sized(folder: Path) -> Path:
    """12,500 prompts drawn without replacement from Big-Math (seed 26): k of n = 64 per prompt."""
    path = folder / "math_12500.csv"
    if not path.exists():
        table = np.loadtxt(COUNTS, delimiter=",", skiprows=1, usecols=(0, 3)).astype(np.int64)
        k = np.random.default_rng(26).choice(np.repeat(table[:, 0], table[:, 1]), 12_500, replace=False)
        path.write_text("k,n\n" + "".join(f"{x},64\n" for x in k.tolist()))
    return path


def math_thinned(folder: Path, m: int) -> Path:
    """:func:`math_sized`'s 12,500 prompts with m of their 64 answers each (m = 8 or 5): the draw without
    replacement, then hypergeometric draws for 8 answers, then for 5, all from one generator seeded 26."""
    path = folder / f"math_12500_{m}.csv"
    if not path.exists():
        table = np.loadtxt(COUNTS, delimiter=",", skiprows=1, usecols=(0, 3)).astype(np.int64)
        everyone = np.repeat(table[:, 0], table[:, 1])
        rng = np.random.default_rng(26)
        k = everyone[rng.choice(everyone.size, 12_500, replace=False)]
        for size in (8, 5):
            j = rng.hypergeometric(k, 64 - k, size)
            (folder / f"math_12500_{size}.csv").write_text(
                "k,n\n" + "".join(f"{x},{size}\n" for x in j.tolist())
            )
    return path


def ci_case(name: str, path: Path, label: str) -> Case:
    """``silent --prior npmle --ci 0.95`` ÷ ``silent --prior npmle`` on counts k of n in ``path``."""
    data = [str(path), "--k-col", "k", "--n-col", "n", "--prior", "npmle", *CSV]
    return Case(name, label, [*SIGMA, "silent", *data, "--ci", "0.95"], [[*SIGMA, "silent", *data]], 3.0)


# The floor of a polars-based answer: start Python, import polars, scan the column into the mean.
FLOOR = (
    "import polars as pl; p = pl.col('pass_rate'); "
    "print(pl.scan_parquet({path!r}).select((p.pow(8) + (1 - p).pow(8)).mean()).collect().item())"
)


def compiled() -> None:
    """sigmatool's bytecode written once, as an installed package has it (see the module's docstring)."""
    spec = importlib.util.find_spec("sigmatool")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            compileall.compile_dir(folder, quiet=1)


def cases(folder: Path, only: list[str]) -> list[Case]:
    out = []
    if not only or "ci" in only:
        out.append(ci_case("ci", math_sized(folder), "silent --prior npmle --ci 0.95 (12,500 prompts)"))
    for m in (8, 5):
        if not only or f"ci{m}" in only:
            label = f"silent --prior npmle --ci 0.95 (12,500 prompts, {m} answers)"
            out.append(ci_case(f"ci{m}", math_thinned(folder, m), label))
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
                [sys.executable, "-c", FLOOR.format(path=str(path))],
            )
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--only", action="append", default=[], choices=["ci", "ci8", "ci5", "bounds", "report", "continuous"]
    )
    parser.add_argument("--data", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.data or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        todo = cases(folder, args.only)
        compiled()
        load_before = os.getloadavg()
        times: dict[str, list[tuple[float, float]]] = {c.name: [] for c in todo}
        floors: dict[str, list[float]] = {c.name: [] for c in todo if c.floor}
        for r in range(args.rounds):
            for case in todo:
                sigma = measure(case.sigma).wall_s
                ref = sum(measure(argv).wall_s for argv in case.refs)
                times[case.name].append((sigma, ref))
                floor = ""
                if case.floor:
                    floors[case.name].append(measure(case.floor).wall_s)
                    floor = f" (floor {floors[case.name][-1]:.2f} s)"
                print(
                    f"round {r + 1} {case.name}: {sigma:.2f} s / {ref:.2f} s = {sigma / ref:.2f}{floor}",
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
    if floors:
        lines += [
            "",
            "| case | floor median s | sigmatool ÷ floor, median | reference ÷ floor, median |",
            "|---|---:|---:|---:|",
        ]
    for case in todo:
        if case.name in floors:
            pairs, under = times[case.name], floors[case.name]
            lines.append(
                f"| {case.label} | {statistics.median(under):.2f} "
                f"| {statistics.median(s / f for (s, _), f in zip(pairs, under, strict=True)):.2f} "
                f"| {statistics.median(r / f for (_, r), f in zip(pairs, under, strict=True)):.2f} |"
            )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

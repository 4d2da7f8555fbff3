#!/usr/bin/env python3
"""A plan over many sizes, and budget over many --by groups: each timed in fresh processes beside the plain
alternative, and (``--against DIR``) beside the same command run from another source tree.

    .venv/bin/python bench/sizes_and_groups.py                          # every case, 3 pairs each
    .venv/bin/python bench/sizes_and_groups.py --only sizes --rounds 5
    .venv/bin/python bench/sizes_and_groups.py --against /tmp/old --data /tmp/bench-data
    .venv/bin/python bench/sizes_and_groups.py --out bench/results-sizes-groups-2026-12-07.md

``--against DIR``: DIR holds another commit's tree (``git archive COMMIT | tar -x -C DIR``); its command runs
right after this tree's, in the same round, with DIR first on the path.

Cases (sigmatool, then its reference, as one pair; rounds repeat the pairs, so a busy machine slows both):

- ``sizes``: ``plan`` on the bundled Big-Math file (215,608 prompts, k of 64) with ``--sizes 2..129`` (128
  sizes) beside ``--sizes 2..9`` (8 sizes); target: at most 4 times as long.
- ``sizes-plot``: the same two with ``--plot`` (the figure plans again at each size as the budget).
- ``fidelity``: ``plan --objective fidelity --sizes 2..1025`` (1,024 sizes, the most allowed) beside
  ``--sizes 2..9``; no target (it did not finish in 10 minutes before each (k, n, G) was valued once).
- ``by``: ``budget --by topic --G 8`` on 10^7 k/64 pass rates in 200,000 topics (bench/run.py's
  ``topics_rates`` file, the same seed) beside the numpy reference of bench/run.py (pandas group-by, numpy's
  binomial sums: ``harness/refs/numpy_ref.py``); target: under 5 s.

Each process's wall time and CPU time (user + system, every thread: ``os.wait4``) are kept; on a shared
machine wall times are compressed towards 1, so the CPU times are given beside them. Prints a Markdown
table (medians, min–max, the ratio's median and min–max over the pairs) and the load average before and
after. Nothing is asserted: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import Data, generate

ROOT = Path(__file__).resolve().parent.parent
BIGMATH = str(ROOT / "sample_data" / "bigmath_solve_rates.parquet")
NUMPY_REF = str(ROOT / "bench" / "harness" / "refs" / "numpy_ref.py")
TOPICS = Data("topics_rates", 10**7, 200_000)
CASES = ("sizes", "sizes-plot", "fidelity", "by")


@dataclass(frozen=True)
class Case:
    name: str
    label: str
    sigma: list[str]  # sigmatool's arguments
    ref: list[str]  # the reference's whole command
    ref_label: str
    target: str  # "ratio N", "wall N" or ""


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float


def run(argv: list[str], tree: Path | None, folder: Path) -> Run:
    """One process to its end, from ``folder`` (``python -m`` puts the working directory first on the path),
    with ``tree`` first on the path when given: its wall time and CPU time (all threads, from wait4)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            last = err.read().decode().strip().splitlines()[-1:] or ["(no message)"]
            raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}: {last[0]}")
    return Run(wall, usage.ru_utime + usage.ru_stime)


def cases(folder: Path, only: list[str]) -> list[Case]:
    sigma = [sys.executable, "-m", "sigmatool"]
    plan = ["plan", BIGMATH, "--budget", "8", "--format", "csv"]
    fig = str(folder / "fig.png")
    out = [
        Case("sizes", "plan --sizes 2..129 (128 sizes)", [*plan, "--sizes", "2..129"],
             [*sigma, *plan, "--sizes", "2..9"], "--sizes 2..9", "ratio 4"),
        Case("sizes-plot", "plan --sizes 2..129 --plot", [*plan, "--sizes", "2..129", "--plot", fig],
             [*sigma, *plan, "--sizes", "2..9", "--plot", fig], "--sizes 2..9 --plot", ""),
        Case("fidelity", "plan --objective fidelity --sizes 2..1025 (1,024 sizes)",
             [*plan, "--objective", "fidelity", "--sizes", "2..1025"],
             [*sigma, *plan, "--objective", "fidelity", "--sizes", "2..9"], "--sizes 2..9", ""),
    ]  # fmt: skip
    if not only or "by" in only:
        path = str(generate(TOPICS, folder))
        ask = {"path": path, "col": "pass_rate", "by": "topic", "rollouts": False, "task": "budget", "G": [8]}
        out.append(
            Case("by", f"budget --by topic --G 8, {TOPICS.describe()}",
                 ["budget", path, "--col", "pass_rate", "--by", "topic", "--G", "8", "--format", "csv"],
                 [sys.executable, NUMPY_REF, json.dumps(ask)], "numpy (pandas group-by)", "wall 5")
        )  # fmt: skip
    return [c for c in out if not only or c.name in only]


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def _met(case: Case, wall: list[float], ratios: list[float]) -> tuple[str, str]:
    if not case.target:
        return "—", "—"
    kind, bound = case.target.split()
    if kind == "ratio":
        return f"≤ {bound}×", "yes" if statistics.median(ratios) <= float(bound) else "no"
    return f"< {bound} s", "yes" if statistics.median(wall) < float(bound) else "no"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", action="append", default=[], choices=CASES)
    parser.add_argument("--against", type=Path, help="another source tree, run after this one in each pair")
    parser.add_argument("--data", type=Path, help="keep the generated file here for the next run")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.data or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        todo = cases(folder, args.only)
        sigma = [sys.executable, "-m", "sigmatool"]
        before = os.getloadavg()[0]
        runs: dict[str, list[tuple[Run, Run, Run | None]]] = {c.name: [] for c in todo}
        for r in range(args.rounds):
            for case in todo:
                mine = run([*sigma, *case.sigma], ROOT, folder)
                ref = run(case.ref, ROOT, folder)
                other = run([*sigma, *case.sigma], args.against, folder) if args.against else None
                runs[case.name].append((mine, ref, other))
                old = f" / against {other.wall:.2f} s" if other else ""
                print(
                    f"round {r + 1} {case.name}: {mine.wall:.2f} s / {ref.wall:.2f} s{old}", file=sys.stderr
                )
        after = os.getloadavg()[0]
    lines = [
        f"load average before {before:.1f}, after {after:.1f} ({os.cpu_count()} CPUs); {args.rounds} pairs per case",
        "",
        "| case | sigmatool s (min–max) | CPU s | reference | reference s | CPU s | ratio (min–max) | CPU ratio "
        "| target | met |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for case in todo:
        pairs = runs[case.name]
        wall = [m.wall for m, _, _ in pairs]
        ratios = [m.wall / r.wall for m, r, _ in pairs]
        cpu = [m.cpu / r.cpu for m, r, _ in pairs]
        target, met = _met(case, wall, ratios)
        lines.append(
            f"| {case.label} | {_spread(wall)} | {statistics.median(m.cpu for m, _, _ in pairs):.2f} "
            f"| {case.ref_label} | {statistics.median(r.wall for _, r, _ in pairs):.2f} "
            f"| {statistics.median(r.cpu for _, r, _ in pairs):.2f} | {_spread(ratios)} | {_spread(cpu)} "
            f"| {target} | {met} |"
        )
    if args.against:
        lines += [
            "",
            f"Against {args.against} (its command right after this tree's, in the same round):",
            "",
            "| case | this tree s | other tree s (min–max) | ratio this / other (min–max) | CPU ratio (min–max) |",
            "|---|---:|---:|---:|---:|",
        ]
        for case in todo:
            pairs = [(m, o) for m, _, o in runs[case.name] if o is not None]
            lines.append(
                f"| {case.label} | {statistics.median(m.wall for m, _ in pairs):.2f} "
                f"| {_spread([o.wall for _, o in pairs])} | {_spread([m.wall / o.wall for m, o in pairs])} "
                f"| {_spread([m.cpu / o.cpu for m, o in pairs])} |"
            )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

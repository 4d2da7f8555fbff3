#!/usr/bin/env python3
"""Time ``sigmatool plan`` on 10^7 prompts with continuous pass rates: whole commands, and the plan alone.

    python bench/plan_scale.py                          # the commands on a 10^7-row parquet file
    python bench/plan_scale.py --values 1000000         # smaller
    python bench/plan_scale.py --in-process             # only sigmatool.plan.plan_values, in this process

The dataset has one row per prompt (``id``, ``pass_rate``): a twentieth of the prompts at p = 0, another at
p = 1, and every other pass rate one uniform draw in its own equal stratum of (0, 1), so nearly every value
is distinct: the hardest case for a plan, which works on distinct values. It is written once to a temporary
folder (or ``--data DIR``, kept and reused). Each command then runs as its own process, and the wall time and
peak resident memory of that process are reported (``ru_maxrss`` from ``os.wait4``, as ``bench/run.py``
measures), with its CPU time (user + system, all threads) and the machine's load average: on a shared
machine other work stretches the wall time, while the CPU time stays what the command costs.

Cases: the summary for each objective (``--budget 8 --sizes 4,8,16,32``) and the per-prompt export to
parquet (``--per-prompt -o``). The targets are under 10 s and under 1 GiB per command.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

SEED = 20260607
TARGET_SECONDS = 10.0
TARGET_MIB = 1024.0
OBJECTIVES = ("signal", "learnable", "knapsack-rl", "fidelity")


# As bench/run.py's launcher: fork and exec from a small process, so that ru_maxrss is the command's own.
LAUNCHER = """
import os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as handle:
    handle.write(f"{time.perf_counter() - start} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def measure(argv: list[str]) -> tuple[float, float, float]:
    """(wall seconds, peak MiB, CPU seconds) of one process run to its end."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "usage"
        done = subprocess.run(
            [sys.executable, "-S", "-c", LAUNCHER, str(report), *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited with {done.returncode}:\n{done.stderr}")
        wall, maxrss_kib, cpu = report.read_text().split()
    return float(wall), int(maxrss_kib) / 1024, float(cpu)


def rates(n: int) -> np.ndarray:
    """n pass rates: a twentieth at 0, a twentieth at 1, the rest one draw per stratum, shuffled."""
    rng = np.random.default_rng(SEED)
    p = (np.arange(n, dtype=np.float64) + rng.random(n)) / n
    p[: n // 20] = 0.0
    p[n // 20 : n // 10] = 1.0
    rng.shuffle(p)
    return p


def dataset(n: int, folder: Path) -> Path:
    path = folder / f"continuous_{n}.parquet"
    if not path.exists():
        pl.DataFrame({"id": np.arange(n), "pass_rate": rates(n)}).write_parquet(path)
    return path


def commands(data: Path, out: Path) -> list[tuple[str, list[str]]]:
    sigmatool = [
        sys.executable,
        "-m",
        "sigmatool",
        "plan",
        str(data),
        "--budget",
        "8",
        "--sizes",
        "4,8,16,32",
    ]
    cases = [(f"summary, {o}", [*sigmatool, "--objective", o, "--format", "csv"]) for o in OBJECTIVES]
    cases.append(("per-prompt parquet, signal", [*sigmatool, "--per-prompt", "-o", str(out)]))
    return cases


def in_process(n: int) -> None:
    from sigmatool.options import plan_options
    from sigmatool.plan import plan_values

    values, counts = np.unique(rates(n), return_counts=True)
    for objective in OBJECTIVES:
        start = time.perf_counter()
        result = plan_values(values, counts.astype(np.int64), plan_options(objective=objective, budget=8))
        seconds = time.perf_counter() - start
        print(
            f"plan_values, {objective}: {seconds:.2f} s on {values.size:,} distinct values; {result.guarantee}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--values", type=int, default=10_000_000, help="prompts (rows) in the dataset")
    parser.add_argument("--data", type=Path, help="folder for the dataset, kept and reused")
    parser.add_argument("--in-process", action="store_true", help="time plan_values alone")
    args = parser.parse_args()
    if args.in_process:
        in_process(args.values)
        return
    folder = args.data or Path(tempfile.mkdtemp(prefix="sigmatool-plan-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        data = dataset(args.values, folder)
        print(
            f"{args.values:,} prompts, {data.stat().st_size / 2**20:.0f} MiB parquet; load {os.getloadavg()[0]:.1f}"
        )
        print(
            "| case | wall | CPU (user + system) | peak memory | under 10 s and 1 GiB |\n|---|---|---|---|---|"
        )
        for label, argv in commands(data, folder / "plan.parquet"):
            wall, peak, cpu = measure(argv)
            met = "yes" if wall < TARGET_SECONDS and peak < TARGET_MIB else "no"
            print(f"| {label} | {wall:.1f} s | {cpu:.1f} s | {peak:.0f} MiB | {met} |", flush=True)
        print(f"load average after: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} cores)")
    finally:
        if args.data is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""sigmatool's benchmark: whole commands against references, in pairs, on synthetic data with a fixed seed.

    python bench/run.py --size quick     # small datasets, under a minute (make bench-quick)
    python bench/run.py --size full      # 10^7- and 10^8-row datasets (make bench)

The datasets are written into a temporary folder (or ``--data DIR``, kept and reused). Every run is its own
process, whose wall time and peak resident memory (``ru_maxrss`` from ``os.wait4``) are recorded. Each
sigmatool command is paired with each of its references (the plain numpy approach, DuckDB, the floor of
polars reading the data, or a bare interpreter for start-up): sigmatool, then the reference, round after
round, and a ratio per pair. The references print their answers, and the benchmark checks that sigmatool
printed the same ones. The report goes to stdout and to ``bench/out/results.md``; progress to stderr. The
exit status is 1 if an answer disagrees or a command fails. bench/README.md describes every case.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.cases import SIZES, Case, cases
from harness.data import Data, generate
from harness.report import report
from harness.runner import Result, log, run_case

HERE = Path(__file__).resolve().parent


def available_commands() -> set[str]:
    from sigmatool.cli import COMMANDS

    return set(COMMANDS)


def select(todo: list[Case], only: Sequence[str]) -> list[Case]:
    """The cases whose section or label contains one of the texts (all, with none) and whose command exists."""
    todo = [c for c in todo if not only or any(text in f"{c.section}: {c.label}" for text in only)]
    commands = available_commands() | {"--version"}
    for case in todo:
        if case.args[0] not in commands:
            log(f"skipped (sigmatool has no {case.args[0]} command): {case.label}")
    return [c for c in todo if c.args[0] in commands]


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="quick")
    parser.add_argument(
        "--data", type=Path, help="write the datasets here, keep them, and reuse them next time"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder of datasets")
    parser.add_argument(
        "--out", type=Path, default=HERE / "out", help="folder of results.md (default: bench/out)"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="run only the cases whose section or label contains this text (repeatable)",
    )
    parser.add_argument(
        "--rounds", type=int, help="at most this many pairs per reference (default: the size's)"
    )
    parser.add_argument("--list", action="store_true", help="list the cases of the size and exit")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse(argv)
    size = SIZES[opts.size]
    if opts.rounds:
        size = dataclasses.replace(size, rounds=opts.rounds, startup_rounds=opts.rounds, min_rounds=1)
    todo = select(cases(size), opts.only)
    if opts.list:
        print("\n".join(c.label for c in todo))
        return 0
    start, load_start = time.perf_counter(), os.getloadavg()[0]
    folder = opts.data or Path(tempfile.mkdtemp(prefix="sigmatool-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    try:
        paths: dict[Data, Path] = {}
        for data in dict.fromkeys(c.data for c in todo if c.data is not None):
            log(f"generating {data.file} ({data.rows:,} rows) …")
            paths[data] = generate(data, folder)
        log(f"datasets ready after {time.perf_counter() - start:.0f} s")
        for case in todo:
            log(f"{case.label} …")
            began = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="sigmatool-bench-out-") as tmp:
                results.append(run_case(case, paths.get(case.data) if case.data else None, size, Path(tmp)))
            log(f"  {time.perf_counter() - began:.1f} s")
    finally:
        if opts.data or opts.keep:
            log(f"datasets kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    text = report(results, size, time.perf_counter() - start, (load_start, os.getloadavg()[0]))
    print(text)
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "results.md").write_text(text, encoding="utf-8")
    return 1 if any(r.problems or r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

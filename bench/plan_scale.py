#!/usr/bin/env python3
"""Time ``sigmatool.plan`` on many distinct continuous pass rates (default 10^7), in one process.

    /usr/bin/time -v .venv/bin/python bench/plan_scale.py --values 10000000 --objective signal

The pass rates are one uniform draw in each of n equal strata of [0, 1] with a fixed seed (distinct,
ascending), the first set to 0 and the last to 1 with a twentieth of the prompts each, the others one to
three prompts each; the script prints the time spent in
``plan_values`` (the plan, its summary and its distribution), the guarantee and the plan's summary row. Peak
memory is what ``/usr/bin/time -v`` reports as "Maximum resident set size".
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sigmatool.plan import plan_options, plan_values

SEED = 20260607


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--values", type=int, default=10_000_000)
    parser.add_argument("--objective", default="signal")
    parser.add_argument("--sizes", default="4,8,16,32")
    parser.add_argument("--budget", type=float, default=8.0)
    parser.add_argument("--keep-all", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    # One value in each of n equal strata of (0, 1): distinct, ascending, no sort needed.
    p = (np.arange(args.values, dtype=np.float64) + rng.random(args.values)) / args.values
    p[0], p[-1] = 0.0, 1.0
    counts = rng.integers(1, 4, size=p.size)
    counts[0] = counts[-1] = max(1, p.size // 20)  # about a tenth of the prompts at p = 0 or 1
    options = plan_options(
        sizes=args.sizes, objective=args.objective, budget=args.budget, keep_all=args.keep_all
    )
    start = time.perf_counter()
    result = plan_values(p, counts, options)
    seconds = time.perf_counter() - start
    row = result.summary.row(0, named=True)
    print(
        f"distinct values: {p.size:,}; prompts: {int(counts.sum()):,}; sizes: {args.sizes}; objective: {args.objective}"
    )
    print(f"plan_values: {seconds:.2f} s")
    print(f"guarantee: {result.guarantee}")
    print(f"objective {row['objective']:.9g}; rollouts used {row['rollouts_used']:,} of {row['budget']:,}")


if __name__ == "__main__":
    main()

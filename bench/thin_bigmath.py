#!/usr/bin/env python3
"""Make sample_data/bigmath_8_samples.csv: Big-Math as if only 8 of each prompt's 64 answers had been logged.

    .venv/bin/python bench/thin_bigmath.py                   # 8 samples, seed 8, the bundled file
    .venv/bin/python bench/thin_bigmath.py --samples 4 --out /tmp/bigmath_4.csv

Each of the 215,608 prompts of sample_data/bigmath_solve_rate_counts.csv has k right of 64. Drawing m of its
64 answers without replacement gives j ~ Hypergeometric(64, k, m), one seeded draw per prompt; the file holds
the resulting histogram: columns k (= j), n (= m) and count (prompts). The 64-answer unbiased silent rate at
G = 16 (30.19 %, docs/theory.md §2) is what docs/prior.md predicts from it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
COUNTS = ROOT / "sample_data" / "bigmath_solve_rate_counts.csv"


def thin(k: np.ndarray, count: np.ndarray, m: int, seed: int) -> np.ndarray:
    """Prompts with j right of m, j = 0 … m, from one draw of m of the 64 answers per prompt."""
    rng = np.random.default_rng(seed)
    ks = np.repeat(k, count)
    return np.bincount(rng.hypergeometric(ks, 64 - ks, m), minlength=m + 1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--out", type=Path, default=ROOT / "sample_data" / "bigmath_8_samples.csv")
    args = parser.parse_args()
    table = np.loadtxt(COUNTS, delimiter=",", skiprows=1, dtype=np.int64, usecols=(0, 3))
    counts = thin(table[:, 0], table[:, 1], args.samples, args.seed)
    lines = ["k,n,count", *(f"{j},{args.samples},{c}" for j, c in enumerate(counts.tolist()))]
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {int(counts.sum()):,} prompts, {args.samples} samples each")


if __name__ == "__main__":
    main()

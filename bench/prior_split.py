#!/usr/bin/env python3
"""The Big-Math split test of docs/prior.md: predict the 64-sample silent rate from 4, 8 or 16 samples.

    .venv/bin/python bench/prior_split.py              # the split table and the timings (about a minute)
    .venv/bin/python bench/prior_split.py --coverage   # also the bootstrap coverage study (a few minutes)

Each of Big-Math's 215,608 prompts has k right of n = 64 (sample_data/bigmath_solve_rate_counts.csv). Drawing
m of the 64 answers without replacement gives j ~ Hypergeometric(64, k, m): the "expected" dataset is the
exact expected histogram Σ_k count_k Hyp(j; 64, k, m); the "drawn" dataset is one seeded draw per prompt.
Each estimator predicts the silent rate at G = 8, 16, 32, compared with the unbiased estimate from all 64
samples. The report (markdown) goes to stdout.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.special import comb
from scipy.stats import hypergeom

from sigmatool import kernels
from sigmatool.kernels import Quantity
from sigmatool.prior import cells, fit_prior
from sigmatool.prior.bootstrap import bootstrap_rate
from sigmatool.prior.bounds import bounds
from sigmatool.prior.fit import EMOptions, mixing_weights
from sigmatool.prior.groupsize import posterior_group_size
from sigmatool.prior.model import Prior
from sigmatool.prior.posterior import expected_rate

ROOT = Path(__file__).resolve().parent.parent
COUNTS = ROOT / "sample_data" / "bigmath_solve_rate_counts.csv"
SIZES = (8, 16, 32)
SAMPLES = (4, 8, 16)


def load() -> tuple[np.ndarray, np.ndarray]:
    """k (of 64) and the number of prompts with that k."""
    table = np.loadtxt(COUNTS, delimiter=",", skiprows=1)
    return table[:, 0].astype(np.int64), table[:, 3]


def truth(k: np.ndarray, count: np.ndarray, G: int) -> float:
    """The unbiased estimate from all 64 samples."""
    return float(count @ ((comb(k, G) + comb(64 - k, G)) / comb(64, G)) / count.sum())


def thinned(k: np.ndarray, count: np.ndarray, m: int, seed: int | None) -> np.ndarray:
    """Prompts with j right of m: the expected histogram, or one seeded draw per prompt."""
    j = np.arange(m + 1)
    if seed is None:
        return np.asarray((count[:, None] * hypergeom.pmf(j[None, :], 64, k[:, None], m)).sum(axis=0))
    rng = np.random.default_rng(seed)
    ks = np.repeat(k, count.astype(np.int64))
    draws = rng.hypergeometric(ks, 64 - ks, m)
    return np.bincount(draws, minlength=m + 1).astype(np.float64)


def kernel_mixture(j: np.ndarray, m: int, h: np.ndarray, concentration: float = 20.0) -> Prior:
    """A smoothed alternative to the NPMLE: atoms at 0 and 1 plus Beta(cμ, c(1 − μ)) kernels, weights by EM."""
    mu = np.sin(np.linspace(0.0, np.pi / 2.0, 202)[1:-1]) ** 2
    a, b = concentration * mu, concentration * (1.0 - mu)
    shape = Prior("smooth", np.array([0.0, 1.0]), np.ones(2), a, b, np.ones(a.size))
    c = cells(j, m, h)
    L = np.exp(shape.log_joint(c.k, c.n))
    mass, _, _ = mixing_weights(L, c.weight / c.total, EMOptions())
    return Prior("smooth", shape.atoms, mass[:2], a, b, mass[2:])


def estimates(j: np.ndarray, m: int, h: np.ndarray) -> dict[str, list[float]]:
    """Silent rate at each G under every estimator (NaN where it does not exist)."""
    weight = h / h.sum()
    out = {
        "plug-in": [float(weight @ kernels.silent_probability(j / m, G)) for G in SIZES],
        "unbiased": [float(weight @ kernels.silent_probability_unbiased(j, m, G)) for G in SIZES],
    }
    priors = {
        "beta": fit_prior(j, m, h, kind="beta"),
        "npmle": fit_prior(j, m, h, kind="npmle"),
        "beta-kernel mixture": kernel_mixture(j, m, h),
    }
    for name, prior in priors.items():
        out[name] = [expected_rate(prior, j, m, h, "silent", G) for G in SIZES]
    return out


def split_table(k: np.ndarray, count: np.ndarray) -> list[str]:
    """The markdown table: one row per (samples, dataset, estimator), bounds in the last columns."""
    goal = [truth(k, count, G) for G in SIZES]
    lines = [
        "| samples | dataset | estimator | G = 8 | G = 16 | G = 32 |",
        "|---|---|---|---:|---:|---:|",
        "| 64 | all | unbiased (the truth) | " + " | ".join(f"{100 * t:.2f}" for t in goal) + " |",
    ]
    for m in SAMPLES:
        for label, seed in (("expected", None), ("drawn", 0)):
            h = thinned(k, count, m, seed)
            j = np.arange(m + 1)
            found = [bounds(j, m, h, "silent", G) for G in SIZES]
            for name, values in estimates(j, m, h).items():
                cells_ = []
                for v, b in zip(values, found, strict=True):
                    mark = "" if math.isnan(v) or b.lo <= v <= b.hi else " ✗"
                    cells_.append("–" if math.isnan(v) else f"{100 * v:.2f}{mark}")
                lines.append(f"| {m} | {label} | {name} | " + " | ".join(cells_) + " |")
            spans = [f"{100 * b.lo:.2f}–{100 * b.hi:.2f} ({100 * b.width:.2f})" for b in found]
            lines.append(f"| {m} | {label} | **bounds** (width) | " + " | ".join(spans) + " |")
    return lines


def timed(action: Callable[[], object], repeats: int = 5) -> float:
    """Median wall time of a call, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def timings(k: np.ndarray, count: np.ndarray) -> list[str]:
    """Fit and bounds on the full 64-sample histogram."""
    rows = [
        ("fit beta", lambda: fit_prior(k, 64, count, kind="beta")),
        ("fit npmle", lambda: fit_prior(k, 64, count, kind="npmle")),
        ("bounds, silent rate at G = 16", lambda: bounds(k, 64, count, "silent", 16)),
        ("bounds, mean E[σ] at G = 128", lambda: bounds(k, 64, count, "sigma", 128)),
    ]
    lines = ["| step (215,608 prompts, 65 distinct k) | median of 5 runs |", "|---|---:|"]
    lines += [f"| {name} | {timed(action):.3f} s |" for name, action in rows]
    return lines


def identified_shares(k: np.ndarray, count: np.ndarray) -> list[str]:
    """Share bounds from 8 of 64 (true-p segments), next to the 64-sample NPMLE's shares."""
    j, h = np.arange(9), thinned(k, count, 8, None)
    full = fit_prior(k, 64, count, kind="npmle")
    extreme = lambda p: (p < 0.1) | (p > 0.9)  # noqa: E731
    medium = lambda p: (p >= 0.4) & (p <= 0.6)  # noqa: E731
    lines = ["| share (true-p segment), 8 of 64 | bounds | NPMLE of all 64 samples |", "|---|---:|---:|"]
    for label, quantity, G, segment in [
        ("GRPO G = ∞, extreme", "grpo_limit", None, extreme),
        ("Dr. GRPO G = ∞, extreme", "drgrpo_limit", None, extreme),
        ("GRPO G = 16, medium", "sigma", 16, medium),
    ]:
        b = bounds(j, 8, h, quantity, G, segment=segment)
        w = full.atom_mass * Quantity(quantity).plugin(full.atoms, G)
        share = float(w[segment(full.atoms)].sum() / w.sum())
        lines.append(f"| {label} | {100 * b.lo:.2f}–{100 * b.hi:.2f} | {100 * share:.2f} |")
    return lines


def bigmath_priors(k: np.ndarray, count: np.ndarray) -> list[str]:
    """Fit summaries on all 64 samples, and group sizes (φ* = 0.95) of the never- and always-solved prompts."""
    lines = [
        "| prior on all 64 samples | log-lik per prompt | a, b or support | G at k = 0 / 64 (φ* = 0.95) |"
    ]
    lines.append("|---|---:|---|---|")
    for kind in ("beta", "npmle"):
        prior = fit_prior(k, 64, count, kind=kind)
        s = prior.summary()
        shape = f"{s['a']:.4f}, {s['b']:.4f}" if kind == "beta" else f"{s['support_size']} atoms"
        G = posterior_group_size(prior, [0, 64], 64, 0.95)
        lines.append(f"| {kind} | {s['log_likelihood_per_prompt']:.5f} | {shape} | {G[0]:.0f} / {G[1]:.0f} |")
    return lines


def coverage(datasets: int, replicates: int, seed: int = 1) -> list[str]:
    """Share of bootstrap intervals (silent rate at G = 16 from n = 8) that hold the true rate."""
    rng = np.random.default_rng(seed)
    a, b, prompts, n, G = 0.5, 0.6, 2000, 8, 16
    from sigmatool.prior.betaforms import beta_all_right, beta_all_wrong

    true = float(beta_all_right(a, b, G) + beta_all_wrong(a, b, G))
    hits = {"beta, refitted": 0, "beta, fixed": 0}
    for _ in range(datasets):
        k = rng.binomial(n, rng.beta(a, b, prompts))
        c = cells(k, n)
        for name, refit in (("beta, refitted", True), ("beta, fixed", False)):
            ci = bootstrap_rate(c.k, c.n, c.weight, "silent", G, "beta", refit=refit, replicates=replicates)
            hits[name] += ci.lo <= true <= ci.hi
    lines = [
        f"| bootstrap (Beta({a}, {b}) truth, {prompts} prompts, n = {n}, G = {G}) | coverage |",
        "|---|---:|",
    ]
    lines += [
        f"| {name}, {datasets} datasets × {replicates} replicates | {hit / datasets:.3f} |"
        for name, hit in hits.items()
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coverage", action="store_true", help="also run the bootstrap coverage study")
    args = parser.parse_args()
    k, count = load()
    print("\n".join(split_table(k, count)))
    print()
    print("\n".join(timings(k, count)))
    print()
    print("\n".join(identified_shares(k, count)))
    print()
    print("\n".join(bigmath_priors(k, count)))
    if args.coverage:
        print()
        print("\n".join(coverage(datasets=200, replicates=200)))


if __name__ == "__main__":
    main()

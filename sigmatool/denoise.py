"""What ``--denoise`` adds to an analysis: the true mean pass rate with its interval, each prompt's de-noised
rate and its interval, the silent share the counts show as read, and the check that the counts can come from
the grader at all.

The counts were graded by a verifier that reads a right answer right with probability 1 − FN and a wrong one
right with FP (D = 1 − FP − FN), so a prompt of pass rate p shows k of n right with k ~ Bin(n, FP + D p).

- ``pass_rate_mean = (r̄ − FP) / D``, r̄ the prompts' weighted mean of k/n, with
  ``se² = [s²/N + (1 − p̄)² FP (1 − FP)/N_FP + p̄² FN (1 − FN)/N_FN] / D²`` (s² the sample variance of k/n
  over N prompts; N_FP, N_FN the trials behind FP and FN, ∞ when typed) and ``lo/hi = mean ∓ 1.96 se``;
- per prompt ``pass_rate_denoised = p̂ = clip((k/n − FP)/D, 0, 1)`` and ``pass_rate_lo/hi``: the 95 %
  Clopper–Pearson interval of k/n mapped through the same line; with trials, each of k/n, FP and FN at level
  1 − 0.05/3 and the extremes over the interval's corners, clipped to [0, 1];
- the counts contradict the grader where more prompts are right in all n answers than ``(1 − FN)^n`` allows
  (or wrong in all n than ``(1 − FP)^n``): an exact one-sided binomial test at p < 0.001 with the prompts'
  mean chance (for prompts of several n, the binomial of the mean chance bounds the tail of the sum of
  their Bernoulli draws above its mean, Hoeffding 1956).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.options.verifier import Measured

FloatArray = NDArray[np.float64]

Z95 = 1.959963984540054  # the normal's 97.5 % quantile
CONTRADICT_P = 1e-3


def true_rates(hist: pl.DataFrame, measured: Measured) -> pl.DataFrame:
    """A histogram whose rate ``p`` is the true one, ``clip((p − FP)/D, 0, 1)``; its counts as read."""
    p = pl.col("p").cast(pl.Float64)
    return hist.with_columns(((p - measured.fp) / measured.gap).clip(0.0, 1.0).alias("p"))


def denoise_line(measured: Measured, ci: bool = False) -> str:
    """The headline line of a de-noised answer: the grader its counts are read back through; with ``ci``
    and a grader measured in trials, that the bootstrap holds FP and FN at their estimates."""
    trials = ""
    if math.isfinite(measured.fp_trials) or math.isfinite(measured.fn_trials):
        trials = f" (from {_trials(measured.fp_trials)} and {_trials(measured.fn_trials)} trials)"
        if ci:
            trials += (
                "; --ci redraws the prompts with FP and FN held at these estimates (pass_rate_mean_lo/hi "
                "carry their uncertainty)"
            )
    said = f"De-noised: the counts are read back through a grader of FP {measured.fp:g}, FN {measured.fn:g}"
    if measured.source != "--denoise":
        said += f" ({measured.source})"
    return " ".join([said + trials + "; every figure is for the true pass rate.", *measured.notes])


def _trials(n: float) -> str:
    return "∞" if not math.isfinite(n) else f"{n:,.0f}"


def mean_rows(hist: pl.DataFrame, by: Sequence[str], measured: Measured) -> pl.DataFrame:
    """Per --by group of a histogram (``p`` the rate as read, ``prompts`` its weight): ``pass_rate_mean``
    and ``pass_rate_mean_lo/_hi``, the true mean pass rate with its 95 % interval."""
    keys = list(by)
    w = pl.col("prompts").cast(pl.Float64)
    x = pl.col("p").cast(pl.Float64)
    stats = [
        w.sum().alias("__N"),
        (w * x).sum().alias("__sx"),
        (w * x * x).sum().alias("__sxx"),
    ]
    sums = hist.group_by(keys, maintain_order=True).agg(stats) if keys else hist.select(stats)
    N = sums["__N"].to_numpy()
    mean = sums["__sx"].to_numpy() / N
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.maximum(sums["__sxx"].to_numpy() - N * mean * mean, 0.0) / (N - 1.0)
    fp, fn, D = measured.fp, measured.fn, measured.gap
    p = (mean - fp) / D
    q = np.clip(p, 0.0, 1.0)
    se = (
        np.sqrt(
            var / N + (1.0 - q) ** 2 * _share(fp, measured.fp_trials) + q**2 * _share(fn, measured.fn_trials)
        )
        / D
    )
    found = pl.DataFrame(
        [
            pl.Series("pass_rate_mean", p),
            pl.Series("pass_rate_mean_lo", p - Z95 * se),
            pl.Series("pass_rate_mean_hi", p + Z95 * se),
        ]
    )
    return pl.concat([sums.select(keys), found], how="horizontal") if keys else found


def _share(rate: float, trials: float) -> float:
    """``rate (1 − rate) / trials``: the variance of a rate measured in ``trials`` (0 when typed)."""
    return 0.0 if not math.isfinite(trials) else rate * (1.0 - rate) / trials


def prompt_rates(
    k: FloatArray, n: FloatArray, measured: Measured
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per prompt: p̂ and its 95 % interval (:mod:`sigmatool.denoise`)."""
    fp, fn, D = measured.fp, measured.fn, measured.gap
    p = np.clip((k / n - fp) / D, 0.0, 1.0)
    typed = not (math.isfinite(measured.fp_trials) or math.isfinite(measured.fn_trials))
    alpha = 0.05 if typed else 0.05 / 3.0
    r_lo, r_hi = clopper_pearson(k, n, alpha)
    fps, fns = [fp], [fn]
    if not typed:
        fps = _ends(fp, measured.fp_trials, alpha)
        fns = _ends(fn, measured.fn_trials, alpha)
    corners = np.stack(
        [(r - a) / (1.0 - a - b) for r in (r_lo, r_hi) for a in fps for b in fns if a + b < 1.0]
    )
    lo = np.clip(corners.min(axis=0), 0.0, 1.0)
    hi = np.clip(corners.max(axis=0), 0.0, 1.0)
    return np.asarray(p, dtype=np.float64), lo, hi


def clopper_pearson(k: FloatArray, n: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """The two-sided Clopper–Pearson interval of k of n at level 1 − alpha (0 and 1 at the ends)."""
    from scipy.stats import beta as b

    kk, nn = np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        lo = np.where(kk > 0, b.ppf(alpha / 2.0, kk, nn - kk + 1.0), 0.0)
        hi = np.where(kk < nn, b.ppf(1.0 - alpha / 2.0, kk + 1.0, nn - kk), 1.0)
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


def _ends(rate: float, trials: float, alpha: float) -> list[float]:
    """A measured rate's Clopper–Pearson ends from its trials (the rate itself when typed)."""
    if not math.isfinite(trials):
        return [rate]
    lo, hi = clopper_pearson(np.array([round(rate * trials)]), np.array([trials]), alpha)
    return [float(lo[0]), float(hi[0])]


def contradictions(hist: pl.DataFrame, measured: Measured) -> list[str]:
    """Warnings, each with "contradict", where the counts cannot come from the grader: more prompts right
    in all n answers than ``(1 − FN)^n`` allows, or wrong in all n than ``(1 − FP)^n`` (one-sided exact
    binomial, p < 0.001)."""
    if "n" not in hist.columns:
        return []
    from scipy.stats import binom

    rows = hist.filter(pl.col("n").is_not_null() & (pl.col("n") > 0))
    if rows.height == 0:
        return []
    k, n = (rows[c].cast(pl.Float64).to_numpy() for c in ("k", "n"))
    w = rows["prompts"].cast(pl.Float64).to_numpy()
    N = float(w.sum())
    out = []
    for seen, rate, what, flag in (
        (k == n, measured.fn, "FN", "all right"),
        (k == 0, measured.fp, "FP", "all wrong"),
    ):
        if rate == 0.0:
            continue
        chance = float((w * (1.0 - rate) ** n).sum() / N)
        count = float(w[seen].sum())
        p_value = float(binom.sf(math.ceil(count) - 1, round(N), chance))
        if p_value < CONTRADICT_P:
            most = _most(n, w, seen)
            out.append(
                f"the counts contradict the grader's {what} = {rate:g}: {count / N:.2%} of prompts are {flag} "
                f"in their n answers, {what} = {rate:g} allows {chance:.2%} (p = {p_value:.2g}); "
                f"they bound {what} ≤ {most:.2%}"
            )
    return out


def _most(n: FloatArray, w: FloatArray, seen: NDArray[np.bool_]) -> float:
    """The largest error rate e whose (1 − e)^n allows the prompts seen (one-sided, p ≥ 0.001)."""
    from scipy.optimize import brentq
    from scipy.stats import binom

    N, count = float(w.sum()), float(w[seen].sum())

    def gap(e: float) -> float:
        chance = float((w * (1.0 - e) ** n).sum() / N)
        return float(binom.sf(math.ceil(count) - 1, round(N), chance)) - CONTRADICT_P

    if gap(0.0) < 0:
        return 0.0
    return float(brentq(gap, 0.0, 0.999999, xtol=1e-6))


def silent_columns(summary: pl.DataFrame, as_read: pl.DataFrame, hist: pl.DataFrame, by: Sequence[str],
                   measured: Measured) -> pl.DataFrame:  # fmt: skip
    """``silent``'s summary with what --denoise adds: ``measured_silent_rate`` (the share the counts show as
    read: ``as_read``, the same summary not de-noised, row for row) and the true mean pass rate of each
    --by group with its interval."""
    keys = [c for c in by if c in summary.columns]
    means = mean_rows(hist, keys, measured)
    out = summary.with_columns(as_read["silent_rate"].alias("measured_silent_rate"))
    out = (
        out.join(means, on=keys, how="left", nulls_equal=True, maintain_order="left")
        if keys
        else (out.with_columns(*(pl.lit(means[c][0]).alias(c) for c in means.columns)))
    )
    return out


def outside_note(summary: pl.DataFrame) -> list[str]:
    """A note where a de-noised silent share leaves [0, 1]: the inverse grader amplifies the counts' noise."""
    rate = summary["silent_rate"].drop_nulls()
    if rate.len() and ((rate < 0.0).any() or (rate > 1.0).any()):
        return [
            "a de-noised silent share leaves [0, 1]: the inverse of the grader amplifies the counts' noise "
            "(D^−G); read it with its interval, or use a prior"
        ]
    return []


def with_prompt_rates(table: pl.DataFrame, measured: Measured) -> pl.DataFrame:
    """Per distinct (k, n) — or rate — of a kernel table whose ``p`` is p̂ already
    (:func:`true_rates`): ``pass_rate_denoised`` and ``pass_rate_lo/hi`` (:func:`prompt_rates`; a bare rate
    has no interval: its p̂ at both ends)."""
    p = table["p"].cast(pl.Float64).to_numpy()
    if "k" not in table.columns:
        return table.with_columns(*(pl.Series(name, p) for name in PROMPT_RATES))
    k, n = (table[c].cast(pl.Float64).fill_null(np.nan).to_numpy() for c in ("k", "n"))
    bare = np.isnan(k) | np.isnan(n)
    hat, lo, hi = prompt_rates(np.where(bare, 0.0, k), np.where(bare, 1.0, n), measured)
    hat, lo, hi = (np.where(bare, p, x) for x in (hat, lo, hi))
    return table.with_columns(
        pl.Series("pass_rate_denoised", hat), pl.Series("pass_rate_lo", lo), pl.Series("pass_rate_hi", hi)
    )


PROMPT_RATES = ("pass_rate_denoised", "pass_rate_lo", "pass_rate_hi")

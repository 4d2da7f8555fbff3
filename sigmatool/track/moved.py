"""Did a step's answers move, not only its silent share? Exact tests of its right answers, all-right groups and
all-wrong groups against the rest of the run.

The silent share cannot see every collapse: a step whose groups were all right and are now all wrong is as
silent as before. Three counts of a step's compared groups can: R, its right answers; A, its all-right
groups; W, its all-wrong groups. Each is tested against the hypothesis that the step's prompts had the pass
rates the expectation gives them, exactly:

- where a group's expectation comes from counts (k′ right of n′ in the other steps, the window, or the
  table), the test conditions on the prompt's total: given K = k + k′ right answers among N = G + n′, the
  step's k is hypergeometric, ``P(k = j) = C(K, j) C(N − K, G − j) / C(N, G)`` (Fisher's exact test, one
  stratum per group), which needs no estimate of the pass rate and so no prior;
- where it comes from a rate p (a table of rates), k is binomial (G, p).

A and W are then sums of independent Bernoulli variables with those probabilities of k = G and k = 0
(Poisson binomial, computed exactly), and R a sum of independent counts whose distribution is their
convolution, exact up to :data:`EXACT_ROLLOUTS` compared rollouts in the step and the normal approximation
with a continuity correction beyond (a sum of thousands of bounded terms). The two-sided p-value is twice the
smaller tail, at most 1. A count moves when its p-value is at most the two-sided normal tail at the drift
rule's z (6.3e-5 at z = 4), the same level as ``silent_z`` at that z, and the measured and expected fractions
differ by at least the rule's gap. Two groups of one prompt in one step are taken as independent.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

EXACT_ROLLOUTS = 8192
MOVED_COLUMNS = (
    "expected_mean_reward",
    "reward_p",
    "expected_all_right_fraction",
    "all_right_p",
    "expected_all_wrong_fraction",
    "all_wrong_p",
    "moved",
)
# What a moved count is called in the ``moved`` column and the headline, by its direction.
NAMES = {"reward": "mean reward", "all_right": "all right", "all_wrong": "all wrong"}


def level(z_threshold: float) -> float:
    """The two-sided p-value at which a count moves: the normal tail beyond ±z."""
    return math.erfc(z_threshold / math.sqrt(2.0))


def _log_factorials(top: int) -> FloatArray:
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, top + 1, dtype=np.float64)))])


def group_pmfs(
    G: NDArray[np.int64], k_other: FloatArray, n_other: FloatArray, rate: FloatArray
) -> FloatArray:
    """Per group, P(k = j) for j = 0 … max G (zero past the group's G): hypergeometric given the prompt's
    total where ``n_other`` ≥ 1 (``k_other`` of them right, the group's own ``k`` added by the caller into
    ``k_other``: here ``k_other`` is K, ``n_other`` is N − G), else binomial at ``rate``."""
    top = int(G.max()) if G.size else 0
    j = np.arange(top + 1, dtype=np.float64)[None, :]
    g = G.astype(np.float64)[:, None]
    out = np.zeros((G.size, top + 1))
    counted = ~np.isnan(n_other) & (np.nan_to_num(n_other) >= 1)
    if counted.any():
        K = k_other[counted][:, None]
        N = n_other[counted][:, None] + g[counted]
        gc = g[counted]
        lf = _log_factorials(int(N.max()))

        def logc(a: FloatArray, b: FloatArray) -> FloatArray:
            ok = (b >= 0) & (b <= a)
            ai, bi = a.astype(np.int64), np.clip(b, 0, None).astype(np.int64)
            safe_b = np.where(ok, bi, 0)
            safe_a = np.where(ok, ai, 0)
            return np.where(ok, lf[safe_a] - lf[safe_b] - lf[safe_a - safe_b], -np.inf)

        jj = np.broadcast_to(j, (K.shape[0], top + 1))
        log_pmf = logc(np.broadcast_to(K, jj.shape), jj) + logc(
            np.broadcast_to(N - K, jj.shape), np.broadcast_to(gc, jj.shape) - jj
        )
        log_pmf = log_pmf - logc(N, gc)
        out[counted] = np.where(jj <= gc, np.exp(log_pmf), 0.0)
    rated = ~counted & ~np.isnan(rate)
    if rated.any():
        p = rate[rated][:, None]
        gr = g[rated]
        lf = _log_factorials(top)
        jj = np.broadcast_to(j, (p.shape[0], top + 1))
        gi = np.broadcast_to(gr, jj.shape).astype(np.int64)
        ji = jj.astype(np.int64)
        inside = ji <= gi
        choose = np.where(
            inside, lf[gi] - lf[np.where(inside, ji, 0)] - lf[np.where(inside, gi - ji, 0)], -np.inf
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = choose + _xlogy(jj, p) + _xlogy(np.broadcast_to(gr, jj.shape) - jj, 1.0 - p)
        out[rated] = np.where(inside, np.exp(logs), 0.0)
    return out


def _xlogy(x: FloatArray, y: FloatArray) -> FloatArray:
    """x · log y with 0 · log 0 = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0.0, x * np.log(np.broadcast_to(y, x.shape)))


def poisson_binomial(q: FloatArray) -> FloatArray:
    """P(Σ Bernoulli(q_i) = a) for a = 0 … len(q), exactly (one pass per term)."""
    dist = np.zeros(q.size + 1)
    dist[0] = 1.0
    for i, qi in enumerate(q):
        dist[1 : i + 2] = dist[1 : i + 2] * (1.0 - qi) + dist[: i + 1] * qi
        dist[0] *= 1.0 - qi
    return dist


def two_sided(dist: FloatArray, observed: int) -> float:
    """Twice the smaller tail of ``dist`` at ``observed``, at most 1."""
    lower = float(dist[: observed + 1].sum())
    upper = float(dist[observed:].sum())
    return min(1.0, 2.0 * min(lower, upper))


def _sum_p_value(pmfs: FloatArray, G: NDArray[np.int64], observed: int) -> float:
    """The two-sided p-value of Σ k against the convolution of the groups' distributions."""
    if int(G.sum()) <= EXACT_ROLLOUTS:
        dist = np.ones(1)
        for row, g in zip(pmfs, G, strict=True):
            dist = np.convolve(dist, row[: g + 1])
        return two_sided(dist, observed)
    j = np.arange(pmfs.shape[1], dtype=np.float64)
    mean = float((pmfs * j).sum())
    var = float((pmfs * j**2).sum(axis=1).sum() - ((pmfs * j).sum(axis=1) ** 2).sum())
    if var <= 0:
        return 1.0 if abs(observed - mean) < 0.5 else 0.0
    z = (abs(observed - mean) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0)))


def step_tests(group: pl.DataFrame, pass_at: int = 1) -> dict[str, float]:
    """The three p-values of one step's compared groups (columns ``G``, ``k``, ``__K``, ``__N_other``,
    ``__rate``); all right under pass@K is c > G − K."""
    G = group["G"].to_numpy().astype(np.int64)
    k = group["k"].to_numpy().astype(np.int64)
    pmfs = group_pmfs(
        G,
        group["__K"].cast(pl.Float64).fill_null(np.nan).to_numpy(),
        group["__N_other"].cast(pl.Float64).fill_null(np.nan).to_numpy(),
        group["__rate"].cast(pl.Float64).fill_null(np.nan).to_numpy(),
    )
    top = np.arange(pmfs.shape[1])[None, :] > (G - pass_at)[:, None]
    right = np.where(top & (np.arange(pmfs.shape[1])[None, :] <= G[:, None]), pmfs, 0.0).sum(axis=1)
    return {
        "reward_p": _sum_p_value(pmfs, G, int(k.sum())),
        "all_right_p": two_sided(poisson_binomial(right), int((k > G - pass_at).sum())),
        "all_wrong_p": two_sided(poisson_binomial(pmfs[:, 0]), int((k == 0).sum())),
    }


def moved_table(groups: pl.DataFrame, z_threshold: float, min_gap: float, pass_at: int = 1) -> pl.DataFrame:
    """Per step: ``step`` and :data:`MOVED_COLUMNS` from the compared groups (``expected`` not null) carrying
    ``expected_p`` (a table's rate where there are no counts), ``expected_all_right``, ``expected_all_wrong``
    and the counts behind them (``k_other``/``n_other``) where there are some."""
    # One order of the groups whatever the log's group keys, so that sums come out to the same last digit.
    compared = groups.filter(pl.col("expected").is_not_null()).sort("step", "prompt", "G", "k")
    has_counts = "n_other" in compared.columns
    other_n = pl.col("n_other") if has_counts else pl.lit(None, dtype=pl.Int64)
    other_k = pl.col("k_other") if has_counts else pl.lit(None, dtype=pl.Int64)
    counted = other_n.is_not_null() & (other_n >= 1)
    prepared = compared.select(
        "step",
        "G",
        "k",
        pl.when(counted).then(other_k + pl.col("k")).alias("__K"),
        pl.when(counted).then(other_n).alias("__N_other"),
        pl.when(counted).then(None).otherwise(pl.col("expected_p")).alias("__rate"),
        "expected_p",
        "expected_all_right",
        "expected_all_wrong",
    )
    alpha = level(z_threshold)
    rows = []
    for (step,), part in prepared.partition_by("step", as_dict=True, maintain_order=True).items():
        tests = step_tests(part, pass_at)
        G, k = part["G"].cast(pl.Float64), part["k"].cast(pl.Float64)
        measured = {
            "reward": float(k.sum() / G.sum()),
            "all_right": float((k > G - pass_at).mean()),
            "all_wrong": float((k == 0).mean()),
        }
        expected = {
            "reward": float((part["expected_p"] * G).sum() / G.sum()),
            "all_right": float(part["expected_all_right"].mean()),  # type: ignore[arg-type]
            "all_wrong": float(part["expected_all_wrong"].mean()),  # type: ignore[arg-type]
        }
        moved = [
            f"{NAMES[name]} {'up' if measured[name] > expected[name] else 'down'}"
            for name in NAMES
            if tests[f"{name}_p"] <= alpha and abs(measured[name] - expected[name]) >= min_gap
        ]
        rows.append(
            {
                "step": step,
                "expected_mean_reward": expected["reward"],
                "reward_p": tests["reward_p"],
                "expected_all_right_fraction": expected["all_right"],
                "all_right_p": tests["all_right_p"],
                "expected_all_wrong_fraction": expected["all_wrong"],
                "all_wrong_p": tests["all_wrong_p"],
                "moved": ", ".join(moved) or None,
            }
        )
    schema = {"step": pl.Int64, **dict.fromkeys(MOVED_COLUMNS[:-1], pl.Float64), "moved": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)

"""§1–2 of docs/theory.md: the group std, silent groups and DAPO's redraws."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from sigmatool.kernels._common import (
    BoolArray,
    FloatArray,
    distinct_rows,
    floats,
    hypergeometric_pmf_of,
    is_count,
    is_probability,
    option_count,
    probability_and_size,
)


def group_std(k: ArrayLike, G: ArrayLike) -> FloatArray:
    """Population std of a group of G 0/1 rewards with k right: ``σ = sqrt(k (G − k)) / G``.

    Valid for integers G ≥ 1 and 0 ≤ k ≤ G; NaN elsewhere. Returns float64. docs/theory.md §1 (reference row
    at G = 8: 0, .3307, .4330, .4841, .5, .4841, .4330, .3307, 0).

    >>> [round(s, 4) for s in group_std([0, 1, 2, 3, 4], 8).tolist()]
    [0.0, 0.3307, 0.433, 0.4841, 0.5]
    """
    k_arr, G_arr = np.broadcast_arrays(floats(k), floats(G))
    valid = is_count(G_arr, 1) & is_count(k_arr, 0) & (k_arr <= G_arr)
    with np.errstate(invalid="ignore"):
        sigma = np.sqrt(k_arr * (G_arr - k_arr)) / G_arr
    return np.asarray(np.where(valid, sigma, np.nan), dtype=np.float64)


def bessel_factor(G: ArrayLike) -> FloatArray:
    """``sqrt((G − 1) / G)``: the factor on the update when the std divides by G − 1 (torch ``.std()``).

    With Bessel's std the GRPO update is ``sqrt((G − 1)/G) · σ (s̄₊ − s̄₋)``. Valid for integers G ≥ 1
    (0 at G = 1); NaN elsewhere. Returns float64. docs/theory.md §1.

    >>> round(float(bessel_factor(8)), 4)
    0.9354
    """
    G_arr = floats(G)
    valid = is_count(G_arr, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.sqrt((G_arr - 1.0) / G_arr)
    return np.asarray(np.where(valid, factor, np.nan), dtype=np.float64)


def all_right_probability(p: ArrayLike, G: ArrayLike) -> FloatArray:
    """Probability that all G answers are right: ``p^G``.

    Valid for p in [0, 1] and integers G ≥ 1; NaN elsewhere. Underflow to 0 at large G is the correct
    float64 answer. Returns float64. docs/theory.md §2.

    >>> round(float(all_right_probability(0.5, 4)), 4)
    0.0625
    """
    p_arr, G_arr, valid = probability_and_size(p, G)
    with np.errstate(invalid="ignore"):
        prob = np.power(p_arr, G_arr)
    return np.asarray(np.where(valid, prob, np.nan), dtype=np.float64)


def all_wrong_probability(p: ArrayLike, G: ArrayLike) -> FloatArray:
    """Probability that all G answers are wrong: ``(1 − p)^G``, evaluated as ``exp(G log1p(−p))``.

    Valid for p in [0, 1] and integers G ≥ 1; NaN elsewhere. Returns float64. docs/theory.md §2.

    >>> round(float(all_wrong_probability(0.1, 8)), 4)
    0.4305
    """
    p_arr, G_arr, valid = probability_and_size(p, G)
    with np.errstate(invalid="ignore", divide="ignore"):
        prob = np.exp(G_arr * np.log1p(-p_arr))
    return np.asarray(np.where(valid, prob, np.nan), dtype=np.float64)


def silent_probability(p: ArrayLike, G: ArrayLike) -> FloatArray:
    """Probability that a group is silent (σ = 0): ``P_silent(p, G) = p^G + (1 − p)^G``.

    Valid for p in [0, 1] and integers G ≥ 1; NaN elsewhere. 1 at p ∈ {0, 1}; non-increasing in G.
    Returns float64. docs/theory.md §2.

    >>> round(float(silent_probability(0.5, 8)), 4)
    0.0078
    """
    return all_right_probability(p, G) + all_wrong_probability(p, G)


def unbiased_inputs(
    k: ArrayLike, n: ArrayLike, G: ArrayLike
) -> tuple[BoolArray, FloatArray, FloatArray, FloatArray]:
    k_arr, n_arr, G_arr = np.broadcast_arrays(floats(k), floats(n), floats(G))
    valid = is_count(n_arr, 1) & is_count(k_arr, 0) & (k_arr <= n_arr) & is_count(G_arr, 1) & (G_arr <= n_arr)
    return np.asarray(valid, dtype=np.bool_), k_arr, n_arr, G_arr


# Up to this many bits in C(n, G), the ratio of two binomial coefficients is taken from the exact integers
# (Python's int / int is correctly rounded), with no import of scipy.stats (0.6 s): n = 64 needs 61 bits,
# n = 10^4 with G = 1,000 about 4,700. Larger ones go through the binomial pmfs.
_EXACT_BITS = 1 << 16


def _choose_ratio(a: ArrayLike, n: ArrayLike, G: ArrayLike) -> FloatArray:
    """``C(a, G) / C(n, G)`` (0 when a < G), NaN unless 0 ≤ a ≤ n and 1 ≤ G ≤ n are integers; each distinct
    (a, n, G) once, correctly rounded where C(n, G) has at most :data:`_EXACT_BITS` bits."""
    valid, a_arr, n_arr, G_arr = unbiased_inputs(a, n, G)
    out = np.full(a_arr.shape, np.nan)
    if not valid.any():
        return out
    (a_u, n_u, G_u), inverse = distinct_rows(a_arr[valid], n_arr[valid], G_arr[valid])
    a_v, n_v, G_v = (x.astype(np.int64) for x in (a_u, n_u, G_u))
    ratio = np.zeros(a_v.shape, dtype=np.float64)
    some = a_v >= G_v
    exact = some & (G_v * np.log2(np.maximum(n_v, 2)) <= _EXACT_BITS)
    for i in np.flatnonzero(exact).tolist():
        ratio[i] = math.comb(int(a_v[i]), int(G_v[i])) / math.comb(int(n_v[i]), int(G_v[i]))
    # C(a, G) / C(n, G) is the probability that all G drawn are among the a: Hyp(G; n, a, G).
    rest = some & ~exact
    if rest.any():
        ratio[rest] = hypergeometric_pmf_of(G_v[rest], n_v[rest], a_v[rest], G_v[rest])
    out[valid] = ratio[inverse]
    return out


def all_right_probability_unbiased(k: ArrayLike, n: ArrayLike, G: ArrayLike) -> FloatArray:
    """Unbiased estimate of ``p^G`` from k right of n samples: ``C(k, G) / C(n, G)``.

    The probability that G of the n logged samples, drawn without replacement, are all right. Valid for
    integers 0 ≤ k ≤ n and 1 ≤ G ≤ n; NaN elsewhere, including G > n (no unbiased estimate exists).
    Returns float64. docs/theory.md §2.

    >>> round(float(all_right_probability_unbiased(3, 4, 2)), 4)
    0.5
    """
    return _choose_ratio(k, n, G)


def all_wrong_probability_unbiased(k: ArrayLike, n: ArrayLike, G: ArrayLike) -> FloatArray:
    """Unbiased estimate of ``(1 − p)^G`` from k right of n samples: ``C(n − k, G) / C(n, G)``.

    Valid for integers 0 ≤ k ≤ n and 1 ≤ G ≤ n; NaN elsewhere, including G > n. Returns float64.
    docs/theory.md §2.

    >>> round(float(all_wrong_probability_unbiased(1, 4, 2)), 4)
    0.5
    """
    k_arr, n_arr = np.broadcast_arrays(floats(k), floats(n))
    # k > n must stay NaN rather than become a negative count that happens to be checked as such.
    wrong = np.where(is_count(k_arr, 0) & (k_arr <= n_arr), n_arr - k_arr, np.nan)
    return _choose_ratio(wrong, n_arr, G)


def silent_probability_unbiased(k: ArrayLike, n: ArrayLike, G: ArrayLike) -> FloatArray:
    """Unbiased estimate of ``P_silent(p, G)`` from k right of n samples.

    ``[C(k, G) + C(n − k, G)] / C(n, G)``: the probability that a size-G draw without replacement from the
    n logged samples is all right or all wrong. Valid for integers 0 ≤ k ≤ n and 1 ≤ G ≤ n; NaN elsewhere,
    including G > n (no unbiased estimate exists). Returns float64. docs/theory.md §2 (Big-Math, n = 64:
    G = 4/8/16 → 58.59 / 43.07 / 30.19 %).

    >>> round(float(silent_probability_unbiased(32, 64, 8)), 4)
    0.0048
    """
    return all_right_probability_unbiased(k, n, G) + all_wrong_probability_unbiased(k, n, G)


def hypergeometric_pmf(j: ArrayLike, n: ArrayLike, k: ArrayLike, G: ArrayLike) -> FloatArray:
    """Probability that a size-G draw without replacement from n samples, k of them right, holds j right.

    ``Hyp(j; n, k, G) = C(k, j) C(n − k, G − j) / C(n, G)``, evaluated as a ratio of binomial pmfs (as R's
    dhyper), so it keeps ~1e-13 relative accuracy for any n. Valid for
    integers 0 ≤ k ≤ n, 1 ≤ G ≤ n and integer j (0 outside max(0, G − n + k) ≤ j ≤ min(k, G)); NaN
    elsewhere. Returns float64. docs/theory.md §2.

    >>> [round(x, 4) for x in hypergeometric_pmf([0, 1, 2], 4, 2, 2).tolist()]
    [0.1667, 0.6667, 0.1667]
    """
    j_arr, k_arr, n_arr, G_arr = np.broadcast_arrays(floats(j), floats(k), floats(n), floats(G))
    valid, _, _, _ = unbiased_inputs(k_arr, n_arr, G_arr)
    valid &= np.isfinite(j_arr) & (j_arr == np.floor(j_arr))
    out = np.full(j_arr.shape, np.nan)
    j_v = j_arr[valid]
    k_v = k_arr[valid].astype(np.int64)
    n_v = n_arr[valid].astype(np.int64)
    G_v = G_arr[valid].astype(np.int64)
    support = (j_v >= np.maximum(0, G_v - (n_v - k_v))) & (j_v <= np.minimum(k_v, G_v))
    j_int = np.clip(j_v, np.maximum(0, G_v - (n_v - k_v)), np.minimum(k_v, G_v)).astype(np.int64)
    out[valid] = np.where(support, hypergeometric_pmf_of(j_int, n_v, k_v, G_v), 0.0)
    return out


def dapo_expected_draws(p_silent: ArrayLike, cap: int | None = None) -> FloatArray:
    """Expected group draws until DAPO gets a non-silent group, for silent probability P per draw.

    Uncapped: ``1 / (1 − P)`` (inf at P = 1). With a cap of T draws: ``1 + P + … + P^(T−1) =
    (1 − P^T) / (1 − P)`` (T at P = 1), evaluated as ``−expm1(T log P) / (1 − P)`` for accuracy near
    P = 1. Over a dataset refilled from fresh prompts pass the mean P. Valid for P in [0, 1]; NaN
    elsewhere. Returns float64. Raises ValueError unless cap is None or an integer ≥ 1. docs/theory.md §2.

    >>> round(float(dapo_expected_draws(0.5)), 4), round(float(dapo_expected_draws(0.5, cap=2)), 4)
    (2.0, 1.5)
    """
    P = floats(p_silent)
    valid = is_probability(P)
    with np.errstate(divide="ignore", invalid="ignore"):
        if cap is None:
            draws = 1.0 / (1.0 - P)
        else:
            T = option_count(cap, "cap")
            draws = np.where(P == 1.0, float(T), -np.expm1(T * np.log(P)) / (1.0 - P))
    return np.asarray(np.where(valid, draws, np.nan), dtype=np.float64)


def dapo_still_silent_probability(p_silent: ArrayLike, cap: int) -> FloatArray:
    """Probability that DAPO's group is still silent after a cap of T draws: ``P^T``.

    Valid for P in [0, 1]; NaN elsewhere. Returns float64. Raises ValueError unless cap is an integer ≥ 1.
    docs/theory.md §2.

    >>> round(float(dapo_still_silent_probability(0.5, 4)), 4)
    0.0625
    """
    T = option_count(cap, "cap")
    P = floats(p_silent)
    with np.errstate(invalid="ignore"):
        value = np.power(P, T)
    return np.asarray(np.where(is_probability(P), value, np.nan), dtype=np.float64)

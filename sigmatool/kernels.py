"""Numerical kernels: the quantities of docs/theory.md as pure numpy functions of (p, G) or (k, n, G).

Every kernel takes scalars or arrays, broadcasts them, and returns a float64 ndarray (0-d for scalar
input). An element outside the domain (a probability outside [0, 1], NaN, a non-integer or negative count,
k > n, G < 1) becomes NaN; only a bad *option* (``std``, ``cap``, ``max_G``, ``min_G``) raises
``ValueError``. Kernels that sum over group outcomes evaluate each distinct input once.

Notation: ``p`` success probability; ``G`` group size; ``k`` right answers out of ``n`` logged samples
(``p̂ = k / n``); ``σ = sqrt(k (G − k)) / G`` the population group std.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, localcontext

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "all_right_probability",
    "all_right_probability_unbiased",
    "all_wrong_probability",
    "all_wrong_probability_unbiased",
    "bessel_factor",
    "dapo_expected_draws",
    "dapo_still_silent_probability",
    "drgrpo_fidelity",
    "drgrpo_weight_limit",
    "expected_sigma",
    "expected_sigma_squared",
    "expected_sigma_squared_unbiased",
    "expected_sigma_unbiased",
    "fidelity",
    "fidelity_expansion",
    "group_size_law",
    "group_std",
    "grpo_weight_limit",
    "hypergeometric_pmf",
    "silent_group_size",
    "silent_probability",
    "silent_probability_unbiased",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

STD_CONVENTIONS = ("population", "bessel")

# Kernels that sum over the outcomes of a group build a (rows × outcomes) matrix; above this G the
# matrix of even one row would not fit in memory, so such G are treated as out of domain.
_MAX_SUMMED_G = 2**31
# Elements per block of that matrix: bounds memory at a few tens of MB whatever the input size.
_BLOCK = 1 << 21
# Outcomes further than this from the mean carry mass below e^-90 (Bernstein's inequality), far
# under float64 resolution relative to the terms kept.
_WINDOW_SDS = 40.0
_WINDOW_PAD = 60.0
# Up to this G, E[σ] sums C(G, k) p^k q^(G−k) directly (relative error ~G·1e-16); above it, Loader's pmf.
_DIRECT_MAX_G = 64
# Loader's Stirling-error table: exact (40-digit decimal) for m ≤ 15, its 5-term series above (error < 1e-16).
_STIRLING_SERIES_FROM = 16
_TWO_PI = Decimal("6.283185307179586476925286766559005768394")


def _stirling_error_exact(m: int) -> float:
    if m == 0:
        return 0.0
    with localcontext() as context:
        context.prec = 40
        x = Decimal(m)
        return float(Decimal(math.factorial(m)).ln() - (x + Decimal("0.5")) * x.ln() + x - _TWO_PI.ln() / 2)


_STIRLING_ERROR_TABLE = np.array([_stirling_error_exact(m) for m in range(_STIRLING_SERIES_FROM)])


# --------------------------------------------------------------------------------------------------
# Domain helpers


def _floats(x: ArrayLike) -> FloatArray:
    return np.asarray(x, dtype=np.float64)


def _is_probability(x: FloatArray) -> BoolArray:
    return np.asarray((x >= 0.0) & (x <= 1.0), dtype=np.bool_)


def _is_count(x: FloatArray, minimum: float) -> BoolArray:
    """True where x is a finite integer ≥ minimum."""
    return np.asarray(np.isfinite(x) & (x == np.floor(x)) & (x >= minimum), dtype=np.bool_)


def _bessel(std: str) -> bool:
    if std not in STD_CONVENTIONS:
        raise ValueError(f"std must be 'population' or 'bessel', got {std!r}")
    return std == "bessel"


def _option_count(value: int, name: str) -> int:
    """An integer option ≥ 1 (an integral float is accepted), else ValueError."""
    try:
        as_int = int(value)
        ok = not isinstance(value, bool) and as_int == value and as_int >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be an integer ≥ 1, got {value!r}")
    return as_int


def _stirling_error(m: IntArray) -> FloatArray:
    """δ(m) = log(m!) − [(m + ½) log m − m + ½ log 2π] for integers m ≥ 1 (0 at m = 0, never used)."""
    out = _STIRLING_ERROR_TABLE[np.minimum(m, _STIRLING_SERIES_FROM - 1)]
    big = m >= _STIRLING_SERIES_FROM
    if big.any():
        x = m[big].astype(np.float64)
        inv2 = 1.0 / (x * x)
        out[big] = (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (1 / 1680 - inv2 / 1188)))) / x
    return np.asarray(out, dtype=np.float64)


def _deviance(x: FloatArray, mean: FloatArray) -> FloatArray:
    """Loader's bd0(x, M) = x log(x / M) + M − x ≥ 0 for x > 0 and M ≥ 0 of one shape."""
    # M may be subnormal (tiny p): x / M overflows to inf and the weight correctly to 0.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = x * np.log(x / mean) + mean - x
        v = (x - mean) / (x + mean)
    near = np.abs(x - mean) < 0.1 * (x + mean)
    if near.any():
        # Near x = M the direct form cancels; with v = (x − M)/(x + M), |v| < 0.1:
        # bd0 = (x − M) v + 2x Σ_{j≥1} v^(2j+1) / (2j + 1), and 12 terms reach float64 precision.
        v_near, x_near = v[near], x[near]
        v2 = v_near * v_near
        term = 2.0 * x_near * v_near
        series = (x_near - mean[near]) * v_near
        for j in range(1, 13):
            term = term * v2
            series = series + term / (2 * j + 1)
        direct[near] = series
    return np.asarray(direct, dtype=np.float64)


def _log_binomial_pmf(x: IntArray, n: IntArray, p: FloatArray, q: FloatArray) -> FloatArray:
    """log Binomial(x; n, p) for integers 0 ≤ x ≤ n, with q = 1 − p passed separately."""
    # Loader's saddle-point form (C. Loader 2000, "Fast and accurate computation of binomial
    # probabilities"; R's dbinom) keeps ~1e-15 relative accuracy at any n, where differences of
    # log-factorials of size ~n log n would lose digits as n grows.
    x, n, p, q = np.broadcast_arrays(x, n, p, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.where(q < 0.5, np.log1p(-q), np.log(p))
        log_q = np.where(p < 0.5, np.log1p(-p), np.log(q))
        xf = x.astype(np.float64)
        nf = n.astype(np.float64)
        inner = 0 < x
        inner &= x < n
        xs = np.where(inner, x, 1)
        ns = np.where(inner, n, 2)
        general = (
            _stirling_error(ns)
            - _stirling_error(xs)
            - _stirling_error(ns - xs)
            - _deviance(xf, nf * p)
            - _deviance(nf - xf, nf * q)
            + 0.5 * np.log(nf / (2.0 * np.pi * xf * (nf - xf)))
        )
        edge = np.where(x == 0, np.where(n == 0, 0.0, nf * log_q), nf * log_p)
    return np.asarray(np.where(inner, general, edge), dtype=np.float64)


def _log_hypergeometric_pmf(j: IntArray, n: IntArray, k: IntArray, G: IntArray) -> FloatArray:
    """log Hyp(j; n, k, G) for j in its support, as Bin(j; k, G/n) Bin(G − j; n − k, G/n) / Bin(G; n, G/n)."""
    # The factorisation of R's dhyper: each factor is a Loader pmf, accurate at any n.
    p = G / n
    q = (n - G) / n
    return (
        _log_binomial_pmf(j, k, p, q) + _log_binomial_pmf(G - j, n - k, p, q) - _log_binomial_pmf(G, n, p, q)
    )


def _distinct_rows(*columns: FloatArray) -> tuple[list[FloatArray], IntArray]:
    """Distinct rows of equal-length 1-D columns, and the index of each input row among them."""
    order = np.lexsort(columns[::-1])
    sorted_columns = [c[order] for c in columns]
    new = np.zeros(order.size, dtype=np.bool_)
    new[:1] = True
    for c in sorted_columns:
        new[1:] |= c[1:] != c[:-1]
    inverse = np.empty(order.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return [c[new] for c in sorted_columns], inverse


def _row_sum(x: FloatArray) -> FloatArray:
    """Left-to-right sum of each row of a 2-D array.

    Sequential on purpose: a row's result depends on its own terms only, not on the other rows of the
    batch nor on the zero padding after them, so a value is the same bits in every call (pairwise sums
    and BLAS products regroup terms with the batch's shape).
    """
    return np.asarray(np.cumsum(x, axis=1)[:, -1], dtype=np.float64)


def _window_mean(
    lo: IntArray,
    hi: IntArray,
    log_weight: Callable[[IntArray, IntArray], FloatArray],
    value: Callable[[IntArray, IntArray], FloatArray],
) -> FloatArray:
    """Per row r, Σ_k w_r(k) v_r(k) / Σ_k w_r(k) over integers k in [lo_r, hi_r]; callbacks get (rows, k)."""
    # Normalising by Σ w makes the sum immune to per-row constants and to the rounding they share;
    # rows go in blocks of similar width so one wide row does not pad thousands of narrow ones.
    width = hi - lo + 1
    out = np.empty(lo.shape, dtype=np.float64)
    bucket = np.ceil(np.log2(width)).astype(np.int64)
    for b in np.unique(bucket):
        rows_in_bucket = np.flatnonzero(bucket == b)
        cols = int(width[rows_in_bucket].max())
        offsets = np.arange(cols, dtype=np.int64)
        step = max(1, _BLOCK // cols)
        for start in range(0, rows_in_bucket.size, step):
            rows = rows_in_bucket[start : start + step]
            top = hi[rows, None]
            k = lo[rows, None] + offsets
            inside = k <= top
            k = np.minimum(k, top)
            log_w = np.where(inside, log_weight(rows, k), -np.inf)
            w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
            out[rows] = _row_sum(w * value(rows, k)) / _row_sum(w)
    return out


def _window(center: FloatArray, sd: FloatArray, lo: IntArray, hi: IntArray) -> tuple[IntArray, IntArray]:
    """The support [lo, hi] narrowed to center ± (40 sd + 60)."""
    half = _WINDOW_SDS * sd + _WINDOW_PAD
    low = np.maximum(lo, np.floor(center - half).astype(np.int64))
    high = np.minimum(hi, np.ceil(center + half).astype(np.int64))
    return low, high


def _sigma_of(k: IntArray, G: IntArray) -> FloatArray:
    return np.asarray(np.sqrt((k * (G - k)).astype(np.float64)) / G, dtype=np.float64)


# --------------------------------------------------------------------------------------------------
# §1 The identity


def group_std(k: ArrayLike, G: ArrayLike) -> FloatArray:
    """Population std of a group of G 0/1 rewards with k right: ``σ = sqrt(k (G − k)) / G``.

    Valid for integers G ≥ 1 and 0 ≤ k ≤ G; NaN elsewhere. Returns float64. docs/theory.md §1 (reference row
    at G = 8: 0, .3307, .4330, .4841, .5, .4841, .4330, .3307, 0).

    >>> [round(s, 4) for s in group_std([0, 1, 2, 3, 4], 8).tolist()]
    [0.0, 0.3307, 0.433, 0.4841, 0.5]
    """
    k_arr, G_arr = np.broadcast_arrays(_floats(k), _floats(G))
    valid = _is_count(G_arr, 1) & _is_count(k_arr, 0) & (k_arr <= G_arr)
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
    G_arr = _floats(G)
    valid = _is_count(G_arr, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.sqrt((G_arr - 1.0) / G_arr)
    return np.asarray(np.where(valid, factor, np.nan), dtype=np.float64)


# --------------------------------------------------------------------------------------------------
# §2 Silent groups


def all_right_probability(p: ArrayLike, G: ArrayLike) -> FloatArray:
    """Probability that all G answers are right: ``p^G``.

    Valid for p in [0, 1] and integers G ≥ 1; NaN elsewhere. Underflow to 0 at large G is the correct
    float64 answer. Returns float64. docs/theory.md §2.

    >>> round(float(all_right_probability(0.5, 4)), 4)
    0.0625
    """
    p_arr, G_arr = np.broadcast_arrays(_floats(p), _floats(G))
    valid = _is_probability(p_arr) & _is_count(G_arr, 1)
    with np.errstate(invalid="ignore"):
        prob = np.power(p_arr, G_arr)
    return np.asarray(np.where(valid, prob, np.nan), dtype=np.float64)


def all_wrong_probability(p: ArrayLike, G: ArrayLike) -> FloatArray:
    """Probability that all G answers are wrong: ``(1 − p)^G``, evaluated as ``exp(G log1p(−p))``.

    Valid for p in [0, 1] and integers G ≥ 1; NaN elsewhere. Returns float64. docs/theory.md §2.

    >>> round(float(all_wrong_probability(0.1, 8)), 4)
    0.4305
    """
    p_arr, G_arr = np.broadcast_arrays(_floats(p), _floats(G))
    valid = _is_probability(p_arr) & _is_count(G_arr, 1)
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


def _unbiased_inputs(
    k: ArrayLike, n: ArrayLike, G: ArrayLike
) -> tuple[BoolArray, FloatArray, FloatArray, FloatArray]:
    k_arr, n_arr, G_arr = np.broadcast_arrays(_floats(k), _floats(n), _floats(G))
    valid = (
        _is_count(n_arr, 1) & _is_count(k_arr, 0) & (k_arr <= n_arr) & _is_count(G_arr, 1) & (G_arr <= n_arr)
    )
    return np.asarray(valid, dtype=np.bool_), k_arr, n_arr, G_arr


def _choose_ratio(a: ArrayLike, n: ArrayLike, G: ArrayLike) -> FloatArray:
    """``C(a, G) / C(n, G)`` (0 when a < G), NaN unless 0 ≤ a ≤ n and 1 ≤ G ≤ n are integers."""
    valid, a_arr, n_arr, G_arr = _unbiased_inputs(a, n, G)
    out = np.full(a_arr.shape, np.nan)
    a_v = a_arr[valid].astype(np.int64)
    n_v = n_arr[valid].astype(np.int64)
    G_v = G_arr[valid].astype(np.int64)
    some = a_v >= G_v
    # C(a, G) / C(n, G) is the probability that all G drawn are among the a: Hyp(G; n, a, G).
    log_ratio = _log_hypergeometric_pmf(G_v, n_v, np.maximum(a_v, G_v), G_v)
    out[valid] = np.where(some, np.exp(log_ratio), 0.0)
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
    k_arr, n_arr = np.broadcast_arrays(_floats(k), _floats(n))
    # k > n must stay NaN rather than become a negative count that happens to be checked as such.
    wrong = np.where(_is_count(k_arr, 0) & (k_arr <= n_arr), n_arr - k_arr, np.nan)
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

    ``Hyp(j; n, k, G) = C(k, j) C(n − k, G − j) / C(n, G)``, evaluated as a ratio of Loader saddle-point
    binomial pmfs (as R's dhyper), so it keeps ~1e-14 relative accuracy for any n. Valid for
    integers 0 ≤ k ≤ n, 1 ≤ G ≤ n and integer j (0 outside max(0, G − n + k) ≤ j ≤ min(k, G)); NaN
    elsewhere. Returns float64. docs/theory.md §2.

    >>> [round(x, 4) for x in hypergeometric_pmf([0, 1, 2], 4, 2, 2).tolist()]
    [0.1667, 0.6667, 0.1667]
    """
    j_arr, k_arr, n_arr, G_arr = np.broadcast_arrays(_floats(j), _floats(k), _floats(n), _floats(G))
    valid, _, _, _ = _unbiased_inputs(k_arr, n_arr, G_arr)
    valid &= np.isfinite(j_arr) & (j_arr == np.floor(j_arr))
    out = np.full(j_arr.shape, np.nan)
    j_v = j_arr[valid]
    k_v = k_arr[valid].astype(np.int64)
    n_v = n_arr[valid].astype(np.int64)
    G_v = G_arr[valid].astype(np.int64)
    support = (j_v >= np.maximum(0, G_v - (n_v - k_v))) & (j_v <= np.minimum(k_v, G_v))
    j_int = np.clip(j_v, np.maximum(0, G_v - (n_v - k_v)), np.minimum(k_v, G_v)).astype(np.int64)
    log_pmf = _log_hypergeometric_pmf(j_int, n_v, k_v, G_v)
    out[valid] = np.where(support, np.exp(log_pmf), 0.0)
    return out


# --------------------------------------------------------------------------------------------------
# §3 Expected update and fidelity


def _binomial_expected_sigma(p: FloatArray, G: IntArray) -> FloatArray:
    """E[σ] for 1-D p strictly inside (0, 1) and G ≥ 2, each distinct (p, G) pair evaluated once."""
    (p_u, G_float), inverse = _distinct_rows(p, G.astype(np.float64))
    G_u = G_float.astype(np.int64)
    q_u = 1.0 - p_u
    out = np.empty(p_u.shape, dtype=np.float64)
    small = G_u <= _DIRECT_MAX_G
    # Small groups, the common case: C(G, k) p^k q^(G−k) directly, one matrix-vector product per G.
    for g in np.unique(G_u[small]).tolist():
        rows = np.flatnonzero(G_u == g)
        k = np.arange(g + 1, dtype=np.int64)
        coefficients = np.array([math.comb(g, i) for i in range(g + 1)], dtype=np.float64)
        pmf = coefficients * np.power(p_u[rows, None], k) * np.power(q_u[rows, None], g - k)
        out[rows] = _row_sum(pmf * _sigma_of(k, np.int64(g)))
    large = np.flatnonzero(~small)
    if large.size:
        p_l, q_l, G_l = p_u[large], q_u[large], G_u[large]
        lo, hi = _window(G_l * p_l, np.sqrt(G_l * p_l * q_l), np.zeros_like(G_l), G_l)

        def log_weight(rows: IntArray, k: IntArray) -> FloatArray:
            return _log_binomial_pmf(k, G_l[rows, None], p_l[rows, None], q_l[rows, None])

        def value(rows: IntArray, k: IntArray) -> FloatArray:
            return _sigma_of(k, G_l[rows, None])

        out[large] = _window_mean(lo, hi, log_weight, value)
    return out[inverse]


def expected_sigma(p: ArrayLike, G: ArrayLike, std: str = "population") -> FloatArray:
    """Exact expected group std ``E[σ](p, G)`` with k ~ Binomial(G, p): the per-prompt GRPO weight.

    ``E[σ](p, G) = (1/G) Σ_{k=1}^{G−1} C(G, k) p^k (1 − p)^(G−k) sqrt(k (G − k))``, times ``bessel_factor(G)``
    when ``std="bessel"``. For G ≤ 64 the pmf is summed directly; above, it is evaluated in log space
    (Loader's saddle-point form) and the sum restricted to k within 40 sd + 60 of Gp, the rest carrying
    relative mass < e^-90. Relative error ~1e-14 at any G up to 2^31 (checked against 50-digit sums at
    G = 5000). Each distinct (p, G) is evaluated once: 10^5 distinct p at G = 8 take tens of ms.
    Valid for p in [0, 1] and integers 1 ≤ G ≤ 2^31 (p and G broadcast); NaN elsewhere; 0 at
    p ∈ {0, 1} and at G = 1. Returns float64. Raises ValueError unless std is "population" or "bessel".
    docs/theory.md §3; limit ``sqrt(p (1 − p))`` as G → ∞.

    >>> round(float(expected_sigma(0.5, 8)), 4)
    0.4639
    >>> round(float(expected_sigma(0.5, 8, std="bessel")), 4)
    0.434
    """
    bessel = _bessel(std)
    p_arr, G_arr = np.broadcast_arrays(_floats(p), _floats(G))
    valid = _is_probability(p_arr) & _is_count(G_arr, 1) & (G_arr <= _MAX_SUMMED_G)
    out = np.where(valid, 0.0, np.nan)
    live = valid & (p_arr > 0.0) & (p_arr < 1.0) & (G_arr >= 2)
    if live.any():
        out[live] = _binomial_expected_sigma(p_arr[live], G_arr[live].astype(np.int64))
    if bessel:
        out = out * bessel_factor(G_arr)
    return np.asarray(out, dtype=np.float64)


def expected_sigma_unbiased(k: ArrayLike, n: ArrayLike, G: ArrayLike, std: str = "population") -> FloatArray:
    """Unbiased estimate of ``E[σ](p, G)`` from k right of n samples (a size-G draw without replacement).

    ``Σ_j Hyp(j; n, k, G) · sqrt(j (G − j)) / G``, times ``bessel_factor(G)`` when ``std="bessel"``, summed
    as ``expected_sigma`` sums (log space, window of 40 sd + 60). Each distinct (k, n, G) is evaluated once.
    Valid for integers 0 ≤ k ≤ n and 1 ≤ G ≤ min(n, 2^31); NaN elsewhere, including G > n (no unbiased
    estimate exists). Returns float64. Raises ValueError unless std is "population" or "bessel".
    docs/theory.md §2–3.

    >>> round(float(expected_sigma_unbiased(2, 4, 2)), 4)
    0.3333
    """
    bessel = _bessel(std)
    valid, k_arr, n_arr, G_arr = _unbiased_inputs(k, n, G)
    valid &= G_arr <= _MAX_SUMMED_G
    out = np.where(valid, 0.0, np.nan)
    if valid.any():
        triples, inverse = _distinct_rows(k_arr[valid], n_arr[valid], G_arr[valid])
        k_u, n_u, G_u = (column.astype(np.int64) for column in triples)
        q = k_u / n_u
        # The binomial sd bounds the hypergeometric one, so the window stays safe.
        lo, hi = _window(
            G_u * q, np.sqrt(G_u * q * (1.0 - q)), np.maximum(0, G_u - (n_u - k_u)), np.minimum(k_u, G_u)
        )

        def log_weight(rows: IntArray, j: IntArray) -> FloatArray:
            return _log_hypergeometric_pmf(j, n_u[rows, None], k_u[rows, None], G_u[rows, None])

        def value(rows: IntArray, j: IntArray) -> FloatArray:
            return _sigma_of(j, G_u[rows, None])

        out[valid] = _window_mean(lo, hi, log_weight, value)[inverse]
    if bessel:
        out = out * bessel_factor(G_arr)
    return np.asarray(out, dtype=np.float64)


def expected_sigma_squared(p: ArrayLike, G: ArrayLike) -> FloatArray:
    """Exact expected group variance ``E[σ²](p, G) = p (1 − p) (1 − 1/G)``: the per-prompt Dr. GRPO weight.

    Valid for p in [0, 1] and integers G ≥ 1; NaN elsewhere. Returns float64. docs/theory.md §3; limit
    ``p (1 − p)`` as G → ∞.

    >>> round(float(expected_sigma_squared(0.5, 8)), 4)
    0.2188
    """
    p_arr, G_arr = np.broadcast_arrays(_floats(p), _floats(G))
    valid = _is_probability(p_arr) & _is_count(G_arr, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = p_arr * (1.0 - p_arr) * (1.0 - 1.0 / G_arr)
    return np.asarray(np.where(valid, value, np.nan), dtype=np.float64)


def expected_sigma_squared_unbiased(k: ArrayLike, n: ArrayLike, G: ArrayLike) -> FloatArray:
    """Unbiased estimate of ``E[σ²](p, G)`` from k right of n samples.

    ``Σ_j Hyp(j; n, k, G) j (G − j) / G² = k (n − k) / (n (n − 1)) · (1 − 1/G)`` (0 at G = 1). Valid for
    integers 0 ≤ k ≤ n and 1 ≤ G ≤ n; NaN elsewhere, including G > n. Returns float64. docs/theory.md §2–3.

    >>> round(float(expected_sigma_squared_unbiased(2, 4, 2)), 4)
    0.1667
    """
    valid, k_arr, n_arr, G_arr = _unbiased_inputs(k, n, G)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = k_arr * (n_arr - k_arr) / (n_arr * (n_arr - 1.0)) * (1.0 - 1.0 / G_arr)
    value = np.where(G_arr == 1, 0.0, value)
    return np.asarray(np.where(valid, value, np.nan), dtype=np.float64)


def grpo_weight_limit(p: ArrayLike) -> FloatArray:
    """GRPO's large-group per-prompt weight ``lim_{G→∞} E[σ] = sqrt(p (1 − p))``.

    Its inverse ``1/sqrt(p (1 − p))`` is GRPO's difficulty weight (2 at p = ½, 4.6 at p = 0.05). Valid for p
    in [0, 1]; NaN elsewhere. Returns float64. docs/theory.md §3.

    >>> round(float(grpo_weight_limit(0.5)), 4)
    0.5
    """
    p_arr = _floats(p)
    with np.errstate(invalid="ignore"):
        value = np.sqrt(p_arr * (1.0 - p_arr))
    return np.asarray(np.where(_is_probability(p_arr), value, np.nan), dtype=np.float64)


def drgrpo_weight_limit(p: ArrayLike) -> FloatArray:
    """Dr. GRPO's large-group per-prompt weight ``lim_{G→∞} E[σ²] = p (1 − p)``.

    Valid for p in [0, 1]; NaN elsewhere. Returns float64. docs/theory.md §3.

    >>> round(float(drgrpo_weight_limit(0.05)), 4)
    0.0475
    """
    p_arr = _floats(p)
    return np.asarray(np.where(_is_probability(p_arr), p_arr * (1.0 - p_arr), np.nan), dtype=np.float64)


def fidelity(p: ArrayLike, G: ArrayLike, std: str = "population") -> FloatArray:
    """Fidelity ``φ(G, p) = E[σ](p, G) / sqrt(p (1 − p))``: the share of the large-group update realised.

    Rises with G towards 1 (population std). Valid for p in (0, 1) and integers 1 ≤ G ≤ 2^31; NaN
    elsewhere, including p ∈ {0, 1} where it is 0/0. Returns float64. Raises ValueError unless std is
    "population" or "bessel". docs/theory.md §3: φ(8, 0.5) = 0.9278, φ(8, 0.05) = 0.5390.

    >>> round(float(fidelity(0.5, 8)), 4), round(float(fidelity(0.05, 8)), 4)
    (0.9278, 0.539)
    """
    p_arr = _floats(p)
    sigma = expected_sigma(p_arr, G, std)
    interior = (p_arr > 0.0) & (p_arr < 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = sigma / np.sqrt(p_arr * (1.0 - p_arr))
    return np.asarray(np.where(interior, ratio, np.nan), dtype=np.float64)


def fidelity_expansion(p: ArrayLike, G: ArrayLike) -> FloatArray:
    """Large-G expansion of the fidelity: ``φ ≈ 1 − 1/(8 G p (1 − p))``, poor near p = 0 and 1.

    Valid for p in (0, 1) and integers G ≥ 1; NaN elsewhere (as ``fidelity``, it is undefined at p ∈ {0, 1}).
    Returns float64. docs/theory.md §3: 0.6711 at (G, p) = (8, 0.05), where the exact value is 0.5390.

    >>> round(float(fidelity_expansion(0.05, 8)), 4)
    0.6711
    """
    p_arr, G_arr = np.broadcast_arrays(_floats(p), _floats(G))
    valid = (p_arr > 0.0) & (p_arr < 1.0) & _is_count(G_arr, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = 1.0 - 1.0 / (8.0 * G_arr * p_arr * (1.0 - p_arr))
    return np.asarray(np.where(valid, value, np.nan), dtype=np.float64)


def drgrpo_fidelity(G: ArrayLike) -> FloatArray:
    """Dr. GRPO's fidelity ``E[σ²] / (p (1 − p)) = 1 − 1/G``, the same at every p.

    Valid for integers G ≥ 1; NaN elsewhere. Returns float64. docs/theory.md §3.

    >>> round(float(drgrpo_fidelity(8)), 4)
    0.875
    """
    G_arr = _floats(G)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = 1.0 - 1.0 / G_arr
    return np.asarray(np.where(_is_count(G_arr, 1), value, np.nan), dtype=np.float64)


# --------------------------------------------------------------------------------------------------
# §4 Group size


def group_size_law(p: ArrayLike, target: ArrayLike) -> FloatArray:
    """Closed-form group size for a target fidelity φ* = 1 − ε: ``G* = 1 / (8 ε p (1 − p))``.

    Real-valued, not rounded (the exact integer answer is the smallest G with ``fidelity(p, G) ≥ φ*``).
    Valid for p in [0, 1] and target in (0, 1); NaN elsewhere; inf at p ∈ {0, 1}, where no finite G
    exists. Returns float64. docs/theory.md §4 (p = 0.5: 5, 10, 50 at φ* = 0.90, 0.95, 0.99).

    >>> round(float(group_size_law(0.5, 0.95)), 4)
    10.0
    """
    p_arr, t_arr = np.broadcast_arrays(_floats(p), _floats(target))
    valid = _is_probability(p_arr) & (t_arr > 0.0) & (t_arr < 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = 1.0 / (8.0 * (1.0 - t_arr) * p_arr * (1.0 - p_arr))
    return np.asarray(np.where(valid, value, np.nan), dtype=np.float64)


def silent_group_size(p: ArrayLike, max_silent: ArrayLike, max_G: int, min_G: int = 2) -> FloatArray:
    """Smallest integer G in [min_G, max_G] with ``silent_probability(p, G) ≤ max_silent``.

    With q = max(p, 1 − p), ``q^G ≤ P_silent ≤ 2 q^G`` brackets the answer between
    ``log(s) / log(q)`` and ``log(s/2) / log(q)``; a bisection against the exact formula inside that
    bracket (one step or a few) makes it exact. Valid for p and max_silent in [0, 1] (broadcast); NaN
    elsewhere and where no G ≤ max_G works, e.g. p ∈ {0, 1} with max_silent < 1. Returns float64
    (integer-valued). Raises ValueError unless 1 ≤ min_G ≤ max_G are integers. docs/theory.md §4.

    >>> silent_group_size([0.5, 0.1, 0.0], 0.1, 1000).tolist()
    [5.0, 22.0, nan]
    """
    max_G = _option_count(max_G, "max_G")
    min_G = _option_count(min_G, "min_G")
    if min_G > max_G:
        raise ValueError(f"min_G must not exceed max_G, got min_G={min_G}, max_G={max_G}")
    p_arr, s_arr = np.broadcast_arrays(_floats(p), _floats(max_silent))
    valid = _is_probability(p_arr) & _is_probability(s_arr)
    out = np.full(p_arr.shape, np.nan)
    p_v, s_v = p_arr[valid], s_arr[valid]
    none = float(max_G + 1)  # "no G ≤ max_G works"
    with np.errstate(divide="ignore", invalid="ignore"):
        log_q = np.log1p(-np.minimum(p_v, 1.0 - p_v))
        log_s = np.log(s_v)
        lower = np.floor(log_s / log_q * (1.0 - 1e-9)) - 1.0
        upper = np.ceil((log_s - math.log(2.0)) / log_q * (1.0 + 1e-9)) + 1.0
    # Cases the logs cannot bracket: every G works (s ≥ 1), or none does (s = 0, or p ∈ {0, 1}).
    lower = np.where(s_v >= 1.0, min_G, np.where((s_v <= 0.0) | (log_q == 0.0), none, lower))
    upper = np.where(s_v >= 1.0, min_G, np.where((s_v <= 0.0) | (log_q == 0.0), none, upper))
    lo = np.clip(lower, min_G, none).astype(np.int64)
    hi = np.clip(upper, min_G, none).astype(np.int64)
    # The upper bracket is only trusted once the exact formula confirms it.
    confirmed = (hi <= max_G) & (silent_probability(p_v, np.minimum(hi, max_G)) <= s_v)
    hi = np.where(confirmed, hi, max_G + 1)
    lo = np.minimum(lo, hi)
    while (searching := lo < hi).any():
        mid = (lo + hi) // 2
        ok = silent_probability(p_v, mid) <= s_v
        hi = np.where(searching & ok, mid, hi)
        lo = np.where(searching & ~ok, mid + 1, lo)
    out[valid] = np.where(lo <= max_G, lo, np.nan)
    return out


# --------------------------------------------------------------------------------------------------
# §2 DAPO dynamic sampling


def dapo_expected_draws(p_silent: ArrayLike, cap: int | None = None) -> FloatArray:
    """Expected group draws until DAPO gets a non-silent group, for silent probability P per draw.

    Uncapped: ``1 / (1 − P)`` (inf at P = 1). With a cap of T draws: ``1 + P + … + P^(T−1) =
    (1 − P^T) / (1 − P)`` (T at P = 1), evaluated as ``−expm1(T log P) / (1 − P)`` for accuracy near
    P = 1. Over a dataset refilled from fresh prompts pass the mean P. Valid for P in [0, 1]; NaN
    elsewhere. Returns float64. Raises ValueError unless cap is None or an integer ≥ 1. docs/theory.md §2.

    >>> round(float(dapo_expected_draws(0.5)), 4), round(float(dapo_expected_draws(0.5, cap=2)), 4)
    (2.0, 1.5)
    """
    P = _floats(p_silent)
    valid = _is_probability(P)
    with np.errstate(divide="ignore", invalid="ignore"):
        if cap is None:
            draws = 1.0 / (1.0 - P)
        else:
            T = _option_count(cap, "cap")
            draws = np.where(P == 1.0, float(T), -np.expm1(T * np.log(P)) / (1.0 - P))
    return np.asarray(np.where(valid, draws, np.nan), dtype=np.float64)


def dapo_still_silent_probability(p_silent: ArrayLike, cap: int) -> FloatArray:
    """Probability that DAPO's group is still silent after a cap of T draws: ``P^T``.

    Valid for P in [0, 1]; NaN elsewhere. Returns float64. Raises ValueError unless cap is an integer ≥ 1.
    docs/theory.md §2.

    >>> round(float(dapo_still_silent_probability(0.5, 4)), 4)
    0.0625
    """
    T = _option_count(cap, "cap")
    P = _floats(p_silent)
    with np.errstate(invalid="ignore"):
        value = np.power(P, T)
    return np.asarray(np.where(_is_probability(P), value, np.nan), dtype=np.float64)

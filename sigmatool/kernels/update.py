"""§3 of docs/theory.md: the expected update E[σ], E[σ²], their limits and the fidelity."""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import ArrayLike

from sigmatool.kernels._common import (
    DIRECT_MAX_G,
    MAX_SUMMED_G,
    FloatArray,
    IntArray,
    distinct_rows,
    floats,
    is_bessel,
    is_count,
    is_probability,
    probability_and_size,
    sigma_of,
    window,
    window_mean,
)
from sigmatool.kernels.silent import bessel_factor, unbiased_inputs


@functools.cache
def _sigma_coefficients(G: int) -> FloatArray:
    """``C(G, k) sqrt(k (G − k)) / G`` for k = 0 … G."""
    return np.array([math.comb(G, k) * math.sqrt(k * (G - k)) / G for k in range(G + 1)], dtype=np.float64)


def _horner_expected_sigma(p: FloatArray, G: int) -> FloatArray:
    """E[σ] for 1-D p strictly inside (0, 1) and one 2 ≤ G ≤ 64, by Horner's rule.

    With a = min(p, 1 − p) (E[σ] is symmetric in p ↔ 1 − p), q = 1 − a and r = a / q ≤ 1 the sum is
    q^G Σ_k c_k r^k with positive c_k = C(G, k) sqrt(k (G − k)) / G: every term is positive and r ≤ 1, so
    Horner's rule loses no digits (relative error ≲ 2G·2⁻⁵³), at two vector operations per k.
    """
    a = np.minimum(p, 1.0 - p)
    r = a / (1.0 - a)
    c = _sigma_coefficients(G)
    acc = np.full(p.shape, c[G - 1])
    for k in range(G - 2, 0, -1):
        np.multiply(acc, r, out=acc)
        acc += c[k]
    acc *= r
    acc *= np.exp(G * np.log1p(-a))
    return acc


def _binomial_expected_sigma(p: FloatArray, G: IntArray) -> FloatArray:
    """E[σ] for 1-D p strictly inside (0, 1) and G ≥ 2.

    Groups up to 64 (the common case) use Horner's sum row by row, cheap enough not to look for repeated
    values; larger ones a window of the pmf, each distinct (p, G) once.
    """
    out = np.empty(p.shape, dtype=np.float64)
    small = G <= DIRECT_MAX_G
    for g in np.unique(G[small]).tolist():
        rows = np.flatnonzero(G == g)
        out[rows] = _horner_expected_sigma(p[rows], int(g))
    large = np.flatnonzero(~small)
    if not large.size:
        return out
    (p_l, G_float), inverse = distinct_rows(p[large], G[large].astype(np.float64))
    G_l = G_float.astype(np.int64)
    q_l = 1.0 - p_l
    lo, hi = window(G_l * p_l, np.sqrt(G_l * p_l * q_l), np.zeros_like(G_l), G_l)
    log_odds = np.log(p_l) - np.log1p(-p_l)

    def log_ratio(rows: IntArray, k: IntArray) -> FloatArray:
        # Bin(k + 1; G, p) / Bin(k; G, p) = (G − k) / (k + 1) · p / (1 − p)
        size = G_l[rows, None]
        return np.asarray(np.log((size - k) / (k + 1.0)) + log_odds[rows, None], dtype=np.float64)

    def value(rows: IntArray, k: IntArray) -> FloatArray:
        return sigma_of(k, G_l[rows, None])

    out[large] = window_mean(lo, hi, log_ratio, value)[inverse]
    return out


def expected_sigma(p: ArrayLike, G: ArrayLike, std: str = "population") -> FloatArray:
    """Exact expected group std ``E[σ](p, G)`` with k ~ Binomial(G, p): the per-prompt GRPO weight.

    ``E[σ](p, G) = (1/G) Σ_{k=1}^{G−1} C(G, k) p^k (1 − p)^(G−k) sqrt(k (G − k))``, times ``bessel_factor(G)``
    when ``std="bessel"``. For G ≤ 64 the sum is Horner's rule on (p / (1 − p))^k; above, it is a window of the pmf
    built from its successive ratios and the sum restricted to k within 12 sd + 30 of Gp, the rest carrying
    relative mass < e^-58. Relative error ~1e-14 at any G up to 2^31 (checked against 50-digit sums at
    G = 5000). 10^7 values at G = 8 take about a second.
    Valid for p in [0, 1] and integers 1 ≤ G ≤ 2^31 (p and G broadcast); NaN elsewhere; 0 at
    p ∈ {0, 1} and at G = 1. Returns float64. Raises ValueError unless std is "population" or "bessel".
    docs/theory.md §3; limit ``sqrt(p (1 − p))`` as G → ∞.

    >>> round(float(expected_sigma(0.5, 8)), 4)
    0.4639
    >>> round(float(expected_sigma(0.5, 8, std="bessel")), 4)
    0.434
    """
    bessel = is_bessel(std)
    p_arr, G_arr, valid = probability_and_size(p, G, MAX_SUMMED_G)
    out = np.where(valid, 0.0, np.nan)
    live = valid & (p_arr > 0.0) & (p_arr < 1.0) & (G_arr >= 2)
    if live.any():
        one_G = np.ndim(G) == 0 and 2 <= float(np.asarray(G)) <= DIRECT_MAX_G
        if one_G:  # the common case: no need to sort values by G
            out[live] = _horner_expected_sigma(p_arr[live], int(np.asarray(G)))
        else:
            out[live] = _binomial_expected_sigma(p_arr[live], G_arr[live].astype(np.int64))
    if bessel:
        out = out * bessel_factor(G_arr)
    return np.asarray(out, dtype=np.float64)


def expected_sigma_unbiased(k: ArrayLike, n: ArrayLike, G: ArrayLike, std: str = "population") -> FloatArray:
    """Unbiased estimate of ``E[σ](p, G)`` from k right of n samples (a size-G draw without replacement).

    ``Σ_j Hyp(j; n, k, G) · sqrt(j (G − j)) / G``, times ``bessel_factor(G)`` when ``std="bessel"``, summed
    as ``expected_sigma`` sums above G = 64 (window of 12 sd + 30). Each distinct (k, n, G) is evaluated once.
    Valid for integers 0 ≤ k ≤ n and 1 ≤ G ≤ min(n, 2^31); NaN elsewhere, including G > n (no unbiased
    estimate exists). Returns float64. Raises ValueError unless std is "population" or "bessel".
    docs/theory.md §2–3.

    >>> round(float(expected_sigma_unbiased(2, 4, 2)), 4)
    0.3333
    """
    bessel = is_bessel(std)
    valid, k_arr, n_arr, G_arr = unbiased_inputs(k, n, G)
    valid &= G_arr <= MAX_SUMMED_G
    out = np.where(valid, 0.0, np.nan)
    if valid.any():
        triples, inverse = distinct_rows(k_arr[valid], n_arr[valid], G_arr[valid])
        k_u, n_u, G_u = (column.astype(np.int64) for column in triples)
        q = k_u / n_u
        # The binomial sd bounds the hypergeometric one, so the window stays safe.
        lo, hi = window(
            G_u * q, np.sqrt(G_u * q * (1.0 - q)), np.maximum(0, G_u - (n_u - k_u)), np.minimum(k_u, G_u)
        )

        def log_ratio(rows: IntArray, j: IntArray) -> FloatArray:
            # Hyp(j + 1) / Hyp(j) = (k − j)(G − j) / ((j + 1)(n − k − G + j + 1))
            n, k, size = n_u[rows, None], k_u[rows, None], G_u[rows, None]
            ratio = (k - j) * (size - j) / ((j + 1.0) * (n - k - size + j + 1.0))
            return np.asarray(np.log(ratio), dtype=np.float64)

        def value(rows: IntArray, j: IntArray) -> FloatArray:
            return sigma_of(j, G_u[rows, None])

        out[valid] = window_mean(lo, hi, log_ratio, value)[inverse]
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
    p_arr, G_arr, valid = probability_and_size(p, G)
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
    valid, k_arr, n_arr, G_arr = unbiased_inputs(k, n, G)
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
    p_arr = floats(p)
    with np.errstate(invalid="ignore"):
        value = np.sqrt(p_arr * (1.0 - p_arr))
    return np.asarray(np.where(is_probability(p_arr), value, np.nan), dtype=np.float64)


def drgrpo_weight_limit(p: ArrayLike) -> FloatArray:
    """Dr. GRPO's large-group per-prompt weight ``lim_{G→∞} E[σ²] = p (1 − p)``.

    Valid for p in [0, 1]; NaN elsewhere. Returns float64. docs/theory.md §3.

    >>> round(float(drgrpo_weight_limit(0.05)), 4)
    0.0475
    """
    p_arr = floats(p)
    return np.asarray(np.where(is_probability(p_arr), p_arr * (1.0 - p_arr), np.nan), dtype=np.float64)


def fidelity(p: ArrayLike, G: ArrayLike, std: str = "population") -> FloatArray:
    """Fidelity ``φ(G, p) = E[σ](p, G) / sqrt(p (1 − p))``: the share of the large-group update realised.

    Rises with G towards 1 (population std). Valid for p in (0, 1) and integers 1 ≤ G ≤ 2^31; NaN
    elsewhere, including p ∈ {0, 1} where it is 0/0. Returns float64. Raises ValueError unless std is
    "population" or "bessel". docs/theory.md §3: φ(8, 0.5) = 0.9278, φ(8, 0.05) = 0.5390.

    >>> round(float(fidelity(0.5, 8)), 4), round(float(fidelity(0.05, 8)), 4)
    (0.9278, 0.539)
    """
    p_arr = floats(p)
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
    p_arr, G_arr = np.broadcast_arrays(floats(p), floats(G))
    valid = (p_arr > 0.0) & (p_arr < 1.0) & is_count(G_arr, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = 1.0 - 1.0 / (8.0 * G_arr * p_arr * (1.0 - p_arr))
    return np.asarray(np.where(valid, value, np.nan), dtype=np.float64)


def drgrpo_fidelity(G: ArrayLike) -> FloatArray:
    """Dr. GRPO's fidelity ``E[σ²] / (p (1 − p)) = 1 − 1/G``, the same at every p.

    Valid for integers G ≥ 1; NaN elsewhere. Returns float64. docs/theory.md §3.

    >>> round(float(drgrpo_fidelity(8)), 4)
    0.875
    """
    G_arr = floats(G)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = 1.0 - 1.0 / G_arr
    return np.asarray(np.where(is_count(G_arr, 1), value, np.nan), dtype=np.float64)

"""Domain checks and the summation machinery the kernels share.

A sum over the outcomes of a group (E[σ], its unbiased form) runs over a window of outcomes around the
mean, weighted by binomial or hypergeometric probabilities from scipy (boost's pmf: relative error ~3e-13
at any size, measured against 50-digit sums), normalised by the window's total weight. scipy is imported
only when a group is larger than ``DIRECT_MAX_G`` or an unbiased estimate is asked for.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

STD_CONVENTIONS = ("population", "bessel")

# Kernels that sum over the outcomes of a group build a (rows × outcomes) matrix; above this G the
# matrix of even one row would not fit in memory, so such G are treated as out of domain.
MAX_SUMMED_G = 2**31
# Elements per block of that matrix: bounds memory at a few tens of MB whatever the input size.
_BLOCK = 1 << 21
# Outcomes further than t = 12 sd + 30 from the mean carry mass below 2 exp(−t²/(2(sd² + t/3))) < e^-58
# (Bernstein's inequality), far under float64 resolution relative to the terms kept.
_WINDOW_SDS = 12.0
_WINDOW_PAD = 30.0
# Up to this G, E[σ] sums C(G, k) p^k q^(G−k) directly (relative error ~G·1e-16); above it, a window of the
# pmf built from its successive ratios.
DIRECT_MAX_G = 64
_TINY_P = 1e-280


def floats(x: ArrayLike) -> FloatArray:
    return np.asarray(x, dtype=np.float64)


def is_probability(x: FloatArray) -> BoolArray:
    return np.asarray((x >= 0.0) & (x <= 1.0), dtype=np.bool_)


def is_count(x: FloatArray, minimum: float) -> BoolArray:
    """True where x is a finite integer ≥ minimum."""
    return np.asarray(np.isfinite(x) & (x == np.floor(x)) & (x >= minimum), dtype=np.bool_)


def probability_and_size(
    p: ArrayLike, G: ArrayLike, max_G: float = math.inf
) -> tuple[FloatArray, FloatArray, BoolArray]:
    """p and G broadcast together, and where they are in the domain: p in [0, 1], G an integer in [1, max_G].

    The checks run on each input's own shape before broadcasting, so a scalar G costs nothing per p.
    """
    p_f, G_f = floats(p), floats(G)
    valid = is_probability(p_f) & (is_count(G_f, 1) & (G_f <= max_G))
    p_arr, G_arr = np.broadcast_arrays(p_f, G_f)
    return p_arr, G_arr, np.broadcast_to(valid, p_arr.shape)


def is_bessel(std: str) -> bool:
    if std not in STD_CONVENTIONS:
        raise ValueError(f"std must be 'population' or 'bessel', got {std!r}")
    return std == "bessel"


def option_count(value: int, name: str) -> int:
    """An integer option ≥ 1 (an integral float is accepted), else ValueError."""
    try:
        as_int = int(value)
        ok = not isinstance(value, bool) and as_int == value and as_int >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be an integer ≥ 1, got {value!r}")
    return as_int


def binomial_pmf(x: IntArray, n: IntArray, p: FloatArray) -> FloatArray:
    """Binomial(x; n, p), broadcast, for integers 0 ≤ x ≤ n (boost's pdf through scipy).

    Below p = 1e-280 boost overflows internally; there n p < 1e-270, so x = 0 and x = 1 carry all the mass
    and their closed forms are exact (x ≥ 2 underflows to 0 in any case).
    """
    from scipy.stats import binom  # imported on first use: it costs a fraction of a second

    x, n, p = np.broadcast_arrays(x, n, p)
    tiny = p < _TINY_P
    if not tiny.any():
        return np.asarray(binom.pmf(x, n, p), dtype=np.float64)
    out = np.empty(x.shape, dtype=np.float64)
    out[~tiny] = binom.pmf(x[~tiny], n[~tiny], p[~tiny])
    xt, nt, pt = x[tiny], n[tiny].astype(np.float64), p[tiny]
    none = np.exp(nt * np.log1p(-pt))
    one = nt * pt * np.exp((nt - 1.0) * np.log1p(-pt))
    out[tiny] = np.where(xt == 0, none, np.where(xt == 1, one, 0.0))
    return out


def hypergeometric_pmf_of(j: IntArray, n: IntArray, k: IntArray, G: IntArray) -> FloatArray:
    """Hyp(j; n, k, G) for j in its support, as Bin(j; k, G/n) Bin(G − j; n − k, G/n) / Bin(G; n, G/n).

    The factorisation of R's dhyper: each factor is a binomial pmf near its mode, so the ratio keeps the
    binomial pmf's relative accuracy at any n (scipy's own hypergeometric pmf loses digits for large n).
    """
    q = G / n
    return np.asarray(
        binomial_pmf(j, k, q) * binomial_pmf(G - j, n - k, q) / binomial_pmf(G, n, q), dtype=np.float64
    )


# Counts whose combined range holds at most this many keys are deduplicated through a table, not a sort.
_TABLE_KEYS = 1 << 24


def distinct_rows(*columns: FloatArray) -> tuple[list[FloatArray], IntArray]:
    """Distinct rows of equal-length 1-D columns (in lexicographic order), and the index of each input row
    among them.

    Whole numbers ≥ 0 in a small combined range (counts k, n and a group size G) are looked up in a table of
    every key, with no sort: 5·10⁶ cells of one k/64 file (a 200,000-group ``budget --by``) take 0.2 s
    this way, 2.5 s by ``lexsort``; the rows and indices are the same.
    """
    found = _table_rows(columns)
    if found is not None:
        return found
    order = np.lexsort(columns[::-1])
    sorted_columns = [c[order] for c in columns]
    new = np.zeros(order.size, dtype=np.bool_)
    new[:1] = True
    for c in sorted_columns:
        new[1:] |= c[1:] != c[:-1]
    inverse = np.empty(order.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return [c[new] for c in sorted_columns], inverse


def _table_rows(columns: tuple[FloatArray, ...]) -> tuple[list[FloatArray], IntArray] | None:
    """:func:`distinct_rows` of whole numbers ≥ 0 (no −0.0) whose ranges multiply to at most
    :data:`_TABLE_KEYS` keys, through a table of every key (the first column most significant); else None."""
    if not columns or columns[0].size == 0:
        return None
    lows, spans = [], []
    for c in columns:
        lo, hi = c.min(), c.max()
        if (
            not (np.isfinite(lo) and np.isfinite(hi))
            or np.signbit(c).any()
            or not np.array_equal(c, np.floor(c))
        ):
            return None
        lows.append(int(lo))
        spans.append(int(hi) - int(lo) + 1)
    if math.prod(spans) > _TABLE_KEYS:
        return None
    key = np.zeros(columns[0].size, dtype=np.int64)
    for c, lo, span in zip(columns, lows, spans, strict=True):
        key = key * span + (c.astype(np.int64) - lo)
    present = np.zeros(math.prod(spans), dtype=np.bool_)
    present[key] = True
    keys = np.flatnonzero(present)
    inverse = (np.cumsum(present) - 1)[key]
    out: list[FloatArray] = []
    for c, lo, span in zip(columns[::-1], lows[::-1], spans[::-1], strict=True):
        out.append((keys % span + lo).astype(c.dtype))
        keys = keys // span
    return out[::-1], inverse


def row_sum(x: FloatArray) -> FloatArray:
    """Left-to-right sum of each row of a 2-D array.

    Sequential on purpose: a row's result depends on its own terms only, not on the other rows of the
    batch nor on the zero padding after them, so a value is the same bits in every call (pairwise sums
    and BLAS products regroup terms with the batch's shape).
    """
    return np.asarray(np.cumsum(x, axis=1)[:, -1], dtype=np.float64)


def window_mean(
    lo: IntArray,
    hi: IntArray,
    log_ratio: Callable[[IntArray, IntArray], FloatArray],
    value: Callable[[IntArray, IntArray], FloatArray],
) -> FloatArray:
    """Per row r, Σ_k w_r(k) v_r(k) / Σ_k w_r(k) over integers k in [lo_r, hi_r]; callbacks get (rows, k).

    The weights are given by their successive ratios, ``log_ratio(rows, k) = log(w(k + 1) / w(k))``: a
    probability mass function up to a constant, which the normalisation removes. The log-weights are running
    sums of those logs along the row, and each row's largest is subtracted before exponentiating, so no
    weight overflows; the rounding of a weight grows with its distance from the row's start, ~1e-14 here.
    """
    # Rows go in blocks of similar width so one wide row does not pad thousands of narrow ones.
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
            log_w = np.zeros(k.shape)
            with np.errstate(divide="ignore", invalid="ignore"):
                np.cumsum(log_ratio(rows, k[:, :-1]), axis=1, out=log_w[:, 1:])
            log_w = np.where(inside, log_w, -np.inf)
            w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
            out[rows] = row_sum(w * value(rows, k)) / row_sum(w)
    return out


def window(center: FloatArray, sd: FloatArray, lo: IntArray, hi: IntArray) -> tuple[IntArray, IntArray]:
    """The support [lo, hi] narrowed to center ± (12 sd + 30)."""
    half = _WINDOW_SDS * sd + _WINDOW_PAD
    low = np.maximum(lo, np.floor(center - half).astype(np.int64))
    high = np.minimum(hi, np.ceil(center + half).astype(np.int64))
    return low, high


def sigma_of(k: IntArray, G: IntArray) -> FloatArray:
    """σ = sqrt(k (G − k)) / G for integer arrays."""
    return np.asarray(np.sqrt((k * (G - k)).astype(np.float64)) / G, dtype=np.float64)

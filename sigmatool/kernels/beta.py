"""Closed forms under a Beta(A, B) distribution of p: the posterior of a Beta prior after k of n right (§7).

Each function takes arrays ``A``, ``B`` > 0 (broadcast) and an integer group size ``G`` ≥ 1, works in log
space (``scipy.special.betaln``), and returns float64. With a Beta(a, b) prior and k right of n, the posterior
is Beta(a + k, b + n − k): pass ``A = a + k``, ``B = b + n − k``. docs/theory.md §7.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

# Rows × (G + 1) terms per block of the beta-binomial sums: a few MB whatever G and the number of rows.
_BLOCK = 1 << 19


def _pair(A: ArrayLike, B: ArrayLike) -> tuple[FloatArray, FloatArray]:
    a, b = np.broadcast_arrays(np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64))
    return a, b


def beta_binomial_logpmf(j: ArrayLike, G: ArrayLike, A: ArrayLike, B: ArrayLike) -> FloatArray:
    """``log BB(j; G, A, B) = log C(G, j) + log B(A + j, B + G − j) − log B(A, B)``.

    The probability of j right in a group of G when p ~ Beta(A, B). Valid for integers 0 ≤ j ≤ G and A, B > 0
    (broadcast). Returns float64. docs/theory.md §7.

    >>> round(float(np.exp(beta_binomial_logpmf(1, 2, 1.0, 1.0))), 4)
    0.3333
    """
    from scipy.special import betaln, gammaln

    j_arr, G_arr = np.asarray(j, dtype=np.float64), np.asarray(G, dtype=np.float64)
    a, b = _pair(A, B)
    log_choose = gammaln(G_arr + 1) - gammaln(j_arr + 1) - gammaln(G_arr - j_arr + 1)
    return np.asarray(log_choose + betaln(a + j_arr, b + G_arr - j_arr) - betaln(a, b), dtype=np.float64)


def beta_all_right(A: ArrayLike, B: ArrayLike, G: int) -> FloatArray:
    """``E[p^G] = B(A + G, B) / B(A, B)`` for p ~ Beta(A, B).

    Valid for A, B > 0 and integers G ≥ 0. Returns float64. docs/theory.md §7.

    >>> round(float(beta_all_right(1.0, 1.0, 3)), 4)
    0.25
    """
    from scipy.special import betaln

    a, b = _pair(A, B)
    return np.asarray(np.exp(betaln(a + G, b) - betaln(a, b)), dtype=np.float64)


def beta_all_wrong(A: ArrayLike, B: ArrayLike, G: int) -> FloatArray:
    """``E[(1 − p)^G] = B(A, B + G) / B(A, B)`` for p ~ Beta(A, B).

    Valid for A, B > 0 and integers G ≥ 0. Returns float64. docs/theory.md §7.

    >>> round(float(beta_all_wrong(2.0, 1.0, 1)), 4)
    0.3333
    """
    a, b = _pair(A, B)
    return beta_all_right(b, a, G)


def beta_sqrt_variance(A: ArrayLike, B: ArrayLike) -> FloatArray:
    """``E[sqrt(p (1 − p))] = B(A + ½, B + ½) / B(A, B)``: GRPO's G = ∞ weight, averaged over Beta(A, B).

    Valid for A, B > 0. Returns float64. docs/theory.md §3, §7.

    >>> round(float(beta_sqrt_variance(1.0, 1.0)), 4)
    0.3927
    """
    from scipy.special import betaln

    a, b = _pair(A, B)
    return np.asarray(np.exp(betaln(a + 0.5, b + 0.5) - betaln(a, b)), dtype=np.float64)


def beta_variance_weight(A: ArrayLike, B: ArrayLike) -> FloatArray:
    """``E[p (1 − p)] = A B / ((A + B)(A + B + 1))``: Dr. GRPO's G = ∞ weight, averaged over Beta(A, B).

    Valid for A, B > 0. Returns float64. docs/theory.md §3, §7.

    >>> round(float(beta_variance_weight(1.0, 1.0)), 4)
    0.1667
    """
    a, b = _pair(A, B)
    return np.asarray(a * b / ((a + b) * (a + b + 1.0)), dtype=np.float64)


def beta_expected_sigma(A: ArrayLike, B: ArrayLike, G: int) -> FloatArray:
    """``E[E[σ](p, G)] = Σ_{j=1}^{G−1} BB(j; G, A, B) sqrt(j (G − j)) / G`` for p ~ Beta(A, B).

    The population-std group std averaged over the beta-binomial number of right answers; every term is
    summed (the beta-binomial is not concentrated), in blocks, with the pmf in log space. Valid for A, B > 0
    and integers G ≥ 1 (0 at G = 1). Returns float64. docs/theory.md §3, §7.

    >>> round(float(beta_expected_sigma(1.0, 1.0, 2)), 4)
    0.1667
    """
    a, b = _pair(A, B)
    flat_a, flat_b = a.ravel(), b.ravel()
    out = np.zeros(flat_a.shape, dtype=np.float64)
    if G < 2 or flat_a.size == 0:
        return out.reshape(a.shape)
    j = np.arange(1, G, dtype=np.float64)
    sigma = np.sqrt(j * (G - j)) / G
    step = max(1, _BLOCK // G)
    for start in range(0, flat_a.size, step):
        rows = slice(start, start + step)
        log_pmf = beta_binomial_logpmf(j[None, :], G, flat_a[rows, None], flat_b[rows, None])
        out[rows] = np.exp(log_pmf) @ sigma
    return out.reshape(a.shape)


def beta_moment(A: ArrayLike, B: ArrayLike, a: int, b: int) -> FloatArray:
    """``E[p^a (1 − p)^b] = B(A + a, B + b) / B(A, B)`` for p ~ Beta(A, B).

    Valid for A, B > 0 and integers a, b ≥ 0. Returns float64. docs/theory.md §7.

    >>> round(float(beta_moment(1.0, 1.0, 1, 2)), 4)  # ∫ p (1 − p)² dp = 1/12
    0.0833
    """
    from scipy.special import betaln

    A_, B_ = _pair(A, B)
    return np.asarray(np.exp(betaln(A_ + a, B_ + b) - betaln(A_, B_)), dtype=np.float64)

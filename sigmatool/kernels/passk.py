"""Pass@K credit (docs/passk.md): what a group of G answers with c right gives the trainer when the reward
of each answer is its share in the group's pass@K.

A trainer that optimises pass@K (PKPO, arXiv:2505.15201; Pass@k Training, arXiv:2508.10751) credits each
answer by the K-subsets of its group: a right answer K/G, a wrong one (K/G)·ρ(G−1, c, K−1), ρ(n, c, k) =
1 − C(n−c, k)/C(n, k). The credits take one value per outcome, so centred they are ``Δ (y − ȳ)`` with

    Δ(c) = C(G−c−1, K−1) / C(G−1, K−1)        (the share of (K−1)-subsets of the others all wrong),

and the update before normalising is ``Δ σ² (s̄₊ − s̄₋)``, σ² = c (G − c)/G². Every K-subset holds a right
answer iff c > G − K; then Δ = 0 and the group is *silent*, as it is at c = 0. Pass@k Training divides by the
std of the K-subsets' rewards, σ_K = √(q (1 − q)) with

    q(c) = C(G−c, K) / C(G, K)                  (the share of K-subsets with no right answer),

so GRPO weighs a group Δσ²/σ_K and Dr. GRPO Δσ². At K = 1, Δ = 1, q = 1 − c/G and σ_K = σ: pass@1's
weights. Exactly, ``E[Δσ²] = (1 − K/G)(1 − p)^(K−1) p (1 − p)`` for c ~ Bin(G, p); as G → ∞ GRPO's weight
tends to ``(1 − p)^(K−1) p (1 − p)/√(P (1 − P))``, P = 1 − (1 − p)^K the pass@K, and Dr. GRPO's to
``(1 − p)^(K−1) p (1 − p)``.

Each function of c is evaluated from products of ratios (never 1 − ρ, which cancels near p = 1). Arrays are
indexed by c = 0…G; K must be a whole number in [1, G].
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from sigmatool.kernels._common import BoolArray, FloatArray, floats


def check(G: int, K: int) -> None:
    """K whole and in [1, G], else ValueError."""
    if not (isinstance(K, (int, np.integer)) and 1 <= K <= G):
        raise ValueError(f"pass@K needs a whole K in [1, G = {G}], not {K!r}")


def _ratio_product(top: FloatArray, bottom: float, terms: int) -> FloatArray:
    """``Π_{i<terms} (top − i)/(bottom − i)``, 0 where some factor of the top is ≤ 0 (C(top, terms) = 0)."""
    out = np.ones_like(top, dtype=np.float64)
    for i in range(terms):
        out = out * np.clip(top - i, 0.0, None) / (bottom - i)
    return out


def delta_at(c: ArrayLike, G: int, K: int) -> FloatArray:
    """Δ(c) = C(G−c−1, K−1)/C(G−1, K−1) at each c (1 at K = 1; 0 for c > G − K, and at c = G).

    >>> [round(x, 4) for x in delta_at([0, 1, 2, 3, 4], 4, 2).tolist()]
    [1.0, 0.6667, 0.3333, 0.0, 0.0]
    """
    cc = floats(c)
    if K == 1:
        return np.asarray(np.where(cc < G, 1.0, 0.0), dtype=np.float64)
    return np.asarray(_ratio_product(G - cc - 1.0, float(G - 1), K - 1), dtype=np.float64)


def miss_at(c: ArrayLike, G: int, K: int) -> FloatArray:
    """q(c) = C(G−c, K)/C(G, K): the share of K-subsets with no right answer.

    >>> [round(x, 4) for x in miss_at([0, 1, 2], 4, 2).tolist()]
    [1.0, 0.5, 0.1667]
    """
    return np.asarray(_ratio_product(G - floats(c), float(G), K), dtype=np.float64)


def silent_at(c: ArrayLike, G: int, K: int) -> BoolArray:
    """Whether a group with c right gives every answer the same credit: c = 0 or c > G − K."""
    cc = floats(c)
    return np.asarray((cc == 0) | (cc > G - K), dtype=np.bool_)


def drgrpo_at(c: ArrayLike, G: int, K: int) -> FloatArray:
    """Dr. GRPO's weight of a group with c right, Δσ², σ² = c (G − c)/G²."""
    cc = floats(c)
    return np.asarray(delta_at(cc, G, K) * cc * (G - cc) / float(G) ** 2, dtype=np.float64)


def grpo_at(c: ArrayLike, G: int, K: int) -> FloatArray:
    """GRPO's weight of a group with c right, Δσ²/σ_K (0 where silent); σ at K = 1.

    >>> [round(x, 4) for x in grpo_at([0, 1, 2, 3, 4], 4, 1).tolist()]  # σ = √(c (G − c))/G
    [0.0, 0.433, 0.5, 0.433, 0.0]
    """
    cc = floats(c)
    q = miss_at(cc, G, K)
    spread = np.sqrt(q * (1.0 - q))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = drgrpo_at(cc, G, K) / spread
    return np.asarray(np.where(silent_at(cc, G, K) | (spread <= 0), 0.0, out), dtype=np.float64)


def _over_c(G: int) -> FloatArray:
    return np.arange(G + 1, dtype=np.float64)


def delta(G: int, K: int) -> FloatArray:
    """Δ(c) for c = 0…G."""
    check(G, K)
    return delta_at(_over_c(G), G, K)


def miss(G: int, K: int) -> FloatArray:
    """q(c) for c = 0…G."""
    check(G, K)
    return miss_at(_over_c(G), G, K)


def silent(G: int, K: int) -> BoolArray:
    """Whether each c = 0…G is silent under pass@K."""
    check(G, K)
    return silent_at(_over_c(G), G, K)


def grpo(G: int, K: int) -> FloatArray:
    """GRPO's weight Δσ²/σ_K for c = 0…G."""
    check(G, K)
    return grpo_at(_over_c(G), G, K)


def drgrpo(G: int, K: int) -> FloatArray:
    """Dr. GRPO's weight Δσ² for c = 0…G."""
    check(G, K)
    return drgrpo_at(_over_c(G), G, K)


def advantages(G: int, K: int, c: int) -> tuple[float, float]:
    """The advantage of a right and of a wrong answer in a group with c right, Δ (y − ȳ)/σ_K: Pass@k
    Training's analytic advantage (0, 0 where silent).

    >>> [round(a, 4) for a in advantages(4, 1, 1)]  # pass@1: (y − ȳ)/σ
    [1.7321, -0.5774]
    """
    check(G, K)
    if bool(silent_at(c, G, K)):
        return 0.0, 0.0
    d, q = float(delta_at(c, G, K)), float(miss_at(c, G, K))
    spread = float(np.sqrt(q * (1.0 - q)))
    mean = c / G
    return d * (1.0 - mean) / spread, d * (0.0 - mean) / spread


def expected_drgrpo(p: ArrayLike, G: int, K: int) -> FloatArray:
    """``E[Δσ²] = (1 − K/G)(1 − p)^(K−1) p (1 − p)`` for c ~ Bin(G, p).

    >>> round(float(expected_drgrpo(0.5, 8, 1)), 6)  # p (1 − p)(1 − 1/G)
    0.21875
    """
    pp = floats(p)
    return np.asarray((1.0 - K / G) * drgrpo_limit(pp, K), dtype=np.float64)


def pass_at(p: ArrayLike, K: int) -> FloatArray:
    """P = 1 − (1 − p)^K, as −expm1(K log1p(−p))."""
    pp = floats(p)
    with np.errstate(divide="ignore"):
        return np.asarray(-np.expm1(K * np.log1p(-pp)), dtype=np.float64)


def drgrpo_limit(p: ArrayLike, K: int) -> FloatArray:
    """Dr. GRPO's weight as G → ∞: ``(1 − p)^(K−1) p (1 − p) = p (1 − p)^K``."""
    pp = floats(p)
    return np.asarray(pp * np.power(1.0 - pp, K), dtype=np.float64)


def grpo_limit(p: ArrayLike, K: int) -> FloatArray:
    """GRPO's weight as G → ∞: ``p (1 − p)^K / √(P (1 − P))`` = ``p (1 − p)^(K/2)/√P`` (0 at p = 0, 1).

    >>> round(float(grpo_limit(0.5, 1)), 4)  # √(p (1 − p))
    0.5
    """
    pp = floats(p)
    P = pass_at(pp, K)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = pp * np.power(1.0 - pp, K / 2.0) / np.sqrt(P)
    return np.asarray(np.where(pp > 0, out, 0.0), dtype=np.float64)

"""The kept count of a shuffled dataloader's batches: m prompts drawn without replacement from N.

Within an epoch a dataloader with ``shuffle`` yields consecutive batches of one random permutation, so the
first m prompts of a step are a simple random sample of the N prompts. Each prompt's group is kept with its
own chance q_i, independently (X_i ~ Bernoulli(q_i)). Given the dataset's total K = Σ X_i, the kept count of
the m sampled prompts is Hypergeometric(N, K, m); K itself is Poisson-binomial. Hence, exactly,

    P(S_m < T) = Σ_K P(K) · P(Hypergeometric(N, K, m) < T),

with P(K) the convolution of one Binomial(m_v, q_v) per distinct value v (m_v prompts sharing q_v), each
trimmed to where its mass exceeds :data:`TRIM` of its largest, convolved directly (the trimmed laws are a
few thousand entries: 0.01 s for Big-Math's 65 values; an FFT was no faster and lost 1e-11 of the crash
chances to its rounding). Against sampling
with replacement, where S_m is Binomial(m, q̄), the variance is smaller by the finite-population term, so a
crash is less likely. docs/preflight.md, "Without replacement".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
TRIM = 1e-16  # pmf entries below this share of the largest, at either end of a law, are dropped


@dataclass(frozen=True)
class KeptLaw:
    """P(K = lo + j) = pmf[j]: the dataset's total of kept groups, and its N prompts."""

    lo: int
    pmf: FloatArray
    N: int

    @property
    def totals(self) -> NDArray[np.int64]:
        return np.arange(self.lo, self.lo + self.pmf.size, dtype=np.int64)


def _trimmed(pmf: FloatArray, lo: int) -> tuple[FloatArray, int]:
    keep = np.flatnonzero(pmf > TRIM * float(pmf.max(initial=0.0)))
    if keep.size == 0:
        return pmf, lo
    return pmf[keep[0] : keep[-1] + 1], lo + int(keep[0])


def kept_law(q: ArrayLike, m: ArrayLike) -> KeptLaw:
    """The law of K = Σ_v Binomial(m_v, q_v) (``m`` whole numbers of prompts per distinct value).

    >>> law = kept_law([0.5, 1.0], [2, 3])
    >>> law.lo, [round(x, 12) for x in law.pmf.tolist()], law.N
    (3, [0.25, 0.5, 0.25], 5)
    """
    from scipy import stats

    qs, ms = np.asarray(q, dtype=np.float64), np.asarray(m, dtype=np.int64)
    pmf, lo = np.ones(1), 0
    for qv, mv in zip(qs.tolist(), ms.tolist(), strict=True):
        if mv == 0 or qv <= 0.0:
            continue
        if qv >= 1.0:
            lo += mv
            continue
        sd = math.sqrt(mv * qv * (1.0 - qv))
        first = max(0, math.floor(mv * qv - 40.0 * sd - 40.0))  # beyond 40 sd the mass is below 1e-300
        last = min(mv, math.ceil(mv * qv + 40.0 * sd + 40.0))
        part, start = _trimmed(stats.binom.pmf(np.arange(first, last + 1), mv, qv), first)
        pmf, lo = _trimmed(np.convolve(pmf, part), lo + start)
    return KeptLaw(lo, pmf / pmf.sum(), int(ms.sum()))


def hypergeom_cdf_over_totals(x: int, N: int, m: int, lo: int, hi: int) -> FloatArray:
    """P(Hypergeometric(N, K, m) ≤ x) for every K = lo…hi, in O(hi − lo): adding a success to the
    population (one of the N − K failures, in the sample with chance (m − X)/(N − K)) gives
    ``P(X_K ≤ x) = P(X_{K+1} ≤ x) + P(X_K = x) (m − x)/(N − K)``, summed down from K = hi, where the cdf is
    smallest, so no digits are lost to cancellation.

    >>> from scipy import stats
    >>> bool(np.allclose(hypergeom_cdf_over_totals(3, 20, 8, 2, 12), stats.hypergeom.cdf(3, 20, np.arange(2, 13), 8)))
    True
    """
    from scipy import stats

    K = np.arange(lo, hi + 1, dtype=np.int64)
    if x < 0:
        return np.zeros(K.size)
    if x >= m:
        return np.ones(K.size)
    last = float(stats.hypergeom.cdf(x, N, hi, m))
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = stats.hypergeom.pmf(x, N, K[:-1], m) * (m - x) / (N - K[:-1])
    above = np.concatenate((np.cumsum(steps[::-1])[::-1], [0.0]))  # Σ_{j=K}^{hi−1}
    return np.asarray(np.clip(last + np.nan_to_num(above), 0.0, 1.0), dtype=np.float64)


def short_after(law: KeptLaw, m: ArrayLike, T: int) -> FloatArray:
    """P(S_m < T) for each m (prompts drawn without replacement, m ≤ N): Σ_K P(K) P(Hyp(N, K, m) < T)."""
    sizes = np.atleast_1d(np.asarray(m, dtype=np.int64))
    hi = law.lo + law.pmf.size - 1
    out = np.empty(sizes.size)
    for i, size in enumerate(sizes.tolist()):
        out[i] = (
            1.0 if size == 0 else float(law.pmf @ hypergeom_cdf_over_totals(T - 1, law.N, size, law.lo, hi))
        )
    return np.clip(out, 0.0, 1.0)


def short_mean(law: KeptLaw, m: int, T: int) -> float:
    """``E[S_m; S_m < T]``: the kept groups of a step that ends short (a crash loses them), by
    ``E[X; X ≤ x] = (m K / N) P(Hyp(N − 1, K − 1, m − 1) ≤ x − 1)`` for X ~ Hyp(N, K, m)."""
    if T <= 1 or m == 0:
        return 0.0
    lo, hi = max(law.lo, 1), law.lo + law.pmf.size - 1
    if hi < lo:
        return 0.0
    K = np.arange(lo, hi + 1, dtype=np.float64)
    inner = hypergeom_cdf_over_totals(T - 2, law.N - 1, m - 1, lo - 1, hi - 1)
    return float(law.pmf[lo - law.lo :] @ (m * K / law.N * inner))

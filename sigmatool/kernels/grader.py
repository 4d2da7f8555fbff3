"""A noisy grader: what the trainer's verifier does to a prompt's rewards, in each estimator's form.

The grader marks a wrong answer right with probability FP and a right one wrong with probability FN, each
answer on its own. A prompt of pass rate p then gets reward 1 with probability ``r(p) = FP + (1 − FP − FN) p``,
and every per-prompt quantity of a group of G rewards is the same function of r(p) that it is of p with an
exact grader: ``f_noisy(p) = f(r(p))``.

The three forms of :class:`~sigmatool.kernels.Quantity` follow from one representation. A quantity that is a
polynomial of degree d in p is the mean of a function h of the number m of right answers among d draws,
``f(q) = Σ_m Bin(m; d, q) h(m)`` (for the silent share h = 1 at m ∈ {0, G}; for GRPO's weight
``h(m) = √(m (G − m)) / G``; for ``p^a (1 − p)^b`` with a + b ≤ d, ``[m]_a [d − m]_b / [d]_(a+b)``). Through
the grader, j truly right answers of d are read as m right with probability ``C[j, m]``, the law of
``Bin(j, 1 − FN) + Bin(d − j, FP)``; so ``f_noisy(p) = Σ_j Bin(j; d, p) h̃(j)`` with ``h̃ = C h``, and

- plug-in: ``f(r(p̂))``;
- unbiased, from k right of n ≥ d samples: ``Σ_j Hyp(j; n, k, d) h̃(j)`` (d of the n samples drawn without
  replacement, then graded);
- under a Beta(A, B) posterior: ``Σ_j BetaBin(j; d, A, B) h̃(j)``.

GRPO's large-group weight ``√(r (1 − r))`` is no polynomial: under a Beta posterior it is integrated by
64-point Gauss–Jacobi quadrature, and has no unbiased form (as with an exact grader).

De-noising (``--denoise FP,FN``): when the counts themselves were graded by a noisy verifier (``measured_fp``,
``measured_fn``; D = 1 − FP − FN), a count of m read right of d has expectation ``Σ_j Bin(j; d, p) C[j, m]``,
and the inverse channel ``C⁻¹`` undoes it: each answer read right stands for ``((1 − FP) x − FN) / D`` and
each read wrong for ``((1 − FN) − FP x) / D`` in the generating polynomial of the true right count x, so
``C⁻¹[m, j]`` is the coefficient of x^j in their product (:func:`inverse_channel`). The three forms become

- plug-in: f at ``p̂ = clip((k/n − FP) / D, 0, 1)`` (the rate a run reads is p̂ already:
  :meth:`Grader.true_rate` maps it once, so bins and weights by rate see the true rate too);
- unbiased: ``Σ_m Hyp(m; n, k, d) (C⁻¹ C h)(m)`` (the silent share:
  ``D^−G Σ_m Hyp(m; n, k, G) [(1 − FP)^m (−FP)^(G−m) + (−FN)^m (1 − FN)^(G−m)]``); it may leave [0, 1];
- under a prior: the NPMLE is fitted on rates FP + D·p (a prior on the true p), and each point mass is read
  back by :meth:`Grader.true_rate`; a Beta component, fitted to the rates as read, through ``C⁻¹``.

A grader measured and trained alike nets out: the figures are the plain ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Grader:
    """How the trainer scores a group: a verifier that marks a wrong answer right with probability ``fp`` and
    a right one wrong with ``fn``, and the credit it trains on, pass@``pass_at`` (:mod:`.passk`; 1: each
    answer's own reward).

    >>> round(float(Grader(0.1, 0.2).rate(0.5)), 12)
    0.45
    """

    fp: float = 0.0
    fn: float = 0.0
    pass_at: int = 1
    measured_fp: float = 0.0  # --denoise: the verifier that graded the counts read (0, 0: the truth)
    measured_fn: float = 0.0

    def __post_init__(self) -> None:
        for fp, fn in ((self.fp, self.fn), (self.measured_fp, self.measured_fn)):
            if not (0.0 <= fp < 1.0 and 0.0 <= fn < 1.0 and fp + fn < 1.0):
                raise ValueError(f"a grader needs FP, FN in [0, 1) and FP + FN < 1, not {fp}, {fn}")
        if not (isinstance(self.pass_at, int) and self.pass_at >= 1):
            raise ValueError(f"pass@K needs a whole K ≥ 1, not {self.pass_at!r}")
        if (self.fp, self.fn) == (self.measured_fp, self.measured_fn):
            # Measured and trained through the same verifier: the counts already read its rewards.
            for name in ("fp", "fn", "measured_fp", "measured_fn"):
                object.__setattr__(self, name, 0.0)

    @property
    def exact(self) -> bool:
        """Whether the figures read the counts as they are: the verifier makes no error (FP = FN = 0) and
        the counts need no de-noising, whatever the credit."""
        return self.fp == 0.0 and self.fn == 0.0 and not self.denoising

    @property
    def denoising(self) -> bool:
        """Whether the counts were graded by a noisy verifier (--denoise) and are read back to the truth."""
        return self.measured_fp != 0.0 or self.measured_fn != 0.0

    def true_rate(self, r: ArrayLike) -> FloatArray:
        """``p̂ = clip((r − FP) / D, 0, 1)`` of the measuring verifier: a rate read through it, mapped back."""
        rr = np.asarray(r, dtype=np.float64)
        if not self.denoising:
            return rr
        D = 1.0 - self.measured_fp - self.measured_fn
        return np.asarray(np.clip((rr - self.measured_fp) / D, 0.0, 1.0), dtype=np.float64)

    @property
    def plain(self) -> bool:
        """An exact verifier and pass@1 credit: every quantity as the kernels define it."""
        return self.exact and self.pass_at == 1

    def rate(self, p: ArrayLike) -> FloatArray:
        """``r(p) = FP + (1 − FP − FN) p``: the chance of reward 1 for a prompt of pass rate p."""
        return np.asarray(self.fp + (1.0 - self.fp - self.fn) * np.asarray(p, dtype=np.float64))

    def __str__(self) -> str:
        return f"FP {self.fp:g}, FN {self.fn:g}"


@lru_cache(maxsize=256)
def channel(grader: Grader, d: int) -> FloatArray:
    """``C[j, m]``: P(m of d answers read right | j truly right), for j, m = 0…d."""
    from scipy import stats  # imported when a grader is used: scipy.stats costs start-up time

    j = np.arange(d + 1)
    right = stats.binom.pmf(j[None, :], j[:, None], 1.0 - grader.fn)  # right answers read right
    wrong = stats.binom.pmf(j[None, :], (d - j)[:, None], grader.fp)  # wrong answers read right
    out = np.zeros((d + 1, d + 1))
    for row in range(d + 1):
        out[row] = np.convolve(right[row, : row + 1], wrong[row, : d - row + 1])
    return out


@lru_cache(maxsize=256)
def inverse_channel(fp: float, fn: float, d: int) -> FloatArray:
    """``C⁻¹[m, j]``: the weight a count of m read right of d gives j truly right, for a verifier of (FP, FN);
    ``C⁻¹ C = I``.

    >>> c = inverse_channel(0.1, 0.2, 3) @ channel(Grader(0.1, 0.2), 3)
    >>> bool(np.allclose(c, np.eye(4), atol=1e-12))
    True
    """
    from scipy.special import comb

    D = 1.0 - fp - fn
    out = np.zeros((d + 1, d + 1))
    for m in range(d + 1):
        a = np.arange(m + 1)
        b = np.arange(d - m + 1)
        right = comb(m, a) * ((1.0 - fp) / D) ** a * (-fn / D) ** (m - a)  # a read right, truly right
        wrong = comb(d - m, b) * (-fp / D) ** b * ((1.0 - fn) / D) ** (d - m - b)  # b read wrong, truly right
        out[m] = np.convolve(right, wrong)
    return out


def graded(h: FloatArray, grader: Grader) -> FloatArray:
    """``h̃ = C h``: the group function of the true right count through the grader (h itself if exact); with
    counts graded by a noisy verifier, ``C⁻¹ C h`` of the count as read."""
    if grader.exact:
        return h
    out = h if grader.fp == 0.0 and grader.fn == 0.0 else channel(grader, h.size - 1) @ h
    if grader.denoising:
        out = inverse_channel(grader.measured_fp, grader.measured_fn, h.size - 1) @ out
    return np.asarray(out, dtype=np.float64)


def unbiased(h: FloatArray, k: ArrayLike, n: ArrayLike, grader: Grader) -> FloatArray:
    """``Σ_j Hyp(j; n, k, d) h̃(j)`` per (k, n): NaN where n < d."""
    from sigmatool.kernels._common import hypergeometric_pmf_of

    d = h.size - 1
    kk, nn = (np.asarray(x, dtype=np.float64) for x in np.broadcast_arrays(k, n))
    out = np.full(kk.shape, np.nan)
    ok = nn >= d
    if ok.any():
        j = np.arange(d + 1)
        ki, ni = kk[ok][:, None].astype(np.int64), nn[ok][:, None].astype(np.int64)
        inside = (j[None, :] <= ki) & (d - j[None, :] <= ni - ki)
        pmf = np.where(inside, hypergeometric_pmf_of(j[None, :], ni, ki, np.int64(d)), 0.0)
        out[ok] = pmf @ graded(h, grader)
    return out


def beta(h: FloatArray, A: ArrayLike, B: ArrayLike, grader: Grader) -> FloatArray:
    """``Σ_j BetaBin(j; d, A, B) h̃(j)``, elementwise over the broadcast (A, B)."""
    from scipy import stats

    d = h.size - 1
    AA, BB = np.broadcast_arrays(np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64))
    j = np.arange(d + 1)
    pmf = stats.betabinom.pmf(j, d, AA[..., None], BB[..., None])
    return np.asarray(pmf @ graded(h, grader), dtype=np.float64)


def beta_sqrt_variance(A: ArrayLike, B: ArrayLike, grader: Grader, nodes: int = 64) -> FloatArray:
    """``E[√(r (1 − r))]`` for p ~ Beta(A, B), r = r(p): Gauss–Jacobi quadrature per distinct (A, B); under
    pass@K, GRPO's large-group weight at r (:func:`sigmatool.kernels.passk.grpo_limit`)."""
    from scipy import special

    from sigmatool.kernels.passk import grpo_limit

    AA, BB = np.broadcast_arrays(np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64))
    out = np.empty(AA.shape)
    for index in np.ndindex(AA.shape):
        a, b = float(AA[index]), float(BB[index])
        x, w = special.roots_jacobi(nodes, b - 1.0, a - 1.0)  # weight (1 − x)^(b−1) (1 + x)^(a−1)
        r = grader.rate(grader.true_rate((x + 1.0) / 2.0))  # the posterior is on the rate as read
        out[index] = float(w @ grpo_limit(r, grader.pass_at) / w.sum())
    return out


def moment(d: int, a: int, b: int) -> FloatArray:
    """h of ``p^a (1 − p)^b`` over d draws (a + b ≤ d): ``[m]_a [d − m]_b / [d]_(a+b)``."""
    m = np.arange(d + 1, dtype=np.float64)
    return np.asarray(_falling(m, a) * _falling(d - m, b) / _falling(np.array(float(d)), a + b))


def _falling(x: FloatArray, r: int) -> FloatArray:
    out = np.ones_like(x)
    for i in range(r):
        out = out * (x - i)
    return out

"""The model of a trainer's DAPO batch loop: a step's keep law and the batches it draws, in closed form.

The loop mirrored is verl's ``RayDAPOTrainer.fit`` (``recipe/dapo/dapo_ray_trainer.py``): each generation
batch holds ``gen_batch_size`` prompts from the dataloader, ``n`` rollouts each; a prompt's group is kept when
the std of its rewards is > 0 (or it has one rollout); kept groups are concatenated until the step holds
``train_batch_size`` prompts, the surplus is cut (``batch[:traj_bsz]``), and a step still short after
``max_num_gen_batches`` batches raises ``ValueError(… Generated too many …)`` (never, when that is ≤ 0).

**Model.** Rewards are 0/1 and a prompt with pass rate p keeps its group with probability
``q = 1 − P_silent(p, n) = 1 − p^n − (1 − p)^n`` (``q = 1`` at n = 1), evaluated once per distinct value by
the chosen estimator (plug-in, unbiased, or posterior mean under ``--prior``). Each slot of a batch draws
a prompt with probability ``w_i / W`` (sampling with replacement) and then its group, independently, so
each slot is kept with probability ``q̄ = Σ w_i q_i / W`` and the kept count of a batch of B prompts is
exactly ``Binomial(B, q̄)``; batches are independent, so after k batches the kept count is
``Binomial(kB, q̄)``. Hence, with T = ``train_batch_size`` and M = ``max_num_gen_batches``:

- ``P(step done within k batches) = P(Binomial(kB, q̄) ≥ T)``; ``P(crash) = P(Binomial(MB, q̄) < T)``;
- expected batches drawn (a crashing step counts its M) ``Σ_{k=0}^{M−1} P(Binomial(kB, q̄) < T)``;
- by Wald's identity (the batches drawn are a stopping time) generated, kept and silent rollouts are
  ``n B E[batches]`` times 1, q̄ and 1 − q̄; trained ``n T (1 − P(crash))``; a crashing step's kept groups
  are lost, the rest of the kept ones are the surplus cut.

**Without replacement.** The dataloader shuffles: within an epoch a batch is a sample of B distinct prompts.
The kept count keeps its mean B q̄; its variance ``B q̄ (1 − q̄)`` shrinks by ``B σ_q² (B − 1)/(N − 1)``
(σ_q² the prompts' variance of q): the finite-population correction, reported as
``variance_ratio_without_replacement``. For the first step of an epoch the crash chance without
replacement is exact, ``p_crash_step_without_replacement`` (:mod:`sigmatool.kernels.shuffled`: the kept
count of m distinct prompts is a hypergeometric mixed over the dataset's Poisson-binomial total). Every
other figure samples with replacement. That errs high for one step, but not for a run: within an epoch a
step that kept many leaves fewer keepers for the next, so later steps crash more. Measured by enumerating
every permutation of a 6-prompt epoch (B = 2, T = 2, M = 2, two steps): the run's crash chance is 0.4100,
with replacement 0.4168, and steps taken as independent epoch-start steps 0.3882 (on the unsafe side); on
2,000 Big-Math prompts (B = 150, T = 170, 5 steps, 40,000 simulated epochs) 0.0583 ± 0.0012, 0.0638 and
0.0565. So the run's figures stay with replacement (within 0.01 of the truth in both), and the first step's
is given exactly beside them (tests/test_preflight.py).

**Plain loop** (no filter): every group of the batch trains, silent ones with zero advantage; the silent
count of a batch is ``Binomial(B, 1 − q̄)``. Silent rows stay in every loss aggregation's denominator
(verl's ``agg_loss`` in ``verl/trainer/ppo/core_algos.py``): the informative rows' share of the update
is lost in proportion to the silent tokens (``token-mean``) or the silent sequences (``seq-mean-token-mean``,
``seq-mean-token-sum``). With responses of equal length the three are equal, ``E = 1 − q̄``;
:func:`lost_shares` takes a length ratio for token-mean.

A run of many steps (its renewal sums over steps and epochs) is :mod:`sigmatool.preflight.runs`; the sums
of the other trainers' loops are :mod:`sigmatool.preflight.others`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.errors import UsageError
from sigmatool.estimators import Valuation
from sigmatool.kernels import Quantity
from sigmatool.kernels.shuffled import KeptLaw, kept_law
from sigmatool.kernels.shuffled import short_after as shuffled_short
from sigmatool.kernels.shuffled import short_mean as shuffled_mean
from sigmatool.preflight import others
from sigmatool.trainers.settings import LoopSettings

FloatArray = NDArray[np.float64]
ENDLESS_TAIL = 1e-15  # an endless loop's batch distribution is summed until this much chance is left


@dataclass(frozen=True)
class Keep:
    """The dataset's keep probabilities: ``q`` per distinct value, ``w`` the prompts that share it."""

    q: FloatArray
    w: FloatArray
    short: FloatArray | None = None  # NeMo-RL's leave-one-out: the chance a group keeps n − 1 rows
    # The law of k right of a group (its size the loop's law_size), per distinct value: P(k = j), j = 0…G;
    # None when the loop reads no more than q.
    pmf: FloatArray | None = None
    mean: FloatArray | None = None  # each distinct value's expected reward (0/1 scale), when known
    right: FloatArray | None = None  # P(k = n): the all-right groups a std filter drops
    # NeMo-RL's leave-one-out: (E[right rows kept], E[rows kept]) per value
    rows: tuple[FloatArray, FloatArray] | None = None
    # Pilot-Commit: E[p; the pilot kept] per value, the reward its commit rollouts expect
    committed: FloatArray | None = None

    @property
    def rate(self) -> float:
        """q̄: the chance that a sampled prompt's group is kept."""
        return math.fsum(self.w * self.q) / math.fsum(self.w)

    @property
    def short_rate(self) -> float:
        """The chance that a sampled prompt's group is kept one row short (0 but with leave-one-out)."""
        return 0.0 if self.short is None else math.fsum(self.w * self.short) / math.fsum(self.w)

    @property
    def prompts(self) -> float:
        return math.fsum(self.w)

    @cached_property
    def law(self) -> KeptLaw | None:
        """The law of the dataset's total of kept groups (its prompts drawn once each), for the shuffled
        dataloader's batches, made once per Keep; None when the prompts are no whole numbers (weights)."""
        if not np.allclose(self.w, np.round(self.w)) or self.prompts < 1:
            return None
        return kept_law(self.q, np.round(self.w).astype(np.int64))

    def variance_ratio(self, B: int) -> float:
        """Var(kept count) without replacement ÷ with replacement, for a batch of B of the N prompts."""
        N, rate = self.prompts, self.rate
        if rate <= 0 or rate >= 1 or N <= 1:
            return 1.0
        spread = math.fsum(self.w * (self.q - rate) ** 2) / N
        return 1.0 - spread * (min(B, N) - 1) / ((N - 1) * rate * (1 - rate))


def group_pmf(hist: pl.DataFrame, G: int, val: Valuation) -> FloatArray:
    """P(k = j right of a group of G), j = 0…G, per histogram row, as the estimator values p^m.

    With μ_m = E[p^m] (the estimator's ``all_right`` at size m, μ_0 = 1), ``P(k = j) = C(G, j) Σ_{i=0}^{G−j}
    (−1)^i C(G − j, i) μ_{j+i}``: exact for every estimator (plug-in: the binomial; unbiased from (k, n):
    the hypergeometric; a prior: its beta-binomial or mixture), the grader's rewards included. The
    alternating sum cancels: in floats its error is at most 2^G C(G, j) ε, so beyond G = 16 it runs in
    exact fractions of the μ's. NaN where the estimator gives none (G > n without a prior).

    >>> import polars as pl; from sigmatool.estimators import Valuation
    >>> [round(float(x), 4) for x in group_pmf(pl.DataFrame({"p": [0.5]}), 2, Valuation())[0]]
    [0.25, 0.5, 0.25]
    """
    from fractions import Fraction

    mu = np.ones((hist.height, G + 1))
    for m in range(1, G + 1):
        mu[:, m] = val.values(hist, Quantity.ALL_RIGHT, m)
    out = np.full((hist.height, G + 1), np.nan)
    known = ~np.isnan(mu).any(axis=1)
    for j in range(G + 1):
        coef = [math.comb(G, j) * math.comb(G - j, i) * (-1) ** i for i in range(G - j + 1)]
        if G <= 16:
            out[known, j] = mu[known, j:] @ np.array(coef, dtype=np.float64)
            continue
        for row in np.flatnonzero(known).tolist():
            out[row, j] = float(sum(c * Fraction(float(v)) for c, v in zip(coef, mu[row, j:], strict=True)))
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float64)


def band_chance(pmf: FloatArray, low: float, high: float, closed: bool) -> FloatArray:
    """P(low ≤ k/G ≤ high) (``closed``: Pilot-Commit's pilots) or P(low < k/G < high) (OpenRLHF's range),
    k/G as the trainer's float mean computes it."""
    G = pmf.shape[1] - 1
    mean = np.arange(G + 1) / G
    inside = (mean >= low) & (mean <= high) if closed else (mean > low) & (mean < high)
    return np.asarray(pmf[:, inside].sum(axis=1), dtype=np.float64)


def keep_probabilities(
    hist: pl.DataFrame, n: int, val: Valuation, settings: LoopSettings | None = None
) -> Keep:
    """:func:`_keep` with, where the loop reads them (a band, Pilot-Commit's pilots, pools, retirement),
    the law of k (:func:`group_pmf`), and each value's expected reward for the logged metrics. The one
    function every loop's keep chance comes from.

    Under pass@K credit (``val.pass_at`` K > 1) a group is kept iff it is not silent under pass@K (c = 0 or
    c > n − K drop it); the rewards, bands, pools and retirement read the answers themselves, k of n, by the
    law of pass@1 (:meth:`Valuation.one`), and ``right`` is E[k/n] over the groups dropped as all right."""
    keep = _keep(hist, n, val, settings)
    one = val.one()
    mean = np.asarray(one.values(hist, Quantity.ALL_RIGHT, 1), dtype=np.float64)
    right = _all_right_reward(hist, n, val) if n > 1 else None
    keep = replace(keep, mean=mean, right=right)
    if settings is not None and settings.trainer == "nemo-rl" and settings.leave_one_out and n > 2:
        if val.pass_at > 1:
            raise UsageError("NeMo-RL's leave-one-out baseline under --pass-at is not modelled")
        keep = replace(keep, rows=_loo_rows(hist, n, val, keep.q))
    if settings is None or not settings.needs_law:
        return keep
    G = settings.law_size
    pmf = group_pmf(hist, G, one)
    if settings.trainer == "pilot-commit":
        # E[p; lo ≤ k/G ≤ hi] = Σ_j (j + 1)/(G + 1) P_{G+1}(k = j + 1) over the band's j
        following = group_pmf(hist, G + 1, one)
        j = np.arange(G + 1)
        inside = (j / G >= settings.keep_lo) & (j / G <= settings.keep_hi)
        committed = (following[:, 1:] * ((j + 1) / (G + 1)))[:, inside].sum(axis=1)
        q = band_chance(pmf, settings.keep_lo, settings.keep_hi, True)
        return replace(keep, q=q, pmf=pmf, committed=np.asarray(committed, dtype=np.float64))
    if settings.trainer == "openrlhf" and settings.band != (0.0, 1.0):
        return replace(keep, q=band_chance(pmf, *settings.band, False), pmf=pmf)
    return replace(keep, pmf=pmf)


def _all_right_reward(hist: pl.DataFrame, n: int, val: Valuation) -> FloatArray:
    """E[k/n; the group is all right under the credit]: P(k = n) at pass@1; under pass@K the groups with
    c > n − K right, Σ_c (c/n) P(k = c) over them."""
    if val.pass_at == 1:
        return np.asarray(val.values(hist, Quantity.ALL_RIGHT, n), dtype=np.float64)
    pmf = group_pmf(hist, n, val.one())
    c = np.arange(n + 1)
    top = c > n - val.pass_at
    return np.asarray((pmf[:, top] * (c[top] / n)).sum(axis=1), dtype=np.float64)


def _loo_rows(hist: pl.DataFrame, n: int, val: Valuation, q: FloatArray) -> tuple[FloatArray, FloatArray]:
    """NeMo-RL's leave-one-out rows per value: (E[right rows kept], E[rows kept]). A group of 1 right keeps
    its n − 1 wrong rows, one of n − 1 right its n − 1 right rows, the rest with 0 < k < n all n:
    P(k = n − 1) = n (μ_{n−1} − μ_n), P(k = 1) likewise with (1 − p), E[k; 0 < k < n] = n (μ_1 − μ_n)."""
    mu = {m: val.values(hist, Quantity.ALL_RIGHT, m) for m in (1, n - 1, n)}
    nu = {m: val.values(hist, Quantity.ALL_WRONG, m) for m in (n - 1, n)}
    top, one = n * (mu[n - 1] - mu[n]), n * (nu[n - 1] - nu[n])
    right = n * (mu[1] - mu[n]) - one  # the 1-right groups' right row dropped
    rows = n * (q - one - top) + (n - 1) * (one + top)
    return np.asarray(right, dtype=np.float64), np.asarray(rows, dtype=np.float64)


def _keep(hist: pl.DataFrame, n: int, val: Valuation, settings: LoopSettings | None = None) -> Keep:
    """Each distinct value's chance that a group of n rollouts is kept: 1 − P_silent(p, n). At n = 1 verl
    and SkyRL keep every group; NeMo-RL's std of one row is 0, slime's NaN and AReaL's filter asks for
    0 < mean < 1: none of theirs is kept. With NeMo-RL's leave-one-out baseline a group with k = 1 or n − 1
    right keeps n − 1 rows: P = n (p (1 − p)^(n−1) + p^(n−1) (1 − p)), written with the all-wrong and
    all-right chances at n − 1 and n so that each estimator gives it; at n = 2 nothing is kept."""
    w = hist["prompts"].cast(pl.Float64).to_numpy()
    trainer = settings.trainer if settings is not None else "verl"
    if n == 1:
        return Keep(np.full_like(w, 1.0 if trainer in ("verl", "skyrl") else 0.0), w)
    q = np.clip(1.0 - val.values(hist, Quantity.SILENT, n), 0.0, 1.0)
    if trainer != "nemo-rl" or settings is None or not settings.leave_one_out:
        return Keep(q, w)
    if n == 2:  # the other row's std of one value is NaN, written 0: every row dropped
        return Keep(np.zeros_like(w), w)
    ends = sum(
        val.values(hist, quantity, n - 1) - val.values(hist, quantity, n)
        for quantity in (Quantity.ALL_WRONG, Quantity.ALL_RIGHT)
    )
    return Keep(q, w, np.clip(n * ends, 0.0, q))


def _binom() -> Any:
    """scipy's binomial law, imported on first use: importing scipy.stats takes 0.4 s, which a command that
    never reaches the loop (``report`` without ``--preflight-config``) should not pay."""
    from scipy.stats import binom

    return binom


def short_after(rate: float, B: int, T: int, k: NDArray[np.int64]) -> FloatArray:
    """P(fewer than T kept prompts after k batches of B) = P(Binomial(kB, q̄) < T), per k (1 at k = 0).

    >>> [round(float(x), 4) for x in short_after(0.5, 2, 2, np.array([0, 1, 2]))]
    [1.0, 0.75, 0.3125]
    """
    return np.asarray(_binom().cdf(T - 1, k * B, rate), dtype=np.float64)


@dataclass(frozen=True)
class Step:
    """One step of the filtered loop: P(exactly k batches) for k = 1…, P(crash) and the expected rollouts."""

    rate: float
    batches: FloatArray  # P(the step ends after exactly k batches), k = 1, 2, …
    p_crash: float
    expected_batches: float
    generated: float
    kept: float
    silent: float
    trained: float
    lost_in_crash: float

    @property
    def surplus(self) -> float:
        return max(self.kept - self.trained - self.lost_in_crash, 0.0)


def _rows_step(a: float, short_rate: float, B: int, T: int, n: int, k: NDArray[np.int64]) -> Step:
    """:func:`step` of a loop that fills T n rows, a share ``short_rate`` of its groups one row short."""
    short = np.minimum.accumulate(others.rows_short(a, short_rate, B, T, n, k))  # no rounding upward
    M = int(k[-1])
    expected = math.fsum(short[:-1].tolist())
    drawn = n * B * expected
    lost = others.rows_lost(a, short_rate, M * B, T, n) if T > 0 else 0.0
    p_crash = float(short[-1])
    kept = B * expected * (n * a - short_rate)
    return Step(
        a,
        short[:-1] - short[1:],
        p_crash,
        expected,
        drawn,
        kept,
        drawn * (1 - a),
        n * T * (1 - p_crash),
        lost,
    )


def replace_step(a: float, B: int, n: int, M: int, ratio: float) -> tuple[Step, float]:
    """SkyRL's replace: each batch of B groups passes on its own with chance π (:func:`others.replace_pass`),
    so a step takes K ~ Geometric(π) batches, at most M (0: endless), and crashes with (1 − π)^M; and the
    share of a trained batch's groups that are copies, 1 − E[good | pass] / B."""
    passes, good = others.replace_pass(a, B, ratio)
    fail = 1.0 - passes
    if M <= 0 and passes <= 0:
        inf = math.inf
        return Step(a, np.zeros(0), 0.0, inf, inf, 0.0, inf, 0.0, 0.0), math.nan
    last = M if M > 0 else max(math.ceil(math.log(ENDLESS_TAIL) / math.log(fail)), 1) if fail > 0 else 1
    f = passes * fail ** np.arange(last, dtype=np.float64)
    p_crash = fail**M if M > 0 else 0.0
    expected = (1.0 - fail**last) / passes if passes > 0 else float(last)
    drawn = n * B * expected
    kept = n * good * (1.0 - p_crash) if passes > 0 else 0.0
    copied = 1.0 - good / B if passes > 0 else math.nan
    return Step(a, f, p_crash, expected, drawn, kept, drawn * (1 - a), n * B * (1 - p_crash), 0.0), copied


def _endless_batches(rate: float, B: int, T: int) -> int:
    """Batches after which an endless loop's step is almost surely done (the tail below ENDLESS_TAIL)."""
    k = max(math.ceil(T / (B * rate)), 1)
    while short_after(rate, B, T, np.array([k]))[0] > ENDLESS_TAIL:
        k *= 2
    return k


def step(
    rate: float, B: int, T: int, n: int, M: int, law: KeptLaw | None = None, short_rate: float = 0.0
) -> Step:
    """The filtered loop's step at keep rate q̄, B prompts per batch, T kept prompts needed, n rollouts each,
    at most M batches (0: endless). With ``law`` (the dataset's kept total, :mod:`sigmatool.kernels.shuffled`)
    the batches are drawn without replacement from its N prompts, as a shuffled dataloader draws a step at
    the start of an epoch; where the step could need more than N prompts, with replacement. With
    ``short_rate`` > 0 (NeMo-RL's leave-one-out: that share of groups keeps n − 1 rows) the step needs T n
    rows (:func:`others.rows_short`)."""
    if M <= 0 and rate <= 0:
        inf = math.inf
        return Step(rate, np.zeros(0), 0.0, inf, inf, 0.0, inf, 0.0, 0.0)
    last = M if M > 0 else _endless_batches(rate, B, T)
    k = np.arange(last + 1, dtype=np.int64)
    if short_rate > 0:
        return _rows_step(rate, short_rate, B, T, n, k)
    shuffled = law is not None and last * B <= law.N
    if shuffled:
        assert law is not None
        short = shuffled_short(law, k * B, T)
    else:
        short = short_after(rate, B, T, k)
    batches = short[:-1] - short[1:]
    p_crash = float(short[-1]) if M > 0 else 0.0
    expected = math.fsum(short[:-1].tolist())
    lost = 0.0
    if M > 0 and T > 1 and shuffled:
        assert law is not None
        lost = n * shuffled_mean(law, M * B, T)
    elif M > 0 and T > 1:
        s = np.arange(T, dtype=np.float64)
        lost = n * math.fsum((s * _binom().pmf(s, M * B, rate)).tolist())
    drawn = n * B * expected
    return Step(
        rate, batches, p_crash, expected, drawn, drawn * rate, drawn * (1 - rate), n * T * (1 - p_crash), lost
    )


def lost_shares(rate: float, B: int, length_ratio: float = 1.0) -> dict[str, float]:
    """Expected share of the update lost to silent groups in a batch of B under each loss aggregation.

    The silent count Z is Binomial(B, 1 − q̄); seq-mean modes lose Z / B, token-mean Z r / (Z r + B − Z)
    with r the silent responses' mean length over the others' (1: equal lengths).

    >>> {k: round(v, 4) for k, v in lost_shares(0.75, 4).items()}
    {'lost_token_mean': 0.25, 'lost_seq_mean_token_mean': 0.25, 'lost_seq_mean_token_sum': 0.25}
    """
    z = np.arange(B + 1, dtype=np.float64)
    pmf = _binom().pmf(z, B, 1.0 - rate)
    tokens = z * length_ratio / np.maximum(z * length_ratio + (B - z), 1e-300)
    seq = math.fsum((pmf * z / B).tolist())
    return {
        "lost_token_mean": math.fsum((pmf * tokens).tolist()),
        "lost_seq_mean_token_mean": seq,
        "lost_seq_mean_token_sum": seq,
    }


def silent_over(rate: float, B: int, over: float) -> float:
    """P(more than a share ``over`` of a batch of B groups is silent)."""
    return float(_binom().sf(math.floor(over * B), B, 1.0 - rate))

"""Preflight: what a trainer's DAPO batch loop will do with a dataset, before the GPUs start.

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

A run of S steps crashes with ``1 − (1 − P(crash))^S``. A run of E epochs is ``E ⌊N / B⌋`` generation batches
(the dataloader drops the last partial batch; verl carries a short step across the epoch's end) and its
chance of no crash is a renewal sum over the steps that fit in them; with both, verl stops at whichever
comes first, and the sum runs over the steps left too (:func:`run_outcome`).

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

Columns (:data:`COLUMNS`), one row per setting: ``train_batch_size``, ``gen_batch_size``, ``n``,
``max_gen_batches``, ``filter``, ``steps``, ``epochs``, ``prompts``, ``keep_rate`` (q̄),
``expected_gen_batches``, ``p_crash_step``, ``p_crash_run``, ``expected_steps`` and
``expected_run_gen_batches`` (the optimizer steps the run takes and the generation batches they cost, a
crash ending it: what warm-up and cosine schedules need, as verl counts ``total_training_steps`` in
batches), ``steps_per_epoch``, ``rollouts_generated``,
``rollouts_kept``, ``rollouts_silent``, ``rollouts_surplus``, ``rollouts_lost_in_crash``,
``rollouts_trained`` (all expected, per step), ``share_trained``, ``min_safe_gen_batch_size``,
``min_safe_gen_batch_size_rollouts``, ``min_safe_max_gen_batches``, ``min_safe_max_gen_batches_rollouts``,
``variance_ratio_without_replacement``; then ``p_batches_1`` … ``p_batches_M`` (the chance a step ends after
exactly k batches); with no filter, :data:`PLAIN_COLUMNS` instead of the filter's.

**Other trainers** (``LoopSettings.trainer``): NeMo-RL's, SkyRL's, slime's and AReaL's loops are this
one's step and run under their own rules (:func:`step_of`, :func:`run_outcome_of`), with the sums that are
theirs alone in :mod:`sigmatool.preflight.others`. Long because the step, the run's renewal sums, the
searches for safe settings and the row and headline that show them are one model, read together.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.columns import labels, percent
from sigmatool.errors import DataError
from sigmatool.estimators import Valuation
from sigmatool.kernels import Quantity
from sigmatool.kernels.shuffled import KeptLaw, kept_law
from sigmatool.kernels.shuffled import short_after as shuffled_short
from sigmatool.kernels.shuffled import short_mean as shuffled_mean
from sigmatool.options import COLUMN
from sigmatool.preflight import others
from sigmatool.render import View, also_in_data, chance
from sigmatool.trainers.settings import STREAMED, LoopSettings

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot

FloatArray = NDArray[np.float64]
ENDLESS_TAIL = 1e-15  # an endless loop's batch distribution is summed until this much chance is left
SEARCH_LIMIT = 1 << 40
COLUMNS = (
    "train_batch_size",
    "gen_batch_size",
    "n",
    "max_gen_batches",
    "filter",
    "steps",
    "epochs",
    "prompts",
    "keep_rate",
    "expected_gen_batches",
    "p_crash_step",
    "p_crash_run",
    "expected_steps",
    "expected_run_gen_batches",
    "steps_per_epoch",
    "rollouts_generated",
    "rollouts_kept",
    "rollouts_silent",
    "rollouts_surplus",
    "rollouts_lost_in_crash",
    "rollouts_trained",
    "share_trained",
    "min_safe_gen_batch_size",
    "min_safe_gen_batch_size_rollouts",
    "min_safe_max_gen_batches",
    "min_safe_max_gen_batches_rollouts",
    "variance_ratio_without_replacement",
    "p_crash_step_without_replacement",
)
# The loops whose crash chance --plot draws against the generation batch (the others have no such knob).
CURVED = ("verl", "nemo-rl")
PLAIN_COLUMNS = (
    "silent_share_mean",
    "silent_over",
    "p_silent_over",
    "lost_token_mean",
    "lost_seq_mean_token_mean",
    "lost_seq_mean_token_sum",
)


@dataclass(frozen=True)
class Keep:
    """The dataset's keep probabilities: ``q`` per distinct value, ``w`` the prompts that share it."""

    q: FloatArray
    w: FloatArray
    short: FloatArray | None = None  # NeMo-RL's leave-one-out: the chance a group keeps n − 1 rows

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


def keep_probabilities(
    hist: pl.DataFrame, n: int, val: Valuation, settings: LoopSettings | None = None
) -> Keep:
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


def run_crash(s: Step, steps: int | None = None, total_batches: int | None = None) -> float:
    """P(the run crashes) when it ends at ``steps`` steps or after ``total_batches`` generation batches (the
    epochs' batches), whichever comes first, as verl's loop ends (either may be None: no such limit).

    Over batches alone, u(t) = P(no crash within the first t batches) is a renewal sum over the first
    step's length k with P(K = k) = f_k: ``u(t) = Σ_{k ≤ min(t, M)} f_k u(t − k) + [t < M] P(K > t)``,
    u(0) = 1; a step still short when the batches run out ends the run without a crash. With both limits
    the sum runs over steps too (:func:`run_outcome`).
    """
    if s.p_crash <= 0:
        return 0.0  # an endless loop, or a step that cannot fall short: no sum needed
    return run_outcome(s, steps, total_batches, crash_only=True)[0]


def run_outcome(
    s: Step, steps: int | None, total_batches: int | None, crash_only: bool = False
) -> tuple[float, float, float]:
    """(P(crash), expected optimizer steps, expected generation batches) of a run that ends at ``steps``
    steps, after ``total_batches`` batches, or at a crash, whichever comes first.

    A step takes one batch at least and M at most, so with S ≥ T batches the step limit never binds (one
    renewal sum in t, :func:`_over_batches`), and with S M ≤ T the batch limit never does (closed forms in
    the per-step crash chance q: (1 − q)^S survives). Between, with g_c(τ) the chance that c steps are done
    at batch τ, the run does its S steps (Σ_τ g_S(τ)), crashes after c < S (g_c(τ) q where T − τ ≥ M), or
    runs out of batches mid-step (g_c(τ) P(K > T − τ) where T − τ < M): :func:`others.reset_run` with one
    epoch. An endless loop's f runs until its tail is negligible.
    """
    q, f, M = s.p_crash, s.batches, s.batches.size
    S = steps
    if total_batches is not None and (S is None or S >= total_batches):
        return _over_batches(s, total_batches, crash_only)
    assert S is not None
    if total_batches is None or S * M <= total_batches:
        if q >= 1:
            return (1.0 if S else 0.0), 0.0, (float(M) if S else 0.0)
        crash = -math.expm1(S * math.log1p(-q)) if q > 0 else 0.0  # 1 − (1 − q)^S, to the last digit
        begun = crash / q if q > 0 else float(S)  # Σ_{j<S} (1 − q)^j
        return crash, begun * (1.0 - q), begun * s.expected_batches
    # Both limits may bind: the run is one epoch of total_batches batches with S steps left, summed over the
    # steps done (others.reset_run; its crash chance summed from the crashes, so a small one keeps its digits).
    return others.reset_run(f, q, total_batches, 1, S)


@dataclass(frozen=True)
class _Terms:
    """The parts of :func:`_over_batches`'s sums that do not depend on the batches before, per t = 0…T."""

    ends: FloatArray  # [t < M] P(K > t): the batches run out mid-step, no crash
    crash_cost: FloatArray  # [t ≥ M] P(K > M) M


def _terms(s: Step, T: int) -> _Terms:
    f, M = s.batches, s.batches.size
    t = np.arange(T + 1)
    tail = np.concatenate(([1.0], 1.0 - np.cumsum(f)))  # P(K > j), j = 0…M
    short = t < M
    return _Terms(np.where(short, tail[np.minimum(t, M)], 0.0), np.where(~short, s.p_crash * M, 0.0))


def _over_batches(s: Step, T: int, crash_only: bool = False) -> tuple[float, float, float]:
    """:func:`run_outcome` when only the batches end the run: one renewal sum over t (``crash_only``: the
    crash chance alone, the steps and batches left NaN; the searches for safe settings ask only that)."""
    f, M = s.batches, s.batches.size
    terms = _terms(s, T)
    w, e, b = np.zeros(T + 1), np.zeros(T + 1), np.zeros(T + 1)
    k = np.arange(1, M + 1, dtype=np.float64)
    reversed_f = f[::-1].copy()
    for t in range(1, T + 1):
        m = min(t, M)
        fk = reversed_f[M - m :]  # f_m … f_1, against x(t − m) … x(t − 1)
        # w(t) = P(a crash within t batches), summed from the crashes (a small one keeps its digits): the
        # first step crashes (where it has its M batches), or ends after k and a later one crashes.
        w[t] = float(np.dot(fk, w[t - m : t])) + (s.p_crash if t >= M else 0.0)
        if not crash_only:
            e[t] = float(np.dot(fk, 1.0 + e[t - m : t]))
            b[t] = float(np.dot(fk, k[:m][::-1] + b[t - m : t])) + terms.ends[t] * t + terms.crash_cost[t]
    crash = float(min(max(w[T], 0.0), 1.0))
    return (crash, math.nan, math.nan) if crash_only else (crash, float(e[T]), float(b[T]))


def batches_of_run(settings: LoopSettings, prompts: float, B: int) -> int | None:
    """Generation batches an epochs run draws (⌊N / B⌋ per epoch), or None for a run counted in steps."""
    if settings.epochs is None:
        return None
    return settings.epochs * int(prompts // B)


def step_of(keep: Keep, settings: LoopSettings, B: int, M: int) -> Step:
    """The trainer's step at gen batch size B and cap M (its own cap's meaning: NeMo-RL lets M + 1 batches
    run and fails at the first short batch when M ≤ 0; SkyRL's replace passes batches one by one)."""
    T, n = settings.train_batch_size, settings.n
    if settings.trainer == "nemo-rl":
        return step(keep.rate, B, T, n, max(M, 0) + 1, short_rate=keep.short_rate)
    if settings.replace:
        return replace_step(keep.rate, B, n, M, settings.min_replace_ratio)[0]
    return step(keep.rate, B, T, n, M)


def run_outcome_of(
    keep: Keep, settings: LoopSettings, s: Step, B: int, crash_only: bool = False
) -> tuple[float, float, float]:
    """:func:`run_outcome` as the trainer runs epochs: NeMo-RL starts each with an empty cache (a short
    step dropped, :func:`others.reset_run`), verl and SkyRL carry a short step over (``crash_only``: the
    steps and batches may be left NaN)."""
    if settings.trainer == "nemo-rl" and settings.epochs is not None:
        return _reset_epochs(s, int(keep.prompts // B), settings.epochs, settings.steps, crash_only)
    return run_outcome(s, settings.steps, batches_of_run(settings, keep.prompts, B), crash_only)


def _reset_epochs(
    s: Step, L: int, epochs: int, steps: int | None, crash_only: bool = False
) -> tuple[float, float, float]:
    """:func:`run_outcome` of epochs of L batches that each start afresh (NeMo-RL): one epoch is verl's run
    of L batches (a step short at its end ends without a crash); epochs alike when the step limit cannot
    bind, one epoch when it always ends first; else :func:`others.reset_run`."""
    M = s.batches.size
    if epochs == 1 or (steps is not None and steps * M <= L):
        return run_outcome(s, steps, L, crash_only)
    if steps is not None and steps < epochs * L:
        return others.reset_run(s.batches, s.p_crash, L, epochs, steps)
    crash, per_steps, per_batches = _over_batches(s, L, crash_only)
    if crash <= 0:
        return 0.0, epochs * per_steps, epochs * per_batches
    if crash >= 1:
        return 1.0, per_steps, per_batches
    run_crash = -math.expm1(epochs * math.log1p(-crash))  # 1 − (1 − c)^E
    begun = run_crash / crash  # Σ_{e<E} (1 − c)^e: the epochs begun
    return run_crash, begun * per_steps, begun * per_batches


def crash_of(keep: Keep, settings: LoopSettings, B: int, M: int) -> tuple[Step, float]:
    """The step and the run's crash chance at gen batch size B and cap M, the rest as ``settings``."""
    s = step_of(keep, settings, B, M)
    return s, (0.0 if s.p_crash <= 0 else run_outcome_of(keep, settings, s, B, crash_only=True)[0])


def run_of(keep: Keep, settings: LoopSettings) -> tuple[Step, float, float, float]:
    """The asked run's step, and its (P(crash), expected optimizer steps, expected generation batches): the
    crash chance :func:`crash_of` gives, from the same renewal sums as the steps and batches."""
    B = settings.gen
    s = step_of(keep, settings, B, settings.max_gen_batches)
    crash, steps, batches = run_outcome_of(keep, settings, s, B)
    return s, (0.0 if s.p_crash <= 0 else crash), steps, batches  # as run_crash: a step that cannot crash


def _smallest(safe: Callable[[int], bool], low: int, high: int) -> int | None:
    """The smallest x in [low, high] with safe(x), doubling from low; safe is monotone (False then True)."""
    hi = low
    while not safe(hi):
        if hi >= high:
            return None
        hi = min(hi * 2, high)
    lo = max(low, hi // 2)
    if lo == hi or safe(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if safe(mid) else (mid, hi)
    return hi


def min_safe_gen_batch_size(keep: Keep, settings: LoopSettings) -> int | None:
    """The smallest gen batch size (at the given cap) whose run crashes with chance ≤ ``settings.risk``."""
    if (settings.max_gen_batches <= 0 and settings.trainer != "nemo-rl") or keep.rate <= 0:
        return 1 if keep.rate > 0 else None
    high = int(keep.prompts) if settings.epochs is not None and settings.steps is None else SEARCH_LIMIT
    return _smallest(lambda B: _safe(keep, settings, B, settings.max_gen_batches), 1, max(high, 1))


def _safe(keep: Keep, settings: LoopSettings, B: int, M: int) -> bool:
    """Whether the run at B and M crashes with chance ≤ ``settings.risk``: decided by bounds where they
    suffice (a run of at most m steps, each crashing with chance q, crashes with at most 1 − (1 − q)^m, and
    at least that for the steps that fit its batches surely), else by the renewal sums."""
    s = step_of(keep, settings, B, M)
    q = s.p_crash
    if q <= 0:
        return True
    per_epoch = int(keep.prompts // B)
    reset = settings.trainer == "nemo-rl"  # its epochs start afresh: only the first one's steps are sure
    batches = None if settings.epochs is None else settings.epochs * per_epoch
    room = None if batches is None else (per_epoch if reset else batches) // max(s.batches.size, 1)
    most = min(x for x in (settings.steps, batches) if x is not None)
    surely = min(x for x in (settings.steps, room) if x is not None)
    if -math.expm1(most * math.log1p(-q)) <= settings.risk if q < 1 else most == 0:
        return True
    if surely > 0 and (q >= 1 or -math.expm1(surely * math.log1p(-q)) > settings.risk):
        return False
    return crash_of(keep, settings, B, M)[1] <= settings.risk


def min_safe_max_gen_batches(keep: Keep, settings: LoopSettings) -> int | None:
    """The smallest cap (at the given gen batch size) whose run crashes with chance ≤ ``settings.risk``."""
    if keep.rate <= 0:
        return None
    B = settings.gen
    runs = batches_of_run(settings, keep.prompts, B)
    high = runs + 1 if runs is not None else SEARCH_LIMIT
    return _smallest(lambda M: _safe(keep, settings, B, M), 1, high)


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


@dataclass(frozen=True)
class PreflightResult:
    """What ``preflight`` shows: the summary row, the step it describes, and the curve ``--plot`` draws."""

    summary: pl.DataFrame
    settings: LoopSettings
    step: Step
    estimator: str
    curve: pl.DataFrame | None = None
    trust: tuple[str, ...] = ()  # what the headline says of the numbers' trust, for every format

    def frame(self) -> pl.DataFrame:
        return self.summary

    def view(self) -> View:
        """The table view: the headline, the settings on one line, the figures a person acts on in one row (the
        rest named in a footnote), shares as percentages, notes on what is assumed."""
        names = self.summary.columns
        st = self.settings
        shown = others.shown(st) or (SHOWN if st.filter else PLAIN_SHOWN)
        hidden = [c for c in names if c not in GIVEN and c not in shown]
        footer = [
            f"{self.estimator} keep probabilities 1 − P_silent(p, n); prompts sampled with replacement "
            "(variance_ratio_without_replacement: the shuffled dataloader's correction, docs/preflight.md)."
        ]
        if st.filter and st.trainer in STREAMED:
            footer = [
                f"{self.estimator} keep probabilities; prompts drawn with replacement, groups finishing in an "
                "order that does not depend on their rewards (docs/preflight.md).",
                "prompts per step, rollouts trained: expected per step; data passes: the run's prompts ÷ the "
                "dataset's; no cap and no crash in this loop",
            ]
        elif st.filter:
            footer.append(
                "gen batches, rollouts trained: expected per step; safe gen batch size, safe max gen batches: the smallest that keep "
                f"the run's crash chance under {self.settings.risk:.0%} (--risk)"
            )
        else:
            footer.append(
                "lost token mean: the update's share in silent rows under token-mean, responses of equal length "
                "assumed; the lost_seq_* columns, the other aggregations, equal it then."
            )
        said = [c for c in hidden if self.summary[c].null_count() < self.summary.height]  # not all empty
        footer.append(also_in_data(_batches(said)))
        return View(
            headline=headline(self),
            footer=footer,
            percent=percent(names),
            labels=labels(names),
            hide=hidden,
            given=GIVEN,
        )

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None:
        """P(crash over the run) against the oversampling multiplier, and the wasted share of generation
        (None: the loop has no such curve)."""
        if self.curve is None:
            return None
        from sigmatool.figures.preflight import preflight_figure

        return preflight_figure(
            self.curve, self.settings, source=source, estimator=self.estimator, caption=caption, style=style
        )

    def warnings(self) -> tuple[str, ...]:
        return self.trust


def _shuffled_crash(keep: Keep, settings: LoopSettings) -> float | None:
    """The first step's crash chance without replacement, where the loop fills on kept groups."""
    law = keep.law
    if law is None or settings.replace or keep.short_rate > 0:
        return None
    M = max(settings.max_gen_batches, 0) + 1 if settings.trainer == "nemo-rl" else settings.max_gen_batches
    return step(keep.rate, settings.gen, settings.train_batch_size, settings.n, M, law).p_crash


def _filtered_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    B, M = settings.gen, settings.max_gen_batches
    s, p_run, run_steps, run_batches = run_of(keep, settings)
    if not math.isfinite(s.expected_batches):  # no cap, and no batch can fill the step: it runs forever
        raise DataError(never_fills(settings))
    # SkyRL's generation batch is its train batch: no gen batch size of its own to advise.
    safe_B = min_safe_gen_batch_size(keep, settings) if settings.trainer != "skyrl" else None
    safe_M = min_safe_max_gen_batches(keep, settings)
    per_epoch = int(keep.prompts // B) / s.expected_batches if s.expected_batches > 0 else math.nan
    row: dict[str, object] = {
        "expected_gen_batches": s.expected_batches,
        "p_crash_step": s.p_crash,
        "p_crash_run": p_run,
        "expected_steps": run_steps,
        "expected_run_gen_batches": run_batches,
        "steps_per_epoch": per_epoch,
        "rollouts_generated": s.generated,
        "rollouts_kept": s.kept,
        "rollouts_silent": s.silent,
        "rollouts_surplus": s.surplus,
        "rollouts_lost_in_crash": s.lost_in_crash,
        "rollouts_trained": s.trained,
        "share_trained": s.trained / s.generated if s.generated > 0 else math.nan,
        "min_safe_gen_batch_size": safe_B,
        "min_safe_gen_batch_size_rollouts": None
        if safe_B is None
        else step_of(keep, settings, safe_B, M).generated,
        "min_safe_max_gen_batches": safe_M,
        "min_safe_max_gen_batches_rollouts": None
        if safe_M is None
        else step_of(keep, settings, B, safe_M).generated,
        "variance_ratio_without_replacement": keep.variance_ratio(B),
        "p_crash_step_without_replacement": _shuffled_crash(keep, settings),
    }
    if settings.replace:  # SkyRL's replace: a batch fails on its own; a passing one's silent groups copied
        row["p_batch_fails"] = 1.0 - others.replace_pass(keep.rate, B, settings.min_replace_ratio)[0]
        row["copied_share"] = replace_step(keep.rate, B, settings.n, M, settings.min_replace_ratio)[1]
    last = s.batches.size if M > 0 or settings.trainer == "nemo-rl" else 0
    row.update({f"p_batches_{k}": float(v) for k, v in enumerate(s.batches[:last], start=1)})
    return row, s


def streamed_steps(keep: Keep, settings: LoopSettings) -> int:
    """A streamed loop's steps: slime's num_rollout, or ⌊N / T⌋ per epoch (placement_group.py l.239-244);
    AReaL's epochs × ⌊N / B⌋ (its dataloader's length), stopped at total_train_steps."""
    per_epoch = int(keep.prompts // settings.train_batch_size)
    if settings.trainer == "slime" and settings.steps is not None:
        return settings.steps
    limits = [
        x
        for x in (settings.steps, None if settings.epochs is None else settings.epochs * per_epoch)
        if x is not None
    ]
    return min(limits) if limits else 0


def _streamed_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    """slime's and AReaL's step: groups taken as they finish until T are accepted; no cap, no crash, so the
    cap's columns are empty. Generated rollouts are the completed groups'; slime's aborted groups (begun,
    not finished) are counted apart, and their prompts are drawn, lost but with --partial-rollout."""
    T, n, a = settings.train_batch_size, settings.n, keep.rate
    if a <= 0:
        raise DataError(never_fills(settings))  # a loop that runs forever: one line
    slime = settings.trainer == "slime"
    figures = others.streamed(a, T, settings.gen if slime else None)
    if settings.partial_rollout:  # the aborted groups resume next step: a step's fresh prompts are those done
        figures["submitted"] = figures["completed"]
    steps = streamed_steps(keep, settings)
    generated, silent = n * figures["completed"], n * (figures["completed"] - T)
    row: dict[str, object] = dict.fromkeys(COLUMNS[COLUMNS.index("expected_gen_batches") :])
    row.update(
        {
            "expected_gen_batches": figures["rounds"] if slime else None,
            "expected_steps": float(steps),
            "expected_run_gen_batches": steps * figures["rounds"] if slime else None,
            "rollouts_generated": generated,
            "rollouts_kept": n * T,
            "rollouts_silent": silent,
            "rollouts_trained": n * T,
            "share_trained": n * T / generated,
            "prompts_per_step": figures["submitted"],
            "data_passes": steps * figures["submitted"] / keep.prompts,
            "rollouts_aborted": n * figures["aborted"] if slime else None,
        }
    )
    return row, Step(a, np.zeros(0), 0.0, figures["completed"] / T, generated, n * T, silent, n * T, 0.0)


def never_fills(settings: LoopSettings) -> str:
    """The one line a loop that can never fill its batch gets (no cap, so it would draw forever)."""
    why = {
        "slime": "slime's filter drops every group of one rollout (torch's std of one value is NaN)",
        "areal": "AReaL's filter (0 < mean reward < 1) accepts no group of one rollout",
    }
    if settings.n == 1 and settings.trainer in why:
        reason, fix = why[settings.trainer], "give n > 1 or drop the filter"
    elif settings.replace:
        reason = f"no batch can have more than {settings.min_replace_ratio:.0%} of its groups differ"
        fix = "check the grader and the data, or set max_sample_batches"
    else:
        reason = "every group's rewards agree (each prompt never or always right)"
        fix = "check the grader and the data, or drop the filter"
    return f"{settings.name}'s loop never fills a step: {reason}, so it draws prompts forever (no cap); {fix}"


def _plain_steps(keep: Keep, settings: LoopSettings) -> int:
    """The plain loop's steps: one batch each, until the steps or the epochs' batches run out."""
    batches = batches_of_run(settings, keep.prompts, settings.gen)
    limits = [x for x in (settings.steps, batches) if x is not None]
    return min(limits) if limits else 0


def _plain_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    B = settings.gen
    s = step(1.0, B, B, settings.n, 1)  # every prompt trains: one batch, nothing cut
    row: dict[str, object] = {
        "expected_gen_batches": 1.0,
        "p_crash_step": 0.0,
        "p_crash_run": 0.0,
        "expected_steps": float(_plain_steps(keep, settings)),
        "expected_run_gen_batches": float(_plain_steps(keep, settings)),
        "rollouts_generated": s.generated,
        "rollouts_trained": s.trained,
        "silent_share_mean": 1.0 - keep.rate,
        "silent_over": settings.silent_over,
        "p_silent_over": silent_over(keep.rate, B, settings.silent_over),
        **lost_shares(keep.rate, B),
    }
    return row, replace(s, rate=keep.rate, silent=s.generated * (1 - keep.rate))


def summarize(keep: Keep, settings: LoopSettings) -> tuple[pl.DataFrame, Step]:
    """The one-row summary of ``settings`` on these keep probabilities, and the step it describes."""
    head: dict[str, object] = {
        "train_batch_size": settings.train_batch_size,
        "gen_batch_size": settings.gen,
        "n": settings.n,
        "max_gen_batches": None if settings.trainer in STREAMED else settings.max_gen_batches,
        "filter": settings.filter,
        "steps": settings.steps,
        "epochs": settings.epochs,
        "prompts": keep.prompts,
        "keep_rate": keep.rate,
    }
    if settings.filter and settings.trainer in STREAMED:
        rest, s = _streamed_row(keep, settings)
    else:
        rest, s = (_filtered_row if settings.filter else _plain_row)(keep, settings)
    return pl.DataFrame([{**head, **rest}], infer_schema_length=None), s


def curve(keep: Keep, settings: LoopSettings) -> pl.DataFrame:
    """P(crash over the run) and the share of generation thrown away against the multiplier B / T."""
    T = settings.train_batch_size
    top = max(4.0, 2.0 * settings.gen / T)
    rows = []
    for m in np.arange(0.25, top + 1e-9, 0.25).tolist():
        B = max(round(m * T), 1)
        s, p_run = crash_of(keep, settings, B, settings.max_gen_batches)
        waste = 1.0 - s.trained / s.generated if s.generated > 0 and math.isfinite(s.generated) else math.nan
        rows.append({"multiplier": B / T, "gen_batch_size": B, "p_crash_run": p_run, "waste_share": waste})
    return pl.DataFrame(rows)


def analyse(
    hist: pl.DataFrame, settings: LoopSettings, val: Valuation, figure: bool = False
) -> PreflightResult:
    """The loop's figures for ``settings`` on the histogram ``hist`` (``p``, [``k``, ``n``], ``prompts``)."""
    keep = keep_probabilities(hist, settings.n, val, settings)
    if np.isnan(keep.q).any():
        raise DataError(
            f"the chance that a group of n = {settings.n} rollouts is kept is not identified by these counts "
            f"(some prompts have fewer than {settings.n} samples, and no prior is identified for them: "
            f"{'; '.join(val.why_not()) or 'see the notes'}); give --prior npmle or --estimator plugin to "
            "assume one"
        )
    summary, s = summarize(keep, settings)
    drawn = curve(keep, settings) if figure and settings.filter and settings.trainer in CURVED else None
    estimator = val.label_at(hist, settings.n)
    summary = summary.with_columns(pl.lit(estimator).alias("estimator"))
    trust = tuple(line for line in (val.bias_note(),) if line)
    return PreflightResult(summary, settings, s, estimator, drawn, trust)


def headline(result: PreflightResult) -> str:
    """The sentence a person acts on."""
    row = result.summary.row(0, named=True)
    st = result.settings
    if not st.filter:
        return (
            f"Without the filter, {row['silent_share_mean']:.1%} of each batch's groups are silent on average "
            f"(P(more than {st.silent_over:.0%} silent) = {chance(row['p_silent_over'])}); with equal response "
            f"lengths that share of every update is lost under each loss aggregation. The run takes "
            f"{row['expected_steps']:,.0f} steps ({others.run_words(st)})."
        )
    if st.trainer in STREAMED:
        return others.streamed_headline(row, st)
    batch, cap, knob, safe_key = others.loop_words(st)
    safe = row[safe_key]
    safe_words = (
        f"{safe:,} is the smallest {knob} that keeps it under {st.risk:.0%}"
        if safe is not None
        else f"no {knob} keeps it under {st.risk:.0%}"
    )
    if st.trainer == "nemo-rl" and safe_key == "min_safe_gen_batch_size" and safe is not None:
        # int(P × m) ≥ safe exactly when m ≥ safe / P: rounded up, so that the multiplier said gives it
        multiplier = math.ceil(safe / st.train_batch_size * 1e4) / 1e4
        safe_words = (
            f"{safe:,} prompts a batch (batch_multiplier ≥ {multiplier:g}) is the smallest that keeps "
            f"it under {st.risk:.0%}"
        )
    thrown = 1.0 - row["share_trained"] if row["share_trained"] is not None else math.nan
    said = (
        f"With {batch} and {cap}, this run crashes with probability "
        f"{chance(row['p_crash_run'])} within {others.run_words(st)} ({chance(row['p_crash_step'])} per step); "
        f"{safe_words}, and {thrown:.0%} of generated rollouts will be thrown away."
    )
    said += others.loop_more(row, st)
    if st.epochs is not None:  # the optimizer's schedule needs its real step count (verl counts batches)
        said += (
            f" The run takes {row['expected_steps']:,.1f} optimizer steps on average, for "
            f"{row['expected_run_gen_batches']:,.1f} generation batches."
        )
    return said


# The settings, on a line above the table; then the figures the table shows, with and without the filter
# (at most 80 columns wide: share_trained gives rollouts_generated, and the rest is in the data formats).
GIVEN = ("train_batch_size", "gen_batch_size", "n", "max_gen_batches", "filter", "steps", "epochs", "prompts")
SHOWN = (
    "keep_rate",
    "expected_gen_batches",
    "p_crash_run",
    "rollouts_trained",
    "share_trained",
    "min_safe_gen_batch_size",
    "min_safe_max_gen_batches",
)
PLAIN_SHOWN = ("keep_rate", "silent_share_mean", "silent_over", "p_silent_over", "lost_token_mean")


@dataclass(frozen=True)
class PreflightColumns:
    """``preflight`` on several pass-rate columns: one loop each, shown side by side (no figure)."""

    results: Mapping[str, PreflightResult]

    def frame(self) -> pl.DataFrame:
        """The summaries, one row per column, keyed by it."""
        keyed = [
            r.summary.select(pl.lit(c, dtype=pl.String).alias(COLUMN), pl.all())
            for c, r in self.results.items()
        ]
        return pl.concat(keyed, how="vertical_relaxed")

    def view(self) -> View:
        """Each column's headline, named, then the summaries side by side."""
        first = next(iter(self.results.values())).view()
        lines = [f"{column}: {headline(result)}" for column, result in self.results.items()]
        return replace(first, headline="\n".join(lines), keys=(COLUMN,))

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None:
        return None

    def warnings(self) -> tuple[str, ...]:
        """Each column's warnings, named by it."""
        return tuple(f"{c}: {line}" for c, result in self.results.items() for line in result.warnings())


def _batches(names: list[str]) -> list[str]:
    """``names`` with ``p_batches_1`` … ``p_batches_M`` written as one range."""
    batches = [c for c in names if c.startswith("p_batches_")]
    if len(batches) < 3:
        return names
    rest = [c for c in names if c not in batches]
    return [*rest, f"{batches[0]} … {batches[-1]}"]

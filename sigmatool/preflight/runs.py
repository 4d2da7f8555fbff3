"""A run of many steps: its chance of a crash, its optimizer steps and its generation batches, as each
trainer runs its epochs (renewal sums over the step's law, :mod:`sigmatool.preflight.model`).

A run of S steps crashes with ``1 − (1 − P(crash))^S``. A run of E epochs is ``E ⌊N / B⌋`` generation batches
(the dataloader drops the last partial batch; verl carries a short step across the epoch's end) and its
chance of no crash is a renewal sum over the steps that fit in them; with both, verl stops at whichever
comes first, and the sum runs over the steps left too (:func:`run_outcome`). NeMo-RL starts each epoch
afresh (:func:`sigmatool.preflight.others.reset_run`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sigmatool.preflight import others
from sigmatool.preflight.model import FloatArray, Keep, Step, replace_step, step
from sigmatool.trainers.settings import LoopSettings


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

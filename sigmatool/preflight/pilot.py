"""Pilot-Commit's loop (arXiv:2605.26606; databricks/pilot-commit @ 6def20e, ``recipe/pc/pc_ray_trainer.py``),
round by round over an epoch, exactly but for the buffer's eviction.

Each round pilots a loader batch of B prompts with n0 rollouts (l.445-461); a pilot is kept when
``lo ≤ k/n0 ≤ 1 − upper`` (l.612-640), with chance π per prompt, so a round adds X ~ Binomial(B, π) to the
replay buffer. Before the round's pilots join, the step commits ``min(needed, buffer)`` prompts from the
buffer with n1 new rollouts each (l.478-520); the step is done when T are committed. A step still short
after ``max_num_gen_batches`` M rounds raises (l.668-683; M ≤ 0: never). At an epoch's end the half-filled
step and the buffer are dropped (l.842-852), so an epoch starts with an empty buffer and its first round
commits nothing: a cap of 1 always crashes.

**The chain.** Between rounds the state is either a step boundary with b in the buffer, or a step r
rounds in that still needs ``need`` prompts, its buffer the last round's pilots (all older ones were
committed: a short commit empties the buffer), X ~ Binomial(B, π) whatever the need. A round from b ≥ T
completes the step, leaving b − T + X; from b < T it leaves need T − b; from (r, need) it completes with
X ≥ need, leaving X − need + X', else (r + 1, need − X). The law of b is carried up to a cap
(``CAP_BATCHES`` × B above T, its tail merged there: a buffer that large fills every step). Entries
older than ``buffer_max_off_steps`` steps are evicted after each step (l.700); the chain keeps them, which is
exact when the buffer never holds pilots that old: when supply is short they are committed within a step,
when it is long the buffer stays above a batch and the rounds are the same (tests/test_preflight_loops.py
measures it against the loop with its eviction).

**The run.** Each epoch starts afresh, so a run of epochs with no step limit goes on with the chance the
last did not crash (:func:`pilot_run`); with a step limit that can end it within an epoch, the chain carries
the steps done too (:func:`epoch_by_steps`) and the renewal over epochs of
:func:`sigmatool.preflight.others.reset_run` sums it (:func:`pilot_run_exact`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sigmatool.preflight import others
from sigmatool.preflight.model import FloatArray

CAP_BATCHES = 4


def _binom() -> Any:
    from scipy.stats import binom

    return binom


@dataclass(frozen=True)
class PilotEpoch:
    """One epoch of L rounds from an empty buffer: expected steps done, rounds drawn, P(crash), the first
    step's P(crash) and expected rounds, and the expected prompts committed."""

    steps: float
    rounds: float
    p_crash: float
    p_crash_first_step: float
    first_step_rounds: float


def pilot_epoch(pi: float, B: int, T: int, M: int, L: int) -> PilotEpoch:
    """The chain of the module docstring over the L rounds of one epoch, the steps done summed (not
    carried: :func:`epoch_by_steps` carries them)."""
    x = _binom().pmf(np.arange(B + 1), B, pi)
    cap = T + CAP_BATCHES * B
    boundary = np.zeros((1, cap + 1))
    boundary[0, 0] = 1.0
    mid = np.zeros((1, (M - 1 if M > 0 else 1) + 1, T + 1))
    steps = crash = rounds = 0.0
    for _ in range(L):
        alive = float(boundary.sum() + mid.sum())
        if alive <= 1e-300:
            break
        rounds += alive
        left, mid, done, crashed = _round(boundary, mid, x, T, M)
        grown = _conv_rows(left, x)
        boundary = np.concatenate((grown[:, :cap], grown[:, cap:].sum(axis=1, keepdims=True)), axis=1)
        steps += float(done.sum())
        crash += float(crashed.sum())
    crash_first, rounds_first = first_step(pi, B, T, M, L)
    return PilotEpoch(steps, rounds, crash, crash_first, rounds_first)


def first_step(pi: float, B: int, T: int, M: int, L: int) -> tuple[float, float]:
    """(P(crash), expected rounds) of an epoch's first step: it completes at round r ≥ 2 when
    Binomial((r − 1) B, π) ≥ T (every earlier pilot committed), crashes when still short at round M, and
    ends unfinished when the epoch's L rounds run out."""
    top = M if M > 0 else L
    top = min(top, L)
    r = np.arange(1, top + 1)
    short = _binom().cdf(T - 1, (r - 1) * B, pi)  # P(still short after round r)
    rounds = 1.0 + math.fsum(short[:-1].tolist())
    crash = float(short[-1]) if M > 0 and M <= L else 0.0
    return crash, rounds


def _add_capped(target: FloatArray, values: FloatArray, offset: int) -> None:
    """``target[offset + i] += values[i]``, the tail beyond the cap added at the cap."""
    end = target.size - 1
    n = min(values.size, end + 1 - offset)
    target[offset : offset + n] += values[:n]
    if values.size > n:
        target[end] += values[n:].sum()


def pilot_run(epochs: list[PilotEpoch]) -> tuple[float, float, float]:
    """(P(crash), expected steps, expected rounds) of a run of these epochs with no step limit: each
    starts afresh, so the run goes on to the next with the chance the last did not crash."""
    alive, crash, done, drawn = 1.0, 0.0, 0.0, 0.0
    for e in epochs:
        crash += alive * e.p_crash
        done += alive * e.steps
        drawn += alive * e.rounds
        alive *= 1.0 - e.p_crash
    return min(crash, 1.0), done, drawn


def _conv_rows(rows: FloatArray, kernel: FloatArray) -> FloatArray:
    """Each row of ``rows`` convolved with ``kernel`` (full length), by FFT where it pays."""
    from scipy.signal import fftconvolve

    if rows.size == 0:
        return np.zeros((rows.shape[0], rows.shape[1] + kernel.size - 1))
    if rows.shape[0] * rows.shape[1] * kernel.size < 200_000:  # direct sums are faster when small
        return np.array([np.convolve(row, kernel) for row in rows])
    out = fftconvolve(rows, kernel[None, :], axes=1)
    return np.asarray(np.maximum(out, 0.0), dtype=np.float64)


def _round(
    boundary: FloatArray, mid: FloatArray, x: FloatArray, T: int, M: int
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """One round from rows of states (one row per count of steps done): the buffer the steps that finish
    leave before this round's pilots, the mid-step states after it, and per row the chance a step finishes
    and the chance of a crash."""
    rows, cap, R = boundary.shape[0], boundary.shape[1] - 1, mid.shape[1] - 1
    new_mid = np.zeros_like(mid)
    left = np.zeros((rows, cap + 1))
    left[:, : cap + 1 - T] += boundary[:, T:]  # from b ≥ T: done, b − T left
    done = boundary[:, T:].sum(axis=1)
    first = np.zeros((rows, T + 1))  # from b < T: one round in, short by T − b
    first[:, T - np.arange(T)] = boundary[:, :T]
    crashed = np.zeros(rows)
    if M == 1:
        crashed += first.sum(axis=1)
    else:
        new_mid[:, 1] += first
    for r in range(1, R + 1):
        if not mid[:, r].any():
            continue
        diff = _conv_rows(mid[:, r, ::-1], x)  # index X + T − need
        ahead = diff[:, T:]
        done += ahead.sum(axis=1)
        width = min(ahead.shape[1], cap + 1)
        left[:, :width] += ahead[:, :width]
        short = np.zeros((rows, T + 1))
        short[:, 1:] = diff[:, :T][:, ::-1]
        if M > 0 and r + 1 >= M:
            crashed += short.sum(axis=1)
        else:
            new_mid[:, min(r + 1, R)] += short
    return left, new_mid, done, crashed


def epoch_by_steps(pi: float, B: int, T: int, M: int, L: int, top: int) -> tuple[FloatArray, ...]:
    """The chain over one epoch with the steps done carried: (A, BA, D, C, BC) per count c = 0…``top`` as
    :func:`sigmatool.preflight.others.reset_run`'s renewal over epochs reads them: A(c) the chance c steps
    are done, BA(c) the expected round of the c-th step's end (where reached), D(c) the chance the epoch
    ends with exactly c steps and no crash, C(c) the chance it crashes after c, BC(c) the expected rounds
    drawn by then (where it does). Counts beyond ``top`` (the run's step limit) are not carried; only the
    counts holding more than 1e-30 of the largest one's chance are."""
    x = _binom().pmf(np.arange(B + 1), B, pi)
    cap = T + CAP_BATCHES * B
    base = 0  # the count of steps of the window's first row
    boundary = np.zeros((1, cap + 1))
    boundary[0, 0] = 1.0
    mid = np.zeros((1, (M - 1 if M > 0 else 1) + 1, T + 1))
    A, BA, D, C, BC = (np.zeros(top + 1) for _ in range(5))
    A[0] = 1.0
    for t in range(1, L + 1):
        mass = boundary.sum(axis=1) + mid.sum(axis=(1, 2))
        if mass.size == 0 or mass.max() <= 1e-300:
            break
        live = np.flatnonzero(mass > 1e-30 * mass.max())
        lo, hi = int(live[0]), int(live[-1]) + 1
        D[base : base + lo] += mass[:lo]  # rows left behind: kept in D at the epoch's end below
        boundary, mid, base = boundary[lo:hi], mid[lo:hi], base + lo
        left, new_mid, done, crashed = _round(boundary, mid, x, T, M)
        grown = _conv_rows(left, x)  # this round's pilots join what the finished steps left
        rows = min(boundary.shape[0], top - base)  # a finished step moves its row up one count
        boundary = np.zeros((boundary.shape[0] + 1, cap + 1))
        boundary[1 : 1 + rows, :cap] = grown[:rows, :cap]
        boundary[1 : 1 + rows, cap] = grown[:rows, cap:].sum(axis=1)
        mid = np.concatenate((new_mid, np.zeros((1, *new_mid.shape[1:]))))
        A[base + 1 : base + 1 + rows] += done[:rows]
        BA[base + 1 : base + 1 + rows] += t * done[:rows]
        C[base : base + crashed.size] += crashed
        BC[base : base + crashed.size] += t * crashed
        # A run that has done its ``top`` steps has ended: that row is not carried on.
        keep = min(boundary.shape[0], top - base)
        boundary, mid = boundary[:keep], mid[:keep]
    mass = boundary.sum(axis=1) + mid.sum(axis=(1, 2))
    D[base : base + mass.size] += mass
    return A, BA, D, C, BC


def pilot_run_exact(
    pi: float, B: int, T: int, M: int, L: int, epochs: int, steps: int
) -> tuple[float, float, float]:
    """(P(crash), expected steps, expected rounds) of ``epochs`` epochs of L rounds ending at ``steps``
    steps: :func:`epoch_by_steps` and the renewal over epochs of
    :func:`sigmatool.preflight.others.reset_run` (each epoch starts afresh)."""
    top = min(steps, L)
    A, BA, D, C, BC = epoch_by_steps(pi, B, T, M, L, top)
    return others._epochs_with_steps(A, BA, D, C, BC, L, epochs, steps)

"""The summary rows of open-instruct's, OpenRLHF's, prime-rl's and Pilot-Commit's loops
(:mod:`sigmatool.preflight.streams`, :mod:`sigmatool.preflight.pilot`), with verl's columns where they mean
the same thing: ``prompts_per_step``, ``rollouts_*`` (expected per step), ``expected_gen_batches`` (open-
instruct's attempts; Pilot-Commit's rounds), ``p_crash_step`` and ``p_crash_run``; and their own:
``steps_per_episode`` (OpenRLHF), ``p_crash_first_step``, ``pilot_n``, ``keep_lo``, ``keep_hi``
(Pilot-Commit), ``pool_<name>`` after the run (prime-rl's pools)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from sigmatool.errors import DataError
from sigmatool.preflight import logged, pilot, streams
from sigmatool.preflight.model import Keep, Step
from sigmatool.trainers.settings import LoopSettings

# The loops of this module.
REFILLED = ("open-instruct", "openrlhf", "prime-rl", "pilot-commit")


def never_fills(settings: LoopSettings) -> str:
    """The one line of a loop that can keep no group: it would draw prompts for ever."""
    return (
        f"{settings.name}'s loop never fills a step: no group is kept (every prompt's rewards agree, or "
        "none falls in the keep band), so it draws prompts forever (no cap); check the grader and the "
        "data, or drop the filter"
    )


def _step(a: float, prompts: float, kept: float, trained: float, n: int, rounds: float) -> Step:
    generated = n * prompts
    return Step(a, np.zeros(0), 0.0, rounds, generated, n * kept, generated - n * kept, trained, 0.0)


def _common(s: Step, prompts: float, steps: float, N: float) -> dict[str, object]:
    return {
        "expected_steps": steps,
        "rollouts_generated": s.generated,
        "rollouts_kept": s.kept,
        "rollouts_silent": s.silent,
        "rollouts_trained": s.trained,
        "share_trained": s.trained / s.generated if s.generated > 0 else math.nan,
        "prompts_per_step": prompts,
        "data_passes": steps * prompts / N if N > 0 else math.nan,
    }


def _length(settings: LoopSettings, prompts: float, N: float) -> float:
    """A streamed run's steps: its step limit, or its epochs' prompts ÷ a step's."""
    limits = [float(settings.steps)] if settings.steps is not None else []
    if settings.epochs is not None and prompts > 0:
        limits.append(float(math.floor(settings.epochs * N / prompts)))
    return min(limits) if limits else 0.0


def open_instruct_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    T, n, a = settings.train_batch_size, settings.n, keep.rate
    if a <= 0:
        raise DataError(never_fills(settings))
    f = streams.open_instruct_step(a, T, settings.refill)
    s = _step(a, f["results"], f["kept"], n * f["kept"], n, f["attempts"])
    row = _common(s, f["results"], _length(settings, f["results"], keep.prompts), keep.prompts)
    row.update({"expected_gen_batches": None if settings.refill else f["attempts"], "p_crash_step": 0.0,
                "p_crash_run": 0.0})  # fmt: skip
    return row, s


def openrlhf_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    T, B, n, a = settings.train_batch_size, settings.gen, settings.n, keep.rate
    N = min(keep.prompts, settings.max_samples) if settings.max_samples is not None else keep.prompts
    if a <= 0:
        raise DataError(never_fills(settings))
    per_episode = streams.episode_steps(a, int(N), B, T)
    prompts = T / a
    s = _step(a, prompts, T, n * T, n, math.nan)
    steps = per_episode * (settings.epochs or 1)
    if settings.steps is not None:
        steps = min(steps, settings.steps)
    row = _common(s, prompts, steps, N)
    row.update({"steps_per_episode": per_episode, "p_crash_step": 0.0, "p_crash_run": 0.0, "prompts": N})
    return row, s


def prime_rl_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    T, n = settings.train_batch_size, settings.n
    steps = settings.steps if settings.steps is not None else 0
    rates = np.array([keep.rate])
    pools: dict[str, float] = {}
    if settings.pools:
        run = streams.pool_run(keep, settings.pools, T, max(steps, 1), settings.refill)
        rates, pools = run["rates"], run["pools"]
    if settings.refill and (rates <= 0).any():
        raise DataError(never_fills(settings))
    a = float(rates.mean())
    batch = T * n
    if settings.refill:
        crash = np.array([streams.prime_crash_step(float(x), T, batch, n) for x in rates])
        prompts = float(np.mean(T / rates))
        s = _step(a, prompts, T, n * T, n, math.nan)
        p_step = float(crash.mean())
        p_run = -math.expm1(float(np.log1p(-np.minimum(crash, 1 - 1e-300)).sum()) * (steps / crash.size))
    else:
        s = _step(a, float(T), T * a, n * T * a, n, math.nan)
        prompts, p_step, p_run = float(T), 0.0, 0.0
    row = _common(s, prompts, float(steps), keep.prompts)
    row.update({"p_crash_step": p_step, "p_crash_run": p_run})
    row.update({f"pool_{name}": count for name, count in pools.items()})
    return row, s


def pilot_commit_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    T, B, M, pi = settings.train_batch_size, settings.gen, settings.max_gen_batches, keep.rate
    n0, n1 = settings.pilot_n, settings.n
    L = int(keep.prompts // B)
    if pi <= 0 and M <= 0:
        raise DataError(never_fills(settings))
    epoch = pilot.pilot_epoch(pi, B, T, M, L)
    epochs = settings.epochs or 1
    if settings.steps is not None and settings.steps < epochs * epoch.steps + 10 * math.sqrt(epochs * L):
        # the step limit may end the run within an epoch: the steps done carried exactly
        crash, steps, rounds = pilot.pilot_run_exact(pi, B, T, M, L, epochs, settings.steps)
    else:
        crash, steps, rounds = pilot.pilot_run([epoch] * epochs)
    per_step_rounds = rounds / steps if steps > 0 else math.inf
    # A step pilots B n0 rollouts a round and commits T prompts with n1 more; it trains the committed
    # prompts' pilots and their commits, T (n0 + n1) rollouts.
    generated = n0 * B * per_step_rounds + n1 * T
    trained = T * (n0 + n1)
    s = Step(pi, np.zeros(0), epoch.p_crash / max(epoch.steps + epoch.p_crash, 1e-300), per_step_rounds,
             generated, trained, generated - trained, trained, 0.0)  # fmt: skip
    row = _common(s, B * per_step_rounds, steps, keep.prompts)
    row.update(
        {
            "expected_gen_batches": per_step_rounds,
            "p_crash_step": s.p_crash,
            "p_crash_run": crash,
            "p_crash_first_step": epoch.p_crash_first_step,
            "expected_run_gen_batches": rounds,
            "steps_per_epoch": epoch.steps,
            "pilot_n": n0,
            "keep_lo": settings.keep_lo,
            "keep_hi": settings.keep_hi,
            "evict": settings.evict,
        }
    )
    return row, s


def slime_fallback_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    """slime's ``check_reward_nonzero_std_with_fallback`` (filter_hub/base_types.py l.14-24 @ 624b824): a
    refused group is dropped only while more than T groups remain submitted, so no round follows the
    first ⌈T / O⌉ (S = O ⌈T / O⌉ groups): with K = S − T and R ~ NB(T, a) the refusals before the T-th
    kept group, the step completes min(T + R, S) groups, and trains T − Binomial(S, a) refused groups when
    fewer than T of the S are kept (:func:`streams.fallback_step`)."""
    T, n, a = settings.train_batch_size, settings.n, keep.rate
    f = streams.fallback_step(a, T, settings.gen)
    rho = logged.silent_right(keep)
    kept_reward = logged.reward_trained(keep, replace(settings, fallback=False))
    silent = f["silent_trained"]
    trained_reward = ((T - silent) * kept_reward + silent * (rho if silent > 0 else 0.0)) / T
    s = Step(a, np.zeros(0), 0.0, 1.0, n * f["completed"], n * T, n * (f["completed"] - T + silent),
             n * T, 0.0)  # fmt: skip
    steps = float(streamed_steps(keep, settings))
    row = _common(s, f["submitted"], steps, keep.prompts)
    row.update(
        {
            "expected_gen_batches": f["rounds"],
            "p_crash_step": 0.0,
            "p_crash_run": 0.0,
            "rollouts_aborted": n * (f["submitted"] - f["completed"]),
            "rollouts_silent_trained": n * silent,
            "reward_trained": trained_reward,
            "log:rollout/raw_reward": trained_reward,
        }
    )
    return row, s


def areal_dynamic_row(keep: Keep, settings: LoopSettings) -> tuple[dict[str, object], Step]:
    """AReaL with ``dynamic_bs=True`` (workflow_executor.py l.705-727 @ 4aef98d): a step stops at
    batch_size B attempts and trains the accepted ones, Binomial(B, a) of them, none refilled;
    ``p_empty_step`` = (1 − a)^B."""
    B, n, a = settings.train_batch_size, settings.n, keep.rate
    s = _step(a, float(B), B * a, n * B * a, n, 1.0)
    row = _common(s, float(B), float(streamed_steps(keep, settings)), keep.prompts)
    row.update({"expected_gen_batches": 1.0, "p_crash_step": 0.0, "p_crash_run": 0.0,
                "p_empty_step": (1.0 - a) ** B})  # fmt: skip
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

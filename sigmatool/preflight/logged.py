"""What a loop's logged metrics will read: ``reward_dataset`` (the data's mean reward, 0/1 scale),
``reward_trained`` (the mean reward of the rollouts a step trains on) and a ``log:<key>`` column per metric,
named as the trainer logs it, at the scale it logs it (docs/preflight.md, "What the logs read").

A filter that keeps groups with 0 < k < n trains on E[k/n; 0 < k < n] / P(0 < k < n) = (p − P(k = n)) / q
per value, the all-right groups' rewards left out: the trained reward sits below the data's whenever solved
prompts are filtered. Each metric's expectation is per step; a share over a random number of groups takes
its exact expectation where the loop's law gives it (R ~ NB(T, a) the groups refused before T are kept).

- verl's ``critic/score/mean`` (``recipe/dapo/dapo_ray_trainer.py`` l.411 @ 48ea0a7): the trained batch's
  score, math_dapo's +1 / −1, so 2 reward_trained − 1.
- SkyRL's ``reward/avg_raw_reward`` (``trainer.py`` l.1037-1115 @ a956457), slime's ``rollout/raw_reward``
  (``train_metric_utils.py`` l.189-215 @ 624b824), AReaL's ``task_reward`` (``actor.py`` l.259-306 @
  4aef98d): the kept groups' mean reward, 0/1.
- NeMo-RL's ``reward`` (``grpo.py`` l.3095-3099 @ 7ea279a): the kept rows' mean; with the leave-one-out
  baseline a group of 1 right keeps its n − 1 wrong rows and one of n − 1 right its n − 1 right rows.
- open-instruct (``data_loader.py`` @ e6c3044, l.1545-1548 and l.972-976): ``scores`` (units of
  ``verification_reward``, 10), ``real_batch_size_ratio`` (rollouts trained ÷ n T),
  ``batch/filtered_prompts_pct`` (filtered ÷ seen, a share), ``batch/percent_solved_mean`` (kept groups'
  k/n).
- OpenRLHF's ``dynamic_filtering_pass_rate`` (``samples_generator.py`` l.122-123 @ 3c3be62): rollouts kept
  ÷ prompts consumed × 100, so 100 n B / (B + R): up to 100 n, not a percentage of anything.
- prime-rl (``orchestrator.py`` l.696-702, ``metrics.py`` l.324-357 @ 559b447): ``train/agg/all/<agent>/
  reward/mean`` averages every group since the last ship, ``…/effective/…`` the shipped ones, and
  ``…/all/<agent>/is_admitted/mean`` the share admitted (its admission rate).
- Pilot-Commit's ``filtering_stats/pass_rate`` (``pc_ray_trainer.py`` l.80-81, 147-150 @ 6def20e): the
  step's pilots kept ÷ piloted, π.
"""

from __future__ import annotations

import math

import numpy as np

from sigmatool.preflight import streams
from sigmatool.preflight.model import Keep
from sigmatool.trainers.settings import LoopSettings


def _mean(keep: Keep, values: np.ndarray) -> float:
    return math.fsum((keep.w * values).tolist()) / math.fsum(keep.w.tolist())


def reward_dataset(keep: Keep) -> float:
    """The data's mean reward (0/1): the prompts' mean pass rate."""
    return math.nan if keep.mean is None else _mean(keep, keep.mean)


def _kept_reward(keep: Keep, settings: LoopSettings) -> float:
    """E[k/n | kept] over the prompts drawn: the kept groups' mean reward."""
    if keep.pmf is not None and settings.trainer in ("pilot-commit", "openrlhf") and keep.pmf.shape[1] > 1:
        G = keep.pmf.shape[1] - 1
        mean = np.arange(G + 1) / G
        lo, hi = (settings.keep_lo, settings.keep_hi) if settings.trainer == "pilot-commit" else settings.band
        inside = (
            (mean >= lo) & (mean <= hi) if settings.trainer == "pilot-commit" else (mean > lo) & (mean < hi)
        )
        rewarded = (keep.pmf[:, inside] * mean[inside]).sum(axis=1)
        kept = _mean(keep, keep.pmf[:, inside].sum(axis=1))
        if kept <= 0:
            return math.nan
        if settings.trainer == "pilot-commit" and keep.committed is not None:
            # the committed prompt's n0 pilot rollouts and its n1 new ones, whose reward is E[p | kept]
            n0, n1 = settings.pilot_n, settings.n
            return (n0 * _mean(keep, rewarded) + n1 * _mean(keep, keep.committed)) / ((n0 + n1) * kept)
        return _mean(keep, rewarded) / kept
    if keep.mean is None or keep.right is None:
        return math.nan
    if settings.n == 1:
        return reward_dataset(keep)
    return _mean(keep, keep.mean - keep.right) / keep.rate if keep.rate > 0 else math.nan


def reward_trained(keep: Keep, settings: LoopSettings) -> float:
    """The mean reward (0/1) of the rollouts a step trains on, as the loop chooses them."""
    filtered = settings.filter or settings.trainer == "pilot-commit"
    if not filtered:
        return reward_dataset(keep)
    if settings.trainer == "nemo-rl" and settings.leave_one_out and keep.rows is not None:
        right, rows = keep.rows
        return _mean(keep, right) / _mean(keep, rows) if _mean(keep, rows) > 0 else math.nan
    return _kept_reward(keep, settings)


def silent_right(keep: Keep) -> float:
    """The filtered groups' mean reward: the share of them that are all right (ρ), whose rewards are all 1;
    under pass@K credit, E[k/n] over those with c > n − K right."""
    if keep.right is None:
        return math.nan
    silent = 1.0 - keep.rate
    return _mean(keep, keep.right) / silent if silent > 0 else math.nan


def logged(keep: Keep, settings: LoopSettings) -> dict[str, float]:
    """The ``log:<key>`` columns of the loop: what each metric the trainer logs will read, per step."""
    data, trained = reward_dataset(keep), reward_trained(keep, settings)
    T, n, a = settings.train_batch_size, settings.n, keep.rate
    filtered = settings.filter
    t = settings.trainer
    if t == "verl":
        return {"log:critic/score/mean": 2.0 * trained - 1.0}
    if t == "skyrl":
        return {"log:reward/avg_raw_reward": trained}
    if t == "slime":
        return {"log:rollout/raw_reward": trained}
    if t == "areal":
        return {"log:task_reward": trained}
    if t == "nemo-rl":
        return {"log:reward": trained}
    if t == "open-instruct":
        if not filtered:
            ratio, pct = 1.0, 0.0
        elif settings.refill:
            ratio, pct = 1.0, 1.0 - streams.refill_pass_rate(a, T, 1) / 100.0
        else:
            some = -math.expm1(T * math.log1p(-a)) if a < 1 else 1.0
            ratio = a / some if some > 0 else math.nan
            pct = 1.0 - ratio
        return {
            "log:scores": 10.0 * trained,
            "log:real_batch_size_ratio": ratio,
            "log:batch/filtered_prompts_pct": pct,
            "log:batch/percent_solved_mean": trained,
        }
    if t == "openrlhf":
        return {
            "log:dynamic_filtering_pass_rate": streams.refill_pass_rate(a, settings.gen, n)
            if filtered
            else math.nan
        }
    if t == "prime-rl":
        agent = "<agent>"
        if settings.refill:
            e = streams.refill_pass_rate(a, T, 1) / 100.0  # E[T / (T + R)]
            everything = trained * e + silent_right(keep) * (1.0 - e)
            admitted = e
        else:
            everything, admitted = data, 1.0
        return {
            f"log:train/agg/all/{agent}/reward/mean": everything,
            f"log:train/agg/effective/{agent}/reward/mean": trained if filtered or settings.refill else data,
            f"log:train/agg/all/{agent}/is_admitted/mean": admitted,
        }
    if t == "pilot-commit":
        return {"log:filtering_stats/pass_rate": a}
    return {}


def columns(keep: Keep, settings: LoopSettings) -> dict[str, float]:
    """``reward_dataset``, ``reward_trained`` and the ``log:<key>`` columns."""
    return {
        "reward_dataset": reward_dataset(keep),
        "reward_trained": reward_trained(keep, settings),
        **logged(keep, settings),
    }

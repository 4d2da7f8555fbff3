"""Retirement of solved prompts over epochs (``--retire P [--recheck F]``): ScaleRL's No-Positive-Resampling
(arXiv:2510.13786), open-instruct's ``no_resampling_pass_rate``, Pilot-Commit's ``exclude_threshold_upper``.

Each epoch draws every prompt of its pool once (but the last partial batch, where the dataloader drops
it: a share ⌊N / B⌋ B / N of the pool, each prompt alike); a prompt whose group scores k/n ≥ P, as the trainer
computes the mean, leaves the pool at the next epoch's start; each retired prompt returns with chance F at
each epoch's start. Per distinct value i with w_i(e) prompts in the pool and r_i = P(k/n ≥ P):
retired_i(e) = w_i(e) r_i; the stock S_i = R_i(e) + retired_i(e); w_i(e + 1) = w_i(e) (1 − r_i) + F S_i and
R_i(e + 1) = (1 − F) S_i. Exact in expectation: each prompt's path is a two-state chain.

The trainers compute the mean their own way: open-instruct's ``percent_solved`` is ``mean(scores) /
max_possible_score``, its scores in units of ``verification_reward`` (10; data_loader.py l.452, l.810-813),
so k/n is ``(10 k / n) / 10`` in floats; Pilot-Commit's and the rest ``np.mean`` of 0/1, k/n. open-instruct
sends a prompt's replacement before it records the exclusion (l.789-800), so the ``async_steps`` × T prompts
in flight when an epoch's last prompt is sent are retired an epoch late (the reshuffle of l.160-172 reads
the exclusions recorded so far): they are in the next epoch's pool, and leave after it whatever they score.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import polars as pl

from sigmatool.preflight.model import FloatArray, Keep
from sigmatool.trainers.settings import LoopSettings

EPOCH_COLUMNS = ("epoch", "prompts_start", "retired", "steps_in_epoch")
MAX_EPOCHS = 1000  # a run counted in steps stops its table here, or where the pool falls below a batch


def retire_chance(pmf: FloatArray, threshold: float, trainer: str) -> FloatArray:
    """P(k/n ≥ P) per value, k/n as the trainer computes it (open-instruct: ``(10 k / n) / 10``)."""
    G = pmf.shape[1] - 1
    j = np.arange(G + 1)
    mean = (10.0 * j / G) / 10.0 if trainer == "open-instruct" else j / G
    return np.asarray(pmf[:, mean >= threshold].sum(axis=1), dtype=np.float64)


# The loops whose dataloader drops an epoch's last partial batch: its prompts are not drawn that epoch.
DROP_LAST = ("verl", "nemo-rl", "skyrl", "pilot-commit")


def drawn_share(N: float, settings: LoopSettings) -> float:
    """The share of a pool of N an epoch draws: ⌊N / B⌋ B / N where the dataloader drops the last partial
    batch, else all."""
    if settings.trainer not in DROP_LAST or N <= 0:
        return 1.0
    B = settings.gen
    return (N // B) * B / N


def lag_of(settings: LoopSettings) -> int:
    """The prompts retired an epoch late: open-instruct's async_steps × T in flight; none elsewhere."""
    return settings.async_steps * settings.train_batch_size if settings.trainer == "open-instruct" else 0


def epochs(
    keep: Keep, settings: LoopSettings, steps_of: Callable[[Keep], float]
) -> tuple[pl.DataFrame, int | None, float | None]:
    """One row per epoch (``epoch``, ``prompts_start``, ``retired``, ``steps_in_epoch``: expected), the
    first epoch whose pool is below a batch (None: none within the run), and the steps before it;
    ``steps_of`` gives an epoch's steps on a pool's keep chances."""
    assert keep.pmf is not None
    assert settings.retire is not None
    r = retire_chance(keep.pmf, settings.retire, settings.trainer)
    F, A = settings.recheck, lag_of(settings)
    w, stock = keep.w.astype(np.float64), np.zeros_like(keep.w, dtype=np.float64)
    late = np.zeros_like(w)  # the retirements of the epoch before's last A prompts, recorded now
    rows: list[dict[str, object]] = []
    steps_done, below, steps_below = 0.0, None, None
    batch = settings.gen
    limit = settings.epochs if settings.epochs is not None else MAX_EPOCHS
    for e in range(1, limit + 1):
        N = math.fsum(w.tolist())
        if N < batch and below is None:
            below, steps_below = e, steps_done
        if settings.steps is not None and steps_done >= settings.steps:
            break  # the run's steps are done
        if settings.epochs is None and N < batch:
            break
        pool = replace(keep, w=w)
        steps = steps_of(pool) if N >= 1 else 0.0
        # The prompts marked late (in the pool, their exclusion recorded) leave now whatever they score;
        # the rest retire on time, or late when among the last A of the epoch.
        fresh = np.maximum(w - late, 0.0) * r * drawn_share(N, settings)
        retired = fresh * (max(N - A, 0.0) / N if N > 0 else 0.0) + late
        late = fresh * (min(A, N) / N if N > 0 else 0.0)
        rows.append(
            {"epoch": e, "prompts_start": N, "retired": math.fsum(retired.tolist()), "steps_in_epoch": steps}
        )
        steps_done += steps
        total = stock + retired
        w = np.maximum(w - retired, 0.0) + F * total
        stock = (1.0 - F) * total
    frame = pl.DataFrame(rows, schema={"epoch": pl.Int64, "prompts_start": pl.Float64, "retired": pl.Float64,
                                       "steps_in_epoch": pl.Float64})  # fmt: skip
    return frame, below, steps_below

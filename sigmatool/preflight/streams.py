"""The loops that refill a step from a stream of prompts: open-instruct's, OpenRLHF's and prime-rl's
(docs/preflight.md, "Other trainers' loops"). Each step's figures in closed form at the keep chance a
(:func:`sigmatool.preflight.model.keep_probabilities`), groups drawn with replacement and kept on their own,
as in the verl loop's model.

- **open-instruct** (allenai/open-instruct @ e6c3044, ``open_instruct/data_loader.py``): a step takes
  ``num_unique_prompts_rollout`` T results (l.1063); without ``active_sampling`` a filtered group counts
  (l.1129-1133), so the step keeps Binomial(T, a) groups, and a step of none is redone (l.1165-1171,
  l.1443-1448): attempts are Geometric(1 − (1 − a)^T). With ``active_sampling`` it waits for T kept ones:
  T + R results, R ~ NB(T, a) the filtered ones. No cap, no crash; the run is ``total_episodes`` // (T n)
  steps (``grpo_fast.py`` l.1032-1034).
- **OpenRLHF** (OpenRLHF/OpenRLHF @ 3c3be62, ``openrlhf/trainer/ppo_utils/samples_generator.py``): a call
  dispatches ``vllm_generate_batch_size`` B prompts (the rollout batch T by default) and replaces each
  filtered group by one new prompt (l.183-195), so it consumes B + R, R ~ NB(B, a); out of prompts in the
  middle of a refill the call is dropped and the episode ends (l.187-190); a call begun with fewer than
  B prompts left trains them when none is filtered. :func:`episode_steps` sums that exactly.
- **prime-rl** (PrimeIntellect-ai/prime-rl @ 559b447, ``orchestrator/train_sink.py``): a step ships
  ``batch_size`` rollouts, T = batch_size / group_size groups; without a gate zero-advantage samples are
  pruned after the cut (l.361-367), so n Binomial(T, a) rollouts train; an ``advantage_range`` gate
  (``curriculum/gates/adv.py`` l.25-36) refills instead, and ⌈10 batch_size / n⌉ rejected groups in a row
  raise ``RuntimeError`` (l.28, l.309-338): a run before one admission reaches it with (1 − a)^L, so a
  step of T admissions crashes with 1 − (1 − (1 − a)^L)^T.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sigmatool.preflight.model import FloatArray, Keep

TAIL = 1e-16


def _stats() -> Any:
    import scipy.stats

    return scipy.stats


def open_instruct_step(a: float, T: int, refill: bool) -> dict[str, float]:
    """open-instruct's step at keep chance a: (results read, attempts, kept groups trained), expected.

    >>> {k: round(v, 4) for k, v in open_instruct_step(0.5, 2, False).items()}
    {'results': 2.6667, 'attempts': 1.3333, 'kept': 1.3333}
    """
    if a <= 0:
        return {"results": math.inf, "attempts": math.inf, "kept": 0.0}
    if refill:
        return {"results": T / a, "attempts": math.nan, "kept": float(T)}
    some = -math.expm1(T * math.log1p(-a)) if a < 1 else 1.0  # P(at least one of T kept)
    return {"results": T / some, "attempts": 1.0 / some, "kept": T * a / some}


def refill_pass_rate(a: float, B: int, n: int) -> float:
    """OpenRLHF's ``dynamic_filtering_pass_rate``: E[100 × kept rollouts ÷ prompts consumed] =
    E[100 n B / (B + R)], R ~ NB(B, a) (samples_generator.py l.122-123)."""
    if a <= 0:
        return 0.0
    if a >= 1:
        return 100.0 * n
    st = _stats()
    hi = int(st.nbinom.ppf(1 - TAIL, B, a)) + 1
    r = np.arange(hi + 1)
    return float(100.0 * n * B * math.fsum((st.nbinom.pmf(r, B, a) / (B + r)).tolist()))


def episode_steps(a: float, N: int, B: int, T: int) -> float:
    """OpenRLHF's expected steps in one pass over N prompts: calls of B prompts, each filtered one
    replaced, complete while the prompts last (B + NB(B, a) ≤ what is left); a call begun with r < B
    prompts left trains them when none is filtered (chance a^r); a call's B groups are served as B / T
    steps (⌈r / T⌉ for the short one).

    The s-th call completes iff s B + NB(s B, a) ≤ N; a short call follows s complete ones when their
    consumption is N − r, 0 < r < B.
    """
    if a <= 0 or N <= 0:
        return 0.0
    st = _stats()
    per_call = B / T
    s = np.arange(1, N // B + 1)
    complete = math.fsum(st.nbinom.cdf(N - s * B, s * B, a).tolist()) if s.size else 0.0
    r = np.arange(1, B)
    short = 0.0
    if r.size:
        starts = np.concatenate(([0], s))
        for count in starts.tolist():
            left = N - count * B - r  # the filtered ones of ``count`` complete calls
            if count == 0:
                chance = (left == 0).astype(np.float64)
            else:
                chance = np.where(left >= 0, st.nbinom.pmf(np.maximum(left, 0), count * B, a), 0.0)
            short += math.fsum((chance * a**r * np.ceil(r / T)).tolist())
    return per_call * complete + short


def prime_crash_step(a: float, T: int, batch_rollouts: int, n: int) -> float:
    """prime-rl's gate: P(a step of T admissions meets ⌈10 batch_size / n⌉ rejected groups in a row)."""
    if a <= 0:
        return 1.0
    run = math.ceil(10 * batch_rollouts / n)
    long = (1.0 - a) ** run
    return -math.expm1(T * math.log1p(-long)) if long < 1 else 1.0


def pool_chances(pmf: FloatArray, pools: tuple[tuple[str, float, float], ...]) -> FloatArray:
    """P(a group's mean reward falls in each pool) per value: the first pool (by threshold) whose max it is
    ≤, the last the catch-all (pool.py l.47-55)."""
    G = pmf.shape[1] - 1
    mean = np.arange(G + 1) / G
    order = sorted(range(len(pools)), key=lambda i: pools[i][1])
    which = np.full(G + 1, order[-1])
    for i in reversed(order):
        which = np.where(mean <= pools[i][1], i, which)
    out = np.zeros((pmf.shape[0], len(pools)))
    for j in range(G + 1):
        out[:, which[j]] += pmf[:, j]
    return out


def pool_run(
    keep: Keep, pools: tuple[tuple[str, float, float], ...], T: int, steps: int, refill: bool
) -> dict[str, Any]:
    """prime-rl's ``DifficultyPoolSampler`` over a run, as the mean of its tasks' states: each task is unseen
    (weight 1) or in the pool of its latest group mean (pool.py l.47-78); a step draws D tasks with
    replacement, each with chance weight / W (D = T, or T / a_t with the gate), and a task drawn moves to
    the pool of its new group. Per step the keep chance a_t = Σ w x w_s q / W; ``pools`` after the run are
    the expected tasks in each; a pool of weight 0 holds what enters it (the drain).

    The draws within a step are taken at the step's start weights; the spread of W over tasks is ignored
    (its relative error is of order 1 / N).
    """
    assert keep.pmf is not None
    chance = pool_chances(keep.pmf, pools)  # values × pools
    weight = np.array([1.0, *[w for _, _, w in pools]])  # unseen, then each pool
    x = np.zeros((keep.q.size, len(pools) + 1))
    x[:, 0] = 1.0
    rates, draws = [], []
    for _ in range(steps):
        mass = keep.w[:, None] * x * weight[None, :]
        W = float(mass.sum())
        if W <= 0:
            break
        a = float((mass.sum(axis=1) * keep.q).sum() / W)
        D = T / a if refill and a > 0 else float(T)
        rates.append(a)
        draws.append(D)
        hit = -np.expm1(D * np.log1p(-np.minimum(weight / W, 1.0)))  # P(drawn at least once this step)
        moved = (x * hit[None, :]).sum(axis=1)
        x = x * (1.0 - hit[None, :])
        x[:, 1:] += moved[:, None] * chance
    occupancy = (keep.w[:, None] * x).sum(axis=0)
    return {
        "rates": np.array(rates),
        "draws": np.array(draws),
        "pools": {name: float(occupancy[i + 1]) for i, (name, _, _) in enumerate(pools)},
        "unseen": float(occupancy[0]),
        "drained": len(rates) < steps,
    }


def fallback_step(a: float, T: int, rounds_of: int) -> dict[str, float]:
    """slime's fallback filter at keep chance a, rounds of O groups: submitted S = O ⌈T / O⌉, completed
    E[min(T + R, S)] = T + Σ_{r<K} P(R > r), R ~ NB(T, a), K = S − T, and refused groups trained
    E[(T − Binomial(S, a))⁺].

    >>> {k: round(v, 4) for k, v in fallback_step(0.5, 1, 2).items()}
    {'rounds': 1.0, 'submitted': 2.0, 'completed': 1.5, 'silent_trained': 0.25}
    """
    st = _stats()
    rounds = math.ceil(T / rounds_of)
    S = rounds * rounds_of
    K = S - T
    r = np.arange(K)
    completed = T + (math.fsum(st.nbinom.sf(r, T, a).tolist()) if K > 0 and a > 0 else float(K))
    j = np.arange(T)
    silent = math.fsum(((T - j) * st.binom.pmf(j, S, a)).tolist())
    return {"rounds": float(rounds), "submitted": float(S), "completed": completed, "silent_trained": silent}

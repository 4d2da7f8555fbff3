"""Independent references for ``preflight``: verl's DAPO loop run literally, by enumeration and by simulation.

The loop is ``RayDAPOTrainer.fit`` of verl's ``recipe/dapo/dapo_ray_trainer.py``: draw a generation batch,
keep the prompts whose rewards have ``np.std > 0`` (or a single rollout), add them to the step's batch, and
either cut the step's batch to ``train_batch_size`` prompts, draw again, or raise after
``max_num_gen_batches`` batches. Neither reference uses the binomial law of the kept count that
:mod:`sigmatool.preflight` rests on.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray
from scipy import stats


@dataclass
class Totals:
    """Per-step outcomes: their means, and (for a simulation) their standard errors."""

    mean: dict[str, float]
    se: dict[str, float]


def _loop(kept_per_batch: list[int], T: int, M: int) -> tuple[int, bool, int]:
    """verl's step on a sequence of batches' kept counts: (batches drawn, crashed, kept so far)."""
    kept = 0
    for drawn, k in enumerate(kept_per_batch, start=1):
        kept += k
        if kept >= T:
            return drawn, False, kept
        if M > 0 and drawn >= M:
            return drawn, True, kept
    raise AssertionError("the enumeration ran out of batches")


def enumerate_step(p: list[Fraction], w: list[int], n: int, B: int, T: int, M: int) -> dict[str, Fraction]:
    """Exact expectations of one step, by enumerating every prompt draw and every reward vector of every slot."""
    W = sum(w)
    slot: dict[bool, Fraction] = {True: Fraction(0), False: Fraction(0)}
    for pi, wi in zip(p, w, strict=True):
        for rewards in itertools.product((0, 1), repeat=n):
            chance = Fraction(wi, W)
            for r in rewards:
                chance *= pi if r else 1 - pi
            slot[bool(np.std(rewards) > 0 or len(rewards) == 1)] += chance
    out = dict.fromkeys(
        ("batches", "crash", "generated", "silent", "surplus", "lost", "trained"), Fraction(0)
    )
    for outcome in itertools.product((True, False), repeat=B * M):
        chance = Fraction(1)
        for kept in outcome:
            chance *= slot[kept]
        counts = [sum(outcome[j * B : (j + 1) * B]) for j in range(M)]
        drawn, crashed, kept = _loop(counts, T, M)
        out["batches"] += chance * drawn
        out["crash"] += chance * crashed
        out["generated"] += chance * n * B * drawn
        out["silent"] += chance * n * (B * drawn - kept)
        out["lost"] += chance * n * kept * crashed
        out["surplus"] += chance * n * (kept - T) * (not crashed)
        out["trained"] += chance * n * T * (not crashed)
    return out


def keep_chance(p: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """P(np.std of n Bernoulli(p) rewards > 0) = P(0 < Binomial(n, p) < n), or 1 at n = 1."""
    if n == 1:
        return np.ones_like(p)
    return 1.0 - stats.binom.pmf(0, n, p) - stats.binom.pmf(n, n, p)


def simulate_steps(
    p: NDArray[np.float64],
    w: NDArray[np.float64],
    n: int,
    B: int,
    T: int,
    M: int,
    steps: int,
    seed: int = 0,
) -> Totals:
    """Monte Carlo of ``steps`` independent steps: each batch draws B prompts with replacement (a multinomial
    over the distinct values), each drawn prompt's group is kept with its chance of a reward std > 0, and the
    loop runs as verl writes it; a batch is drawn only for the steps still short (M > 0)."""
    rng = np.random.default_rng(seed)
    q = keep_chance(p, n)
    probs = w / w.sum()
    held = np.zeros(steps, dtype=np.int64)
    drawn = np.zeros(steps, dtype=np.int64)
    short = np.arange(steps)
    while short.size and (M <= 0 or int(drawn[short[0]]) < M):
        prompts = rng.multinomial(B, probs, size=short.size)
        held[short] += rng.binomial(prompts, q).sum(axis=1)
        drawn[short] += 1
        short = short[held[short] < T]
    crashed = held < T
    values = {
        "batches": drawn,
        "crash": crashed,
        "generated": n * B * drawn,
        "silent": n * (B * drawn - held),
        "lost": n * held * crashed,
        "surplus": n * (held - T) * ~crashed,
        "trained": n * T * ~crashed,
    }
    arrays = {name: np.asarray(v, dtype=np.float64) for name, v in values.items()}
    mean = {name: float(v.mean()) for name, v in arrays.items()}
    se = {name: float(v.std(ddof=1) / np.sqrt(v.size)) for name, v in arrays.items()}
    return Totals(mean, se)


def crash_over_batches(f: NDArray[np.float64], total_batches: int) -> float:
    """P(a crash within ``total_batches`` generation batches), by a Markov chain over (batches into the step),
    given P(a step ends after exactly k batches) = f[k − 1], k = 1…M, the rest of the chance a crash at M."""
    M = f.size
    survive = 1.0 - np.concatenate(([0.0], np.cumsum(f)))  # P(K > j), j = 0…M
    into = np.zeros(M)  # chance of being j batches into a step that is still short, no crash so far
    into[0] = 1.0
    crashed = 0.0
    for _ in range(total_batches):
        nxt = np.zeros(M)
        for j in range(M):
            if into[j] == 0:
                continue
            ends = f[j] / survive[j] if survive[j] > 0 else 0.0  # the step ends with this batch
            short = 1.0 - ends
            nxt[0] += into[j] * ends
            if j + 1 < M:
                nxt[j + 1] += into[j] * short
            else:
                crashed += into[j] * short
        into = nxt
    return crashed


def agg_loss(loss_mat: NDArray[np.float64], mask: NDArray[np.float64], mode: str) -> float:
    """verl's ``agg_loss`` (``verl/trainer/ppo/core_algos.py``) on a (rows × tokens) loss and mask."""
    if mode == "token-mean":
        return float((loss_mat * mask).sum() / mask.sum())
    if mode == "seq-mean-token-sum":
        return float((loss_mat * mask).sum(axis=1).mean())
    if mode == "seq-mean-token-mean":
        return float(((loss_mat * mask).sum(axis=1) / mask.sum(axis=1)).mean())
    raise ValueError(mode)


def simulate_run(
    q: float,
    B: int,
    T: int,
    M: int,
    batches_per_epoch: int,
    epochs: int,
    steps: int | None,
    runs: int,
    seed: int,
) -> Totals:
    """Monte Carlo of whole runs of verl's DAPO ``fit`` as written (verl-project/verl-recipe @ 48ea0a79,
    ``dapo/dapo_ray_trainer.py``): ``for epoch in range(total_epochs): for batch_dict in train_dataloader``
    (l. 139-140), ``num_gen_batches += 1`` per batch (l. 154), ``is_last_step = global_steps >=
    total_training_steps`` (l. 160); a step still short draws again or raises once ``num_gen_batches >=
    max_num_gen_batches > 0`` (l. 277-290); a trained step returns if it is the last (l. 426-431), else
    ``global_steps += 1`` (l. 434) and the step's state starts again. ``total_training_steps`` is the
    config's or, when null, ``len(train_dataloader) * total_epochs`` (verl-project/verl @ 1dda039b,
    ``verl/trainer/ppo/ray_trainer.py`` l. 435-438). Each batch's kept count is Binomial(B, q)."""
    rng = np.random.default_rng(seed)
    total = batches_per_epoch * epochs if steps is None else steps
    crashed = np.zeros(runs)
    trained = np.zeros(runs)
    drawn = np.zeros(runs)
    kept_draws = rng.binomial(B, q, size=(runs, batches_per_epoch * epochs))
    for r in range(runs):
        global_steps, kept, gen_batches, i = 1, 0, 0, 0
        done = False
        for _epoch in range(epochs):
            for _batch in range(batches_per_epoch):
                gen_batches += 1
                is_last_step = global_steps >= total
                kept += int(kept_draws[r, i])
                i += 1
                if kept < T:
                    if M > 0 and gen_batches >= M:
                        crashed[r] = 1.0
                        done = True
                        break
                    continue
                trained[r] += 1
                if is_last_step:
                    done = True
                    break
                global_steps += 1
                kept, gen_batches = 0, 0
            if done:
                break
        drawn[r] = i
    values = {"crash": crashed, "steps": trained, "batches": drawn}
    mean = {name: float(v.mean()) for name, v in values.items()}
    se = {name: float(v.std(ddof=1) / np.sqrt(v.size)) for name, v in values.items()}
    return Totals(mean, se)


def shuffled_epoch_crash(q: list[Fraction], B: int, T: int, M: int, steps: int) -> tuple[Fraction, Fraction]:
    """(P(the epoch's first step crashes), P(a crash within ``steps`` steps of one epoch)), exactly: every
    permutation of the prompts (a shuffled dataloader, ``drop_last``) and every reward outcome, the loop run
    as verl writes it (each prompt drawn once in the epoch, its group kept with chance q)."""
    N = len(q)
    perms = list(itertools.permutations(range(N)))
    first, run = Fraction(0), Fraction(0)
    for kept in itertools.product((0, 1), repeat=N):
        chance = Fraction(1)
        for qi, x in zip(q, kept, strict=True):
            chance *= qi if x else 1 - qi
        if chance == 0:
            continue
        crashed_first = crashed_run = 0
        for perm in perms:
            order, pos, done = [kept[i] for i in perm], 0, 0
            while done < steps and pos + B <= N:
                held, drawn = 0, 0
                while pos + B <= N:
                    held += sum(order[pos : pos + B])
                    pos, drawn = pos + B, drawn + 1
                    if held >= T or drawn >= M:
                        break
                if held < T and drawn >= M:  # short after M batches: verl raises
                    crashed_first += done == 0
                    crashed_run += 1
                    break
                if held < T:  # the epoch's batches ran out mid-step
                    break
                done += 1
        first += chance * Fraction(crashed_first, len(perms))
        run += chance * Fraction(crashed_run, len(perms))
    return first, run


@dataclass
class Estimate:
    mean: float
    se: float


def simulate_shuffled(
    q: NDArray[np.float64], B: int, T: int, M: int, steps: int, runs: int, seed: int
) -> tuple[Estimate, Estimate]:
    """Monte Carlo of one epoch per run: a random permutation (``drop_last`` batches of B), each prompt's
    group kept with its q once, verl's loop over ``steps`` steps; (first step crashes, the run crashes)."""
    rng = np.random.default_rng(seed)
    N = q.size
    first = np.zeros(runs, dtype=bool)
    crashed = np.zeros(runs, dtype=bool)
    for r in range(runs):
        order = rng.random(N) < q[rng.permutation(N)]
        pos, done = 0, 0
        while done < steps and pos + B <= N:
            held, drawn = 0, 0
            while pos + B <= N:
                held += int(order[pos : pos + B].sum())
                pos, drawn = pos + B, drawn + 1
                if held >= T or drawn >= M:
                    break
            if held < T and drawn >= M:
                first[r] = done == 0
                crashed[r] = True
                break
            if held < T:
                break
            done += 1

    def estimate(x: NDArray[np.bool_]) -> Estimate:
        return Estimate(float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size)))

    return estimate(first), estimate(crashed)

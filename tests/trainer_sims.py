"""Literal Monte Carlo simulations of four RL trainers' dynamic-sampling loops, for tests to check the
closed forms in ``sigmatool.preflight`` against.

Each function follows one trainer's control flow as its source reads (the repository, commit, file and
lines are in its docstring), prompt by prompt, and row by row where the trainer works on rows. The
dataset is ``rates``, a 1-D array of per-prompt pass rates. Rewards are 0/1: a prompt with pass rate p
gets k ~ Binomial(n, p) right answers among its n rollouts, each rollout right on its own with chance p.

A batch drawn "with replacement" stands for a shuffled dataloader. A real dataloader batch never holds one
dataset row twice, so every draw is its own group here, even when two draws hit the same prompt. (NeMo-RL
groups rows by identical prompt tokens and SkyRL by dataset index, so a real duplicate would merge.)

- :func:`nemo_rl_steps` and :func:`nemo_rl_runs`: NeMo-RL's ``grpo_train`` with dynamic sampling.
- :func:`skyrl_replace_steps`: SkyRL's ``replace`` strategy (POLARIS).
- :func:`slime_steps`: slime's default SGLang rollout with ``check_reward_nonzero_std``.
- :func:`areal_steps`: AReaL's ``prepare_batch`` with a ``0 < mean(rewards) < 1`` filter.

Run ``OPENBLAS_NUM_THREADS=1 python tests/trainer_sims.py`` (one BLAS thread, as ``make pytest`` gives
the suite) for a smoke run on Big-Math's pass rates: it prints each simulation's means and times, and
asserts a few facts that can be worked out by hand.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Floats = npt.NDArray[np.float64]
Arrays = dict[str, npt.NDArray[Any]]

# Steps or runs are simulated side by side in chunks of about this many reward rows, so arrays stay small.
CHUNK_ROWS = 1 << 21
# A loop that can never be satisfied raises ValueError after this many submissions in one step.
GUARD = 10**6


# --------------------------------------------------------------------------------------------- shared


def _right(rng: np.random.Generator, p: Floats, n: int) -> Bools:
    """Which of each prompt's n rollouts are right: each one independently with the prompt's pass rate, so
    a prompt gets k ~ Binomial(n, p) right. ``p`` holds the drawn prompts' pass rates, any shape; the
    rollouts are a new last axis."""
    return np.asarray(rng.random((*p.shape, n)) < p[..., None])


def _draw(rng: np.random.Generator, rates: Floats, shape: tuple[int, ...]) -> Floats:
    """Pass rates of prompts drawn i.i.d. uniformly from the dataset."""
    return np.asarray(rates[rng.integers(0, rates.size, size=shape)], dtype=np.float64)


def _some_group_can_be_mixed(rates: Floats, n: int) -> bool:
    """Whether any group can get both a right and a wrong answer: n ≥ 2 and a pass rate strictly
    between 0 and 1."""
    return n >= 2 and bool(((rates > 0) & (rates < 1)).any())


def _never_accepts(trainer: str) -> ValueError:
    return ValueError(f"{trainer}: no group can ever be accepted (every group is all right or all wrong)")


def _guard(count: int, trainer: str, what: str = "groups submitted") -> None:
    """Stop a step that cannot end: more than :data:`GUARD` groups (or batches) spent on it."""
    if count > GUARD:
        raise ValueError(f"{trainer}: more than {GUARD} {what} in one step without filling it")


# --------------------------------------------------------------------------------------------- NeMo-RL


def nemo_rl_std(rewards: npt.NDArray[np.float32], loo: bool) -> npt.NDArray[np.float32]:
    """Per-row std of NeMo-RL's ``calculate_baseline_and_std_per_prompt`` (NVIDIA-NeMo/RL @
    7ea279abfbeb698b092856d0dab61e7cf39bc909, ``nemo_rl/algorithms/utils.py`` l.104-198), for groups laid
    out on the last axis of ``rewards`` (float32, as the reward tensor is).

    A group of at most one row keeps std 0 (l.156-159). Otherwise ``num_valid`` is n, less one with the
    leave-one-out baseline (l.161-163), and the mask matrix is ``1 - eye`` with it and ``ones`` without it
    (l.149-154). Each row's baseline is the mask matrix times the group's rewards over ``num_valid``, the
    same for the squared rewards, and std = sqrt((E[r²] − E[r]²) · num_valid / (num_valid − 1)) with nan
    set to 0 (l.170-196). So with the leave-one-out baseline a row's std is the sample std of the other
    n − 1 rows, and without it the sample std of all n.
    """
    n = rewards.shape[-1]
    if n <= 1:
        return np.zeros_like(rewards)
    mask = np.ones((n, n), np.float32) - (np.eye(n, dtype=np.float32) if loo else np.float32(0))
    num_valid = np.float32(n - int(loo))
    rows = rewards.reshape(-1, n)
    baseline = rows @ mask.T  # torch.matmul(mask, rewards) for every group at once
    baseline /= num_valid
    std = np.square(rows) @ mask.T
    std /= num_valid
    std -= np.square(baseline)
    with np.errstate(divide="ignore", invalid="ignore"):  # num_valid = 1: 0 · inf = nan
        std *= num_valid / (num_valid - np.float32(1))
        np.sqrt(std, out=std)
    np.copyto(std, np.float32(0), where=np.isnan(std))  # .nan_to_num(0); no inf can arise
    return np.asarray(std.reshape(rewards.shape), dtype=np.float32)


def _nemo_rl_kept_rows(rng: np.random.Generator, p: Floats, n: int, loo: bool) -> Ints:
    """Rows kept from one generation batch per simulated step (``p``: steps × prompts). Each prompt is
    repeated n times, its rows get 0/1 rewards, and the rows with ``std != 0.0`` are kept
    (``nemo_rl/algorithms/grpo.py`` l.1752-1764)."""
    rewards = _right(rng, p, n).astype(np.float32)
    kept = nemo_rl_std(rewards, loo) != 0.0
    return np.asarray(np.count_nonzero(kept, axis=(1, 2)), dtype=np.int64)


def nemo_rl_steps(
    rates: Floats, P: int, multiplier: float, n: int, M: int, loo: bool, steps: int, seed: int
) -> Arrays:
    """Steps of NeMo-RL's ``grpo_train`` with dynamic sampling (NVIDIA-NeMo/RL @
    7ea279abfbeb698b092856d0dab61e7cf39bc909, ``nemo_rl/algorithms/grpo.py``), each starting afresh.

    A generation batch is ``int(P × multiplier)`` prompts (l.559-573), drawn here with replacement. The
    counter is raised before the batch is generated (l.2924). Each row whose std is not 0 is appended to
    the cache (l.1752-1787; the std is :func:`nemo_rl_std`). The step is done once the cache holds
    ``P × n`` rows (l.1738-1741, 1796). Otherwise ``assert dynamic_sampling_max_gen_batches > 0`` (taken
    here as a crash, as the ``ValueError`` is) and the loop goes on while the counter is ≤ M, else raises
    ``ValueError`` (l.1796-1811). The cache and counter are reset after a trained step (l.3774-3776).

    Returns per step: ``batches`` drawn, ``crashed``, ``rows_kept`` (rows in the cache at the end of the
    step, before the cut to ``P × n``, a crashing step's included) and ``rows_trained`` (``P × n``, or 0
    for a crash).
    """
    rng = np.random.default_rng(seed)
    B = int(P * multiplier)
    chunk = max(1, CHUNK_ROWS // max(1, B * n))
    out: Arrays = {
        "batches": np.zeros(steps, np.int64),
        "crashed": np.zeros(steps, bool),
        "rows_kept": np.zeros(steps, np.int64),
    }
    for start in range(0, steps, chunk):
        part = slice(start, min(steps, start + chunk))
        going = np.ones(part.stop - part.start, dtype=bool)
        batches, crashed, rows = out["batches"][part], out["crashed"][part], out["rows_kept"][part]
        while going.any():
            idx = np.flatnonzero(going)
            batches[idx] += 1  # l.2924: before generating
            rows[idx] += _nemo_rl_kept_rows(rng, _draw(rng, rates, (idx.size, B)), n, loo)
            short = rows[idx] < P * n
            stop = short & ((M <= 0) | (batches[idx] > M))  # l.1800-1811: assert M > 0, then count ≤ M
            crashed[idx[stop]] = True
            going[idx[~short | stop]] = False
    out["rows_trained"] = np.where(out["crashed"], 0, P * n).astype(np.int64)
    return out


@dataclass(frozen=True)
class _NemoSettings:
    """The settings of :func:`nemo_rl_runs`: P, generation batch B, n, cap M, loo, max_num_steps."""

    P: int
    B: int
    n: int
    M: int
    loo: bool
    max_steps: int | None


@dataclass
class _NemoRuns:
    """Per-run state of :func:`nemo_rl_runs`: totals, and the cache and counter of the step under way."""

    size: int
    crashed: Bools = field(init=False)
    stopped: Bools = field(init=False)
    steps: Ints = field(init=False)
    batches: Ints = field(init=False)
    cache: Ints = field(init=False)
    count: Ints = field(init=False)

    def __post_init__(self) -> None:
        self.crashed, self.stopped = np.zeros(self.size, bool), np.zeros(self.size, bool)
        self.steps, self.batches = np.zeros(self.size, np.int64), np.zeros(self.size, np.int64)
        self.cache, self.count = np.zeros(self.size, np.int64), np.zeros(self.size, np.int64)


def _nemo_rl_run_batch(
    rng: np.random.Generator, rates: Floats, s: _NemoRuns, prompts: Ints, idx: Ints, cfg: _NemoSettings
) -> None:
    """One generation batch for the live runs ``idx`` (``prompts``: their dataset indices, runs × B)."""
    s.count[idx] += 1  # grpo.py l.2924
    s.batches[idx] += 1
    s.cache[idx] += _nemo_rl_kept_rows(rng, rates[prompts], cfg.n, cfg.loo)
    done = s.cache[idx] >= cfg.P * cfg.n
    crash = ~done & ((cfg.M <= 0) | (s.count[idx] > cfg.M))  # l.1796-1811
    s.crashed[idx[crash]] = True
    s.stopped[idx[crash]] = True
    trained = idx[done]
    s.steps[trained] += 1
    s.cache[trained] = 0  # l.3774-3776: batch_cache = None, counter = 0
    s.count[trained] = 0
    if cfg.max_steps is not None:  # l.3802: total_steps >= max_num_steps ends the run
        s.stopped[trained[s.steps[trained] >= cfg.max_steps]] = True


def _nemo_rl_run_chunk(
    rng: np.random.Generator, rates: Floats, cfg: _NemoSettings, epochs: int, size: int, replacement: bool
) -> _NemoRuns:
    """``size`` whole runs side by side: each epoch yields floor(N / B) batches to every live run."""
    s = _NemoRuns(size)
    N = rates.size
    if cfg.max_steps is not None and cfg.max_steps <= 0:
        s.stopped[:] = True
    for _epoch in range(epochs):  # l.2801: while epoch < max_num_epochs and total_steps < max_num_steps
        if s.stopped.all():
            break
        s.cache[:] = 0  # l.2805-2807: a half-filled step is dropped at the epoch's start
        s.count[:] = 0
        order = None if replacement else rng.permuted(np.tile(np.arange(N), (size, 1)), axis=1)
        for j in range(N // cfg.B):  # drop_last=True (l.598)
            idx = np.flatnonzero(~s.stopped)
            if idx.size == 0:
                break
            if order is None:
                prompts = rng.integers(0, N, size=(idx.size, cfg.B))
            else:
                prompts = order[idx, j * cfg.B : (j + 1) * cfg.B]
            _nemo_rl_run_batch(rng, rates, s, prompts, idx, cfg)
    return s


def nemo_rl_runs(
    rates: Floats,
    P: int,
    multiplier: float,
    n: int,
    M: int,
    loo: bool,
    epochs: int,
    max_steps: int | None,
    runs: int,
    seed: int,
    replacement: bool,
) -> Arrays:
    """Whole runs of NeMo-RL's ``grpo_train`` with dynamic sampling (NVIDIA-NeMo/RL @
    7ea279abfbeb698b092856d0dab61e7cf39bc909, ``nemo_rl/algorithms/grpo.py``), side by side.

    The run loops ``while current_epoch < max_num_epochs and total_steps < max_num_steps`` (l.2801). An
    epoch is one pass of a dataloader of batch size B = ``int(P × multiplier)`` with ``drop_last=True``
    (l.559-573, 593-600): floor(N / B) batches, each a fresh permutation's next B prompts, or (with
    ``replacement``) B prompts drawn i.i.d. uniformly. Each batch is one generation batch of
    :func:`nemo_rl_steps`. The cache and counter are reset at each epoch's start (l.2805-2807; a
    half-filled step is dropped) and after each trained step (l.3774-3776). The run stops after
    ``max_steps`` trained steps (l.3802; None for no limit), after the epochs, or at its first crash.

    Returns per run: ``crashed``, ``steps`` (trained) and ``batches`` (generation batches drawn in all).
    """
    rng = np.random.default_rng(seed)
    cfg = _NemoSettings(P, int(P * multiplier), n, M, loo, max_steps)
    if cfg.B < 1:
        raise ValueError("NeMo-RL: int(P × multiplier) must be at least 1")
    chunk = max(1, CHUNK_ROWS // max(1, rates.size, cfg.B * n))
    out: Arrays = {
        "crashed": np.zeros(runs, bool),
        "steps": np.zeros(runs, np.int64),
        "batches": np.zeros(runs, np.int64),
    }
    for start in range(0, runs, chunk):
        part = slice(start, min(runs, start + chunk))
        s = _nemo_rl_run_chunk(rng, rates, cfg, epochs, part.stop - part.start, replacement)
        out["crashed"][part], out["steps"][part], out["batches"][part] = s.crashed, s.steps, s.batches
    return out


# --------------------------------------------------------------------------------------------- SkyRL


def _skyrl_copies(rng: np.random.Generator, good: Bools, n: int) -> int:
    """Groups of a passing batch that end up copies of another, after ``handle_replace_sampling`` overwrote
    each bad group row by row with a good one chosen by ``get_bad_sample_replacements``
    (``skyrl/train/utils/trainer_utils.py`` l.479-506, 610-621)."""
    good_uids, bad_uids = np.flatnonzero(good), np.flatnonzero(~good)
    if good_uids.size >= bad_uids.size:  # a random permutation: no good group is used twice
        chosen = good_uids[rng.permutation(good_uids.size)[: bad_uids.size]]
    else:
        chosen = good_uids[rng.integers(0, good_uids.size, size=bad_uids.size)]
    rows = np.arange(good.size * n).reshape(good.size, n)
    source = rows.copy()
    source[bad_uids] = rows[chosen]  # source_indices[bad_idx] = replacement_idx, row by row
    return int((source[:, 0] != rows[:, 0]).sum())


def skyrl_replace_steps(
    rates: Floats, B: int, n: int, M: int, min_ratio: float, steps: int, seed: int
) -> Arrays:
    """Steps of SkyRL's ``replace`` dynamic sampling (POLARIS) (NovaSky-AI/SkyRL @
    a9564572eb8e91076be43c1bd5e4615e3de17265, ``skyrl/train/trainer.py`` l.1613-1636 and
    ``skyrl/train/utils/trainer_utils.py`` l.432-514, 610-621), each starting afresh.

    Each generation batch is B prompts (drawn here with replacement). The counter is raised first
    (trainer.py l.1613-1618). A group is good when ``np.std`` (population) of its rewards is > 0, or n = 1
    (trainer_utils.py l.466-472). The batch passes when more than ``B × min_ratio`` groups are good
    (l.476-477); then each bad group is overwritten by a copy of a good one and the batch is trained
    (l.479-506). A failing batch is dropped; it raises ``RuntimeError`` once the counter has reached
    M > 0 (trainer.py l.1626-1636); M ≤ 0 samples forever (a ``ValueError`` here when no batch can pass, or
    after 10^6 batches).

    Returns per step: ``batches``, ``crashed``, ``copied`` (groups of the trained batch that are copies; 0
    for a crash) and ``good`` (good groups of the passing batch; 0 for a crash).
    """
    can_pass = min_ratio < 1 and (n == 1 or _some_group_can_be_mixed(rates, n))
    if M <= 0 and not can_pass:
        raise ValueError("SkyRL replace: no batch can ever pass and the cap is off")
    rng = np.random.default_rng(seed)
    out: Arrays = {key: np.zeros(steps, np.int64) for key in ("batches", "copied", "good")}
    out["crashed"] = np.zeros(steps, bool)
    going = np.ones(steps, bool)
    chunk = max(1, CHUNK_ROWS // max(1, B * n))
    while going.any():
        idx = np.flatnonzero(going)[:chunk]
        out["batches"][idx] += 1  # trainer.py l.1613-1618
        rewards = _right(rng, _draw(rng, rates, (idx.size, B)), n).astype(np.float64)
        good = (np.std(rewards, axis=-1) > 0) | (n == 1)
        count = good.sum(axis=1)
        passed = count > B * min_ratio  # trainer_utils.py l.476-477
        for i in np.flatnonzero(passed):
            out["copied"][idx[i]] = _skyrl_copies(rng, good[i], n)
            out["good"][idx[i]] = count[i]
        raised = ~passed & (M > 0) & (out["batches"][idx] >= M)
        out["crashed"][idx[raised]] = True
        going[idx[passed | raised]] = False
        _guard(int(out["batches"][idx].max()), "SkyRL replace", "batches")
    return out


# --------------------------------------------------------------------------------------------- slime


def _slime_keep(rewards: Floats) -> Bools:
    """``check_reward_nonzero_std``: torch's unbiased std of the group's rewards, in float64, > 1e-6
    (``slime/rollout/filter_hub/dynamic_sampling_filters.py`` l.9-15). With n = 1 it is nan: dropped."""
    n = rewards.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        centred = rewards - rewards.mean(axis=-1, keepdims=True)
        std = np.sqrt((centred**2).sum(axis=-1) / np.float64(n - 1))
    return np.asarray(std > 1e-6)


@dataclass
class _SlimeSteps:
    """Steps of :func:`slime_steps` side by side. ``finish`` holds each in-flight group's completion time
    (inf: a free slot) and ``keep`` the filter's verdict on it; the rest are per-step counts."""

    size: int
    width: int
    finish: Floats = field(init=False)
    keep: Bools = field(init=False)
    now: Floats = field(init=False)
    data: Ints = field(init=False)
    remaining: Ints = field(init=False)
    submitted: Ints = field(init=False)
    completed: Ints = field(init=False)
    dropped: Ints = field(init=False)

    def __post_init__(self) -> None:
        self.finish = np.full((self.size, self.width), np.inf)
        self.keep = np.zeros((self.size, self.width), bool)
        self.now = np.zeros(self.size)
        self.data, self.remaining = np.zeros(self.size, np.int64), np.zeros(self.size, np.int64)
        self.submitted, self.completed = np.zeros(self.size, np.int64), np.zeros(self.size, np.int64)
        self.dropped = np.zeros(self.size, np.int64)


def _slime_submit(
    rng: np.random.Generator, rates: Floats, s: _SlimeSteps, rows: Ints, over: int, n: int
) -> None:
    """``submit_generate_tasks`` of O groups for the steps ``rows`` (``sglang_rollout.py`` l.136-149): each
    group takes a free slot and completes an Exponential(1) time after now."""
    free_first = np.argsort(np.isfinite(s.finish[rows]), axis=1, kind="stable")[:, :over]
    slots = (rows[:, None], free_first)
    s.finish[slots] = s.now[rows, None] + rng.exponential(size=(rows.size, over))
    s.keep[slots] = _slime_keep(_right(rng, _draw(rng, rates, (rows.size, over)), n).astype(np.float64))
    s.remaining[rows] += over
    s.submitted[rows] += over


def _slime_complete(s: _SlimeSteps, going: Bools, T: int) -> None:
    """``asyncio.wait(..., FIRST_COMPLETED)`` for the going steps: the group with the earliest completion
    time finishes; dropped, it lowers ``remaining_batch_size``, else it is appended while data < T
    (``sglang_rollout.py`` l.416-441)."""
    g = np.flatnonzero(going)
    j = s.finish.argmin(axis=1)[g]
    s.now[g] = s.finish[g, j]
    kept = s.keep[g, j]
    s.finish[g, j] = np.inf
    s.completed[g] += 1
    drop, accept = g[~kept], g[kept]
    s.dropped[drop] += 1
    s.remaining[drop] -= 1
    s.data[accept] += s.data[accept] < T


def _slime_chunk(
    rng: np.random.Generator, rates: Floats, size: int, T: int, over: int, n: int
) -> _SlimeSteps:
    """``size`` steps side by side; at most T − 1 + O groups are ever in flight, as a submission comes
    only when accepted + in flight < T."""
    s = _SlimeSteps(size, T - 1 + over)
    going = np.ones(size, bool)
    while going.any():  # while len(data) < target_data_size
        while (rows := np.flatnonzero(going & (s.remaining < T))).size:  # while remaining < target
            _slime_submit(rng, rates, s, rows, over, n)
            _guard(int(s.submitted[rows].max()), "slime")
        _slime_complete(s, going, T)
        going &= s.data < T
    return s


def slime_steps(rates: Floats, T: int, O: int, n: int, steps: int, seed: int) -> Arrays:  # noqa: E741
    """Steps of slime's default SGLang rollout with ``check_reward_nonzero_std`` as the dynamic-sampling
    filter (THUDM/slime @ 624b824a898ab0ec1fcb4d373004c7f3852bf515, ``slime/rollout/sglang_rollout.py``
    l.399-443, 131-149, 339-371; ``slime/rollout/filter_hub/dynamic_sampling_filters.py`` l.9-15).

    ``remaining_batch_size`` starts at 0. While fewer than T groups are accepted: while ``remaining`` < T,
    O groups are submitted (prompts drawn i.i.d. uniformly) and ``remaining`` grows by O; then the loop
    waits for the first completion. Each group completes an i.i.d. Exponential(1) time after its
    submission, so completions come one at a time, in an order independent of the rewards. A dropped
    group lowers ``remaining`` by 1; an accepted one is appended while fewer than T are held. Once T are
    held, every group still in flight is aborted. There is no cap: if no group can ever be accepted this
    raises ``ValueError`` (at once, or after 10^6 submissions in one step) instead of looping forever.

    Returns per step: ``submitted``, ``completed`` (accepted or dropped), ``aborted`` (in flight at the
    end) and ``dropped``.
    """
    if O < 1 or T < 1:
        raise ValueError("slime: the rollout and over-sampling batch sizes must be at least 1")
    if not _some_group_can_be_mixed(rates, n):
        raise _never_accepts("slime")
    rng = np.random.default_rng(seed)
    out: Arrays = {key: np.zeros(steps, np.int64) for key in ("submitted", "completed", "aborted", "dropped")}
    chunk = max(1, CHUNK_ROWS // 8 // (T - 1 + O))
    for start in range(0, steps, chunk):
        part = slice(start, min(steps, start + chunk))
        s = _slime_chunk(rng, rates, part.stop - part.start, T, O, n)
        out["submitted"][part], out["completed"][part] = s.submitted, s.completed
        out["aborted"][part], out["dropped"][part] = np.isfinite(s.finish).sum(axis=1), s.dropped
    return out


def slime_partial_steps(rates: Floats, T: int, over: int, n: int, steps: int, seed: int) -> Arrays:
    """Consecutive steps of slime's rollout as :func:`slime_steps`, with ``--partial-rollout``: the groups in
    flight when a step's batch fills are aborted and returned to the data source's buffer, partial or
    finished (``sglang_rollout.py`` l.339-371, 646-648), and the next ``get_samples`` takes the buffer first
    (``RolloutDataSourceWithBuffer.get_samples`` and ``pop_first``, ``slime/rollout/data_source.py``), the
    rest fresh prompts. A returned group keeps its reward and the time it still needs; the filter judges it
    again when it finishes. One chain of steps, event by event.

    Returns per step: ``fresh`` (prompts new to the step), ``submitted`` (fresh and resumed), ``completed``
    and ``aborted`` (returned to the buffer at the step's end).
    """
    if not _some_group_can_be_mixed(rates, n):
        raise _never_accepts("slime")
    rng = np.random.default_rng(seed)
    out: Arrays = {key: np.zeros(steps, np.int64) for key in ("fresh", "submitted", "completed", "aborted")}
    buffer: list[tuple[float, bool]] = []  # (time still needed, kept by the filter)
    for step in range(steps):
        now, data, remaining = 0.0, 0, 0
        flight: list[tuple[float, int, bool]] = []  # (finish time, order, kept)
        while data < T:
            while remaining < T:  # submit O groups: the buffer's first, then fresh prompts
                taken, buffer = buffer[:over], buffer[over:]
                fresh = over - len(taken)
                rewards = _right(rng, _draw(rng, rates, (fresh,)), n).astype(np.float64)
                new = list(
                    zip(rng.exponential(size=fresh).tolist(), _slime_keep(rewards).tolist(), strict=True)
                )
                for need, keep in taken + new:
                    heapq.heappush(flight, (now + need, int(out["submitted"][step]), keep))
                    out["submitted"][step] += 1
                out["fresh"][step] += fresh
                remaining += over
                _guard(int(out["submitted"][step]), "slime")
            now, _, keep = heapq.heappop(flight)
            out["completed"][step] += 1
            if keep:
                data += 1
            else:
                remaining -= 1
        out["aborted"][step] = len(flight)
        buffer += [(finish - now, keep) for finish, _, keep in sorted(flight)]
    return out


# --------------------------------------------------------------------------------------------- AReaL


class _AReaLTasks:
    """Outcomes of the tasks AReaL starts, drawn in blocks: each an Exponential(1) duration and whether
    the filter ``0 < mean(rewards) < 1`` accepts the group (docs/en/algorithms/grpo_series.md l.281-290)."""

    def __init__(self, rng: np.random.Generator, rates: Floats, n: int, block: int = 1 << 15) -> None:
        self.rng, self.rates, self.n, self.block = rng, rates, n, block
        self.durations: list[float] = []
        self.accepted: list[bool] = []
        self.at = 0

    def draw(self) -> tuple[float, bool]:
        if self.at == len(self.durations):
            rewards = _right(self.rng, _draw(self.rng, self.rates, (self.block,)), self.n).astype(np.float64)
            mean = rewards.mean(axis=-1)
            self.accepted = ((mean > 0) & (mean < 1)).tolist()
            self.durations = self.rng.exponential(size=self.block).tolist()
            self.at = 0
        self.at += 1
        return self.durations[self.at - 1], self.accepted[self.at - 1]


@dataclass
class _AReaLState:
    """The rollout state that outlives steps: version, the staleness manager's counts, the running tasks
    (completion time, accepted) and the accepted results not yet consumed."""

    B: int
    ofp: int
    version: int = 0
    accepted: int = 0
    running: int = 0
    surplus: int = 0
    now: float = 0.0
    tasks: list[tuple[float, bool]] = field(default_factory=list)


def _areal_start(s: _AReaLState, draws: _AReaLTasks) -> int:
    """The producer thread starts a task while ``get_capacity() > 0`` (``workflow_executor.py``
    l.359-393, 436-449; ``staleness_manager.py`` l.79-113). Returns the tasks started."""
    capacity = min(s.B - s.running, (s.ofp + s.version + 1) * s.B - (s.accepted + s.running))
    for _ in range(capacity):  # none when capacity <= 0
        duration, ok = draws.draw()
        heapq.heappush(s.tasks, (s.now + duration, ok))
    started = max(0, capacity)
    s.running += started
    return started


def _areal_advance(s: _AReaLState, draws: _AReaLTasks, until: float | None) -> int:
    """Let tasks complete one at a time, in the order of their completion times, starting new ones
    whenever there is capacity: until B accepted results are held (``until`` None), else until the time
    ``until``. A completion frees its slot; an accepted one also counts (``staleness_manager.py``
    l.150-166). Returns the tasks started."""
    started = 0
    while True:
        started += _areal_start(s, draws)
        if until is None and s.surplus >= s.B:
            return started
        if until is not None and (not s.tasks or s.tasks[0][0] > until):
            s.now = until
            return started
        _guard(started, "AReaL", "groups started")
        s.now, ok = heapq.heappop(s.tasks)
        s.running -= 1
        s.accepted += ok
        s.surplus += ok


def areal_steps(
    rates: Floats, B: int, n: int, ofp: int, steps: int, seed: int, *, train_time: float = 0.0
) -> Arrays:
    """Consecutive steps of AReaL's ``prepare_batch`` (inclusionAI/AReaL @
    4aef98d8d818af55b43621aaadba047ae10f4e77, ``areal/infra/workflow_executor.py`` l.359-449, 546-601,
    634-731, 1089-1155; ``areal/infra/staleness_manager.py`` l.79-113, 150-166;
    ``areal/trainer/rl_trainer.py`` l.573-580, 717-738, 822) with the filter ``0 < mean(rewards) < 1``,
    ``dynamic_bs`` off, ``consumer_batch_size`` = ``max_concurrent_rollouts`` = B and
    ``max_head_offpolicyness`` = ``ofp``.

    Prompts come from an endless stream of i.i.d. uniform draws. A task starts whenever ``capacity =
    min(B − running, (ofp + version + 1) · B − (accepted + running))`` > 0 and completes an i.i.d.
    Exponential(1) time later; a rejected group frees its slot without counting. A step ends once B
    accepted results are held; it takes B of them (the oldest-started first) and the rest wait for later
    steps. Then training runs for ``train_time`` (in mean rollout durations; 0 by default) while rollouts go
    on, the rollout pauses for the weight update (taken to last no time), and the version goes up by 1.
    Tasks keep running across steps. With no training time, completions come one at a time and the step
    ends at the completion that brings B accepted, so no accepted surplus can build up.

    Simplified: the input queue is taken never to run dry. The loop tops it up to at least B prompts on
    each pass and passes at least once a second (``wait_results(..., timeout=1)``), and a rollout lasts far
    longer than a second. ``queue_size`` (16 × ``max_concurrent_rollouts`` by default) does not bind
    either. ``wait_results`` takes finished results, rejected ones included, in chunks of ``B − accepted``,
    oldest-started first. That ends the step at the first moment B accepted results are held, with the
    same surplus as taking accepted results alone; only which of them are left over may differ.

    A start that the step-ending completion allows happens at that completion's time and counts to that
    step; starts during training and those the version's rise allows count to the next step. If no group
    can ever be accepted this raises ``ValueError`` (at once, or after 10^6 starts in one step).

    Returns per step: ``started`` (tasks started between the previous step's return and this one's) and
    ``accepted_surplus`` (accepted results left after the step took its B).
    """
    if B < 1:
        raise ValueError("AReaL: the batch size must be at least 1")
    if not _some_group_can_be_mixed(rates, n):
        raise _never_accepts("AReaL")
    draws = _AReaLTasks(np.random.default_rng(seed), rates, n)
    state = _AReaLState(B=B, ofp=ofp)
    out: Arrays = {"started": np.zeros(steps, np.int64), "accepted_surplus": np.zeros(steps, np.int64)}
    carried = 0
    for step in range(steps):
        out["started"][step] = carried + _areal_advance(state, draws, None)
        state.surplus -= B
        out["accepted_surplus"][step] = state.surplus
        carried = _areal_advance(state, draws, state.now + train_time) if train_time > 0 else 0
        state.version += 1  # rl_trainer.py l.735-738, during the pause
    return out


# --------------------------------------------------------------------------------------------- smoke run


def _show(name: str, result: Arrays, seconds: float) -> None:
    means = ", ".join(f"{key} {np.mean(value):.4g}" for key, value in result.items())
    print(f"{name:<44} {seconds:5.2f} s  {means}")


def _timed(name: str, fn: Callable[..., Arrays], *args: Any, **kwargs: Any) -> Arrays:
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    _show(name, result, time.perf_counter() - start)
    return result


def _check_by_hand() -> None:
    """Facts worked out by hand: NeMo-RL's std per row, and loops on data where nothing is ever dropped."""
    one_right = np.array([[1, 0, 0]], np.float32)
    assert (nemo_rl_std(one_right, loo=True) != 0).tolist() == [[False, True, True]]
    assert (nemo_rl_std(one_right, loo=False) != 0).all()
    assert not (nemo_rl_std(np.array([[1, 0]], np.float32), loo=True) != 0).any()
    assert not (nemo_rl_std(np.array([[1, 1, 1, 1]], np.float32), loo=True) != 0).any()
    assert (nemo_rl_std(np.array([[1, 1, 0, 0]], np.float32), loo=True) != 0).all()
    assert not (nemo_rl_std(np.array([[1]], np.float32), loo=False) != 0).any()
    mixed = np.random.default_rng(0).uniform(0.3, 0.7, 1000)  # at n = 64 no group is ever all alike
    s = slime_steps(mixed, 64, 96, 64, 2000, seed=1)
    assert (s["dropped"] == 0).all()
    assert (s["submitted"] == 96).all()
    assert (s["completed"] == 64).all()
    assert (s["aborted"] == 32).all()
    a = areal_steps(mixed, 64, 64, 2, 500, seed=2)
    assert a["started"][0] == 128  # 64 at once, then one for each accepted completion
    assert (a["started"][1:] == 64).all()
    assert (a["accepted_surplus"] == 0).all()


def _nemo_rl_smoke(rates: Floats, steps: int) -> None:
    for P, mult, n, M, loo in [(64, 1.0, 8, 2, False), (64, 1.0, 8, 2, True), (200, 1.0, 16, 2, True)]:
        name = f"nemo_rl_steps P={P} x{mult:g} n={n} M={M} loo={loo}"
        nemo = _timed(name, nemo_rl_steps, rates, P, mult, n, M, loo, steps, 1)
        assert loo or (nemo["rows_kept"] % n == 0).all()
        assert (nemo["rows_trained"][~nemo["crashed"]] == P * n).all()
        assert (nemo["rows_kept"][~nemo["crashed"]] >= P * n).all()
    _timed("nemo_rl_steps P=200 x3 n=16 M=2 loo=True", nemo_rl_steps, rates, 200, 3.0, 16, 2, True, steps, 2)
    nemo = _timed(
        "nemo_rl_steps P=64 x1 n=2 M=2 loo=True", nemo_rl_steps, rates, 64, 1.0, 2, 2, True, steps, 3
    )
    assert (nemo["rows_kept"] == 0).all()  # n = 2 with leave-one-out: no row is ever kept
    assert nemo["crashed"].all()
    assert (nemo["batches"] == 3).all()
    small = np.random.default_rng(4).choice(rates, 400, replace=False)
    for replacement in (False, True):
        name = f"nemo_rl_runs 400 prompts B=40 n=8 M=1 3 ep repl={replacement}"
        runs = _timed(name, nemo_rl_runs, small, 40, 1.0, 8, 1, False, 3, None, 4000, 5, replacement)
        assert (runs["batches"] <= 30).all()
        assert (runs["steps"] <= runs["batches"]).all()
    name = "nemo_rl_runs all Big-Math B=64 n=8 M=2 max 50 steps"
    runs = _timed(name, nemo_rl_runs, rates, 64, 1.0, 8, 2, False, 1, 50, 200, 6, False)
    assert (runs["steps"] <= 50).all()


def _main() -> None:
    from pathlib import Path

    import polars as pl

    path = Path(__file__).resolve().parent.parent / "sample_data" / "bigmath_solve_rates.parquet"
    rates = pl.read_parquet(path)["llama8b_solve_rate"].to_numpy()
    _check_by_hand()
    steps = 10_000
    print(f"Big-Math: {rates.size} prompts; {steps} steps per call (runs: as given)")
    _nemo_rl_smoke(rates, steps)
    sky = _timed(
        "skyrl_replace_steps B=64 n=8 M=30 ratio 0.3", skyrl_replace_steps, rates, 64, 8, 30, 0.3, steps, 7
    )
    ok = ~sky["crashed"]
    assert (sky["copied"][ok] == 64 - sky["good"][ok]).all()
    assert (sky["good"][ok] > 64 * 0.3).all()
    _timed("skyrl_replace_steps B=64 n=2 M=3 ratio 0.3", skyrl_replace_steps, rates, 64, 2, 3, 0.3, steps, 8)
    for over in (64, 96):
        sl = _timed(f"slime_steps T=64 O={over} n=8", slime_steps, rates, 64, over, 8, steps, 9)
        assert (sl["completed"] - sl["dropped"] == 64).all()
        assert (sl["submitted"] == sl["completed"] + sl["aborted"]).all()
    for ofp, train_time in ((0, 0.0), (2, 0.0), (2, 3.0)):
        name = f"areal_steps B=64 n=8 ofp={ofp} train_time={train_time:g}"
        ar = _timed(name, areal_steps, rates, 64, 8, ofp, steps, 10, train_time=train_time)
        assert (ar["accepted_surplus"] <= ofp * 64).all()
        assert train_time > 0 or (ar["accepted_surplus"] == 0).all()
    print("checks by hand: all passed")


if __name__ == "__main__":
    _main()

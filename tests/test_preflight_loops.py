"""open-instruct's, OpenRLHF's, prime-rl's and Pilot-Commit's loops (sigmatool.preflight.streams, .pilot,
.rows), each against a simulation of the trainer's control flow written here from its source, and exact
enumerations on tiny cases.

Sources (file:lines@commit):

- open-instruct, ``open_instruct/data_loader.py`` @ e6c3044aa6201c8bfa4573c1b03142af599e730d:
  ``accumulate_inference_batches`` l.1063-1171 (a filtered group counts toward the T results without
  ``active_sampling``, l.1129-1133; no group kept: the step is redone, l.1165-1171 and l.1443-1448);
  ``process_group`` l.810-816 (``percent_solved = mean(scores) / max_possible_score``, excluded when
  ≥ ``no_resampling_pass_rate``; filtered when ``np.std(scores) == 0``).
- OpenRLHF, ``openrlhf/trainer/ppo_utils/samples_generator.py`` @ 3c3be6234e0cb353e76bb8019947db9dfe99fca7:
  ``_generate_vllm`` l.151-197 (B prompts dispatched; a group kept iff ``min_r < mean < max_r``; a filtered
  one replaced by one new prompt; none left: the call returns nothing, exhausted); ``generate_samples``
  l.100-138 and ``ppo_trainer.py`` l.516-569 (the episode ends when the loader is exhausted);
  ``filter_pass_rate = len(experiences) / prompts_consumed * 100`` l.122-123.
- prime-rl, ``src/prime_rl/orchestrator/train_sink.py`` @ 559b44772e471d1538537b8805cc77f3824a5e64:
  ``process_group`` l.240-252 and ``_record_zero_output`` l.309-338 (a rejected group adds its traces to
  ``zero_output_units``, reset by an admitted one l.292; ``units // batch_size ≥ 10`` raises);
  ``process_batch`` l.340-367 (the first ``batch_size`` traces ship, zero-advantage ones pruned);
  ``curriculum/gates/adv.py`` l.25-36; ``curriculum/samplers/pool.py`` l.47-78.
- Pilot-Commit, ``recipe/pc/pc_ray_trainer.py`` @ 6def20ea211fc936ed092a5a08624807c54df381: ``fit``
  l.420-852 (a round's commit before its pilots join, l.478-520 and l.612-640; the cap l.668-683; the flush
  l.700; the epoch's end l.842-852), ``filter_batch`` l.287-328, ``replay_buffer.py`` l.70-87 (evicted when
  ``current_step − step > max_off_steps``).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from sigmatool import preflight
from sigmatool.estimators import Valuation
from sigmatool.preflight import pilot, streams
from sigmatool.trainers.settings import LoopSettings
from tests.conftest import BIGMATH

PLUGIN = Valuation("plugin")


@pytest.fixture(scope="module")
def rates() -> np.ndarray:
    """Big-Math's pass rates, one per prompt (the bundled sample)."""
    return pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy()


def _within(simulated: np.ndarray, modelled: float, label: str, z: float = 4.5) -> None:
    """The simulated mean within z standard errors of the model's (the rule of three's for a share the
    simulation never or always shows)."""
    se = max(simulated.std(ddof=1) / np.sqrt(simulated.size), 3.0 / simulated.size)
    assert abs(simulated.mean() - modelled) <= z * se, (label, simulated.mean(), modelled, se)


def _keep(rates: np.ndarray, settings: LoopSettings) -> preflight.Keep:
    hist = pl.DataFrame({"p": rates}).group_by("p").len("prompts").sort("p")
    return preflight.keep_probabilities(hist, settings.n, PLUGIN, settings)


def _std_kept(k: np.ndarray, n: int) -> np.ndarray:
    return (k > 0) & (k < n)


# ---------------------------------------------------------------------------------------------------------
# Keep rates, exactly: every reward vector of a tiny dataset through the trainer's own test.


def _enumerated(p: list[Fraction], n: int, kept: object) -> Fraction:
    """The dataset's keep chance: each prompt's reward vectors, kept by ``kept(rewards)``."""
    total = Fraction(0)
    for pi in p:
        for rewards in itertools.product((0, 1), repeat=n):
            chance = Fraction(1)
            for r in rewards:
                chance *= pi if r else 1 - pi
            total += chance * bool(kept(rewards))  # type: ignore[operator]
    return total / len(p)


TINY = [Fraction(1, 10), Fraction(1, 2), Fraction(3, 4), Fraction(1)]


@pytest.mark.parametrize(
    ("trainer", "extra", "kept"),
    [
        # Pilot-Commit's filter_batch (l.313-315): lower ≤ np.mean ≤ 1 − upper, its yaml's band
        ("pilot-commit", {"pilot_n": 4, "keep_lo": 0.25, "keep_hi": 1 - 0.25},
         lambda r: 0.25 <= np.mean(r) <= 1 - 0.25),
        # the 4B recipe's band (diversity_threshold_lower 0.125)
        ("pilot-commit", {"pilot_n": 8, "keep_lo": 0.125, "keep_hi": 0.75},
         lambda r: 0.125 <= np.mean(r) <= 0.75),
        # OpenRLHF's range (l.169-173): min_r < mean < max_r, here narrowed
        ("openrlhf", {"n": 5, "band": (0.2, 0.8)}, lambda r: 0.2 < sum(r) / len(r) < 0.8),
        # open-instruct and prime-rl: np.std(scores) == 0 filtered
        ("open-instruct", {"n": 4}, lambda r: np.std(r) > 0),
        ("prime-rl", {"n": 3}, lambda r: np.std(r) > 0),
    ],
)  # fmt: skip
def test_each_loops_keep_rate_is_the_enumerated_trainers_test(
    trainer: str, extra: dict[str, object], kept: object
) -> None:
    settings = LoopSettings(trainer=trainer, **extra)  # type: ignore[arg-type]
    size = settings.law_size
    expected = _enumerated(TINY, size, kept)
    keep = _keep(np.array([float(x) for x in TINY]), settings)
    assert keep.rate == pytest.approx(float(expected), abs=1e-12)


def test_pilot_commits_big_math_keep_rates_are_the_yaml_and_readme_bands(rates: np.ndarray) -> None:
    # Plug-in, pilot of 8: 34.5 % at the yaml's .25-.75, 45.9 % at the README's .125-.75.
    yaml = _keep(rates, LoopSettings(trainer="pilot-commit", pilot_n=8, keep_lo=0.25, keep_hi=0.75))
    readme = _keep(rates, LoopSettings(trainer="pilot-commit", pilot_n=8, keep_lo=0.125, keep_hi=0.75))
    assert round(yaml.rate, 3) == 0.345
    assert round(readme.rate, 3) == 0.459


# ---------------------------------------------------------------------------------------------------------
# open-instruct


def test_open_instructs_attempt_is_the_enumerated_accumulator() -> None:
    # T = 2 slots, n = 2 rewards, the tiny dataset: every prompt pair and reward vector of one attempt.
    T, n = 2, 2
    some, kept = Fraction(0), Fraction(0)
    for prompts in itertools.product(TINY, repeat=T):
        for rewards in itertools.product((0, 1), repeat=T * n):
            chance = Fraction(1, len(TINY) ** T)
            for i, r in enumerate(rewards):
                p = prompts[i // n]
                chance *= p if r else 1 - p
            groups = sum(np.std(rewards[i * n : (i + 1) * n]) > 0 for i in range(T))
            some += chance * (groups > 0)
            kept += chance * groups
    settings = LoopSettings(trainer="open-instruct", train_batch_size=T, n=n)
    figures = streams.open_instruct_step(_keep(np.array([float(x) for x in TINY]), settings).rate, T, False)
    assert figures["attempts"] == pytest.approx(float(1 / some), rel=1e-12)  # a step of none is redone
    assert figures["kept"] == pytest.approx(float(kept / some), rel=1e-12)


def test_prime_rls_gate_crash_is_the_enumerated_run_of_refusals() -> None:
    # One group of 2 a step (batch 2): 10 refused in a row raise; every sequence of 10 groups' fates.
    q = Fraction(3, 10)
    crash = Fraction(0)
    for fates in itertools.product((True, False), repeat=10):
        chance = Fraction(1)
        for admitted in fates:
            chance *= q if admitted else 1 - q
        units = 0
        for admitted in fates:
            if admitted:
                break
            units += 2
        crash += chance * (units // 2 >= 10)
    assert streams.prime_crash_step(float(q), 1, 2, 2) == pytest.approx(float(crash), rel=1e-12)


def open_instruct_sim(
    rates: np.ndarray, T: int, n: int, active: bool, steps: int, seed: int
) -> dict[str, np.ndarray]:
    """Per step: results read, attempts (calls of accumulate_inference_batches), groups trained."""
    rng = np.random.default_rng(seed)
    read = np.zeros(steps)
    attempts = np.zeros(steps)
    trained = np.zeros(steps)
    for s in range(steps):
        while True:  # _data_preparation_loop: a None result is redone, the step counter not advanced
            attempts[s] += 1
            sampled, groups = 0, 0
            while sampled < T:  # num_prompts_sampled < num_prompts
                p = rates[rng.integers(rates.size)]
                k = rng.binomial(n, p)
                read[s] += 1
                if not _std_kept(np.array(k), n):
                    if not active:
                        sampled += 1
                    continue
                sampled += 1
                groups += 1
            if groups:
                trained[s] = groups
                break
    return {"read": read, "attempts": attempts, "trained": trained}


@pytest.mark.parametrize(
    ("T", "n", "active", "hard"), [(8, 4, False, False), (4, 8, True, False), (3, 4, False, True)]
)
def test_open_instruct_steps_are_the_simulated_accumulator(
    rates: np.ndarray, T: int, n: int, active: bool, hard: bool
) -> None:
    data = rates[rates < 0.05] if hard else rates  # hard: most steps of 3 keep nothing and are redone
    sim = open_instruct_sim(data, T, n, active, 3_000, seed=T + n)
    settings = LoopSettings(trainer="open-instruct", train_batch_size=T, n=n, refill=active)
    keep = _keep(data, settings)
    figures = streams.open_instruct_step(keep.rate, T, active)
    _within(sim["read"], figures["results"], "results read")
    _within(sim["trained"], figures["kept"], "groups trained")
    if not active:
        _within(sim["attempts"], figures["attempts"], "attempts")


# ---------------------------------------------------------------------------------------------------------
# OpenRLHF


def openrlhf_episode(kept: list[bool], B: int, T: int) -> tuple[int, list[float]]:
    """One episode over prompts whose groups are kept or not (in dispatch order), as the generator runs it:
    (steps trained, each call's filter_pass_rate ÷ n)."""
    pos, steps, rates = 0, 0, []
    N = len(kept)
    while True:
        take = min(B, N - pos)  # _collect_prompt_batch(dataloader_iter, B)
        if take == 0:
            return steps, rates
        exhausted = take < B  # the loader ran out while collecting
        pending = list(range(pos, pos + take))
        pos += take
        consumed, accepted, dropped = take, 0, False
        while pending:
            i = pending.pop(0)
            if kept[i]:
                accepted += 1
                continue
            if pos >= N:  # the replacement finds no prompt: the call is dropped, the episode ends
                dropped = True
                break
            pending.append(pos)
            pos += 1
            consumed += 1
        if dropped:
            return steps, rates
        if take == B:
            rates.append(accepted / consumed * 100)
        steps += math.ceil(accepted / T)
        if exhausted or pos >= N:
            return steps, rates


@pytest.mark.parametrize(("N", "B", "T"), [(5, 2, 2), (6, 2, 1), (4, 3, 3)])
def test_openrlhf_episode_steps_are_the_enumerated_episode(N: int, B: int, T: int) -> None:
    a = Fraction(3, 5)
    expected = Fraction(0)
    for kept in itertools.product((True, False), repeat=N):
        chance = Fraction(1)
        for x in kept:
            chance *= a if x else 1 - a
        expected += chance * openrlhf_episode(list(kept), B, T)[0]
    assert streams.episode_steps(float(a), N, B, T) == pytest.approx(float(expected), rel=1e-12)


def test_openrlhf_episodes_and_pass_rate_are_the_simulated_generators(rates: np.ndarray) -> None:
    rng = np.random.default_rng(3)
    N, B, n = 400, 32, 8
    settings = LoopSettings(trainer="openrlhf", train_batch_size=B, n=n)
    keep = _keep(rates, settings)
    steps, pass_rates = [], []
    for _ in range(1_500):
        p = rates[rng.integers(rates.size, size=N)]
        kept = _std_kept(rng.binomial(n, p), n)
        done, per_call = openrlhf_episode(kept.tolist(), B, B)
        steps.append(done)
        pass_rates += per_call
    _within(np.array(steps, dtype=float), streams.episode_steps(keep.rate, N, B, B), "steps per episode")
    _within(n * np.array(pass_rates), streams.refill_pass_rate(keep.rate, B, n), "pass rate")


def test_openrlhfs_pass_rate_on_big_math_reads_over_400_percent(rates: np.ndarray) -> None:
    # 100 n T / (T + R) at n = 8: a rollouts-per-prompt ratio, 8 × the keep rate, not a share.
    keep = _keep(rates, LoopSettings(trainer="openrlhf", train_batch_size=128, n=8))
    assert 440 < streams.refill_pass_rate(keep.rate, 128, 8) < 450


# ---------------------------------------------------------------------------------------------------------
# prime-rl


def prime_rl_sim(q: float, T: int, n: int, steps: int, runs: int, seed: int) -> np.ndarray:
    """Per run: the step at which the sink raises (0: none), the advantage gate on, groups admitted with
    chance q; ``zero_output_units`` counts a rejected group's n traces and is reset by an admitted one."""
    rng = np.random.default_rng(seed)
    batch = T * n
    out = np.zeros(runs)
    for r in range(runs):
        units = 0
        for s in range(1, steps + 1):
            pending = 0
            while pending < batch and not out[r]:
                if rng.random() < q:
                    pending += n
                    units = 0
                else:
                    units += n
                    if units // batch >= 10:
                        out[r] = s
            if out[r]:
                break
    return out


@pytest.mark.parametrize(("q", "T", "n"), [(0.05, 4, 4), (0.02, 2, 8)])
def test_prime_rls_gate_raises_as_the_simulated_sink(q: float, T: int, n: int) -> None:
    raised = prime_rl_sim(q, T, n, 3, 4_000, seed=int(q * 100))
    c = streams.prime_crash_step(q, T, T * n, n)
    _within((raised == 1).astype(float), c, "first step")
    _within((raised > 0).astype(float), -math.expm1(3 * math.log1p(-c)), "three steps")


def test_prime_rls_gate_on_prompts_solved_at_most_once_in_64() -> None:
    # Big-Math's prompts with k ≤ 1 of 64 (plug-in at n = 4: p = 1/64 keeps 1 − (63/64)^4 − (1/64)^4),
    # batch 64 rollouts, groups of 4: 3 % of steps raise, 60 % of 30-step runs.
    k = np.rint(pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy() * 64)
    zero, one = float((k == 0).sum()), float((k == 1).sum())
    a = one * (1 - (63 / 64) ** 4 - (1 / 64) ** 4) / (zero + one)
    step = streams.prime_crash_step(a, 16, 64, 4)
    assert round(step, 2) == 0.03
    assert round(-math.expm1(30 * math.log1p(-step)), 1) == 0.6


def pool_sim(
    rates: np.ndarray,
    pools: tuple[tuple[str, float, float], ...],
    T: int,
    n: int,
    steps: int,
    seed: int,
    gate: bool = False,
) -> np.ndarray:
    """Tasks in each pool after ``steps`` steps, as DifficultyPoolSampler draws and observes: T draws a
    step, or (``gate``) draws until T groups with a nonzero advantage are admitted."""
    rng = np.random.default_rng(seed)
    order = sorted(range(len(pools)), key=lambda i: pools[i][1])
    state = np.full(rates.size, -1)  # -1: unseen
    weights = np.array([w for _, _, w in pools])
    for _ in range(steps):
        admitted = drawn = 0
        while (admitted if gate else drawn) < T:
            w = np.where(state < 0, 1.0, weights[np.maximum(state, 0)])
            i = rng.choice(rates.size, p=w / w.sum())
            k = rng.binomial(n, rates[i])
            state[i] = next((j for j in order if k / n <= pools[j][1]), order[-1])
            drawn += 1
            admitted += 0 < k < n
    return np.array([(state == j).sum() for j in range(len(pools))], dtype=float)


@pytest.mark.parametrize("gate", [False, True])
def test_prime_rls_pools_fill_as_the_simulated_sampler(rates: np.ndarray, gate: bool) -> None:
    data = np.random.default_rng(1).choice(rates, 300, replace=False)
    pools = (("hard", 0.25, 0.2), ("normal", 0.75, 1.0), ("easy", 1.0, 0.2))
    settings = LoopSettings(trainer="prime-rl", train_batch_size=8, n=4, pools=pools, steps=30, refill=gate)
    keep = _keep(data, settings)
    run = streams.pool_run(keep, pools, 8, 30, refill=gate)
    sims = np.array([pool_sim(data, pools, 8, 4, 30, seed, gate) for seed in range(60)])
    for j, (name, _, _) in enumerate(pools):
        _within(sims[:, j], run["pools"][name], name)


# ---------------------------------------------------------------------------------------------------------
# Pilot-Commit


def pilot_sim(
    pi: float, B: int, T: int, M: int, L: int, evict: int, runs: int, seed: int
) -> dict[str, np.ndarray]:
    """One epoch of L rounds per run, as ``fit`` runs it: commit min(need, buffer) drawn at random from
    the buffer, then the round's Binomial(B, π) kept pilots join tagged with the step; a short step at
    round M raises; a done step flushes entries with ``step − tag > evict``."""
    rng = np.random.default_rng(seed)
    out = {k: np.zeros(runs) for k in ("steps", "crash", "rounds", "first_crash", "first_rounds")}
    for r in range(runs):
        buffer: list[int] = []
        step, need, rounds_in, done = 1, T, 0, 0
        for _ in range(L):
            rounds_in += 1
            out["rounds"][r] += 1
            if buffer:
                c = min(need, len(buffer))
                gone = set(rng.choice(len(buffer), c, replace=False).tolist())
                buffer = [tag for i, tag in enumerate(buffer) if i not in gone]
                need -= c
            buffer += [step] * int(rng.binomial(B, pi))
            if need > 0:
                if M > 0 and rounds_in >= M:
                    out["crash"][r] = 1
                    out["first_crash"][r] = done == 0
                    break
                continue
            if done == 0:
                out["first_rounds"][r] = rounds_in
            done += 1
            buffer = [tag for tag in buffer if step - tag <= evict]
            step, need, rounds_in = step + 1, T, 0
        out["steps"][r] = done
    return out


@pytest.mark.parametrize(
    ("pi", "B", "T", "M", "L", "evict"),
    [(0.35, 12, 10, 3, 20, 4), (0.3, 8, 4, 2, 15, 1), (0.2, 10, 4, 0, 12, 4), (0.6, 16, 6, 10, 12, 4)],
)
def test_pilot_commit_epoch_is_the_simulated_loop(
    pi: float, B: int, T: int, M: int, L: int, evict: int
) -> None:
    sim = pilot_sim(pi, B, T, M, L, evict, 4_000, seed=B + T + M)
    e = pilot.pilot_epoch(pi, B, T, M, L)
    _within(sim["steps"], e.steps, "steps")
    _within(sim["crash"], e.p_crash, "crash")
    _within(sim["rounds"], e.rounds, "rounds")
    _within(sim["first_crash"], e.p_crash_first_step, "first step's crash")


def test_pilot_commit_with_a_cap_of_one_always_crashes() -> None:
    e = pilot.pilot_epoch(0.9, 64, 8, 1, 10)
    assert e.p_crash_first_step == 1.0
    assert e.p_crash == 1.0


def _enumerate_epoch(pi: Fraction, B: int, T: int, M: int, L: int) -> tuple[Fraction, Fraction]:
    """(E[steps], P(crash)) of one epoch by every round's kept count (no eviction: the counts are all)."""
    steps = crash = Fraction(0)
    pmf = [Fraction(math.comb(B, x)) * pi**x * (1 - pi) ** (B - x) for x in range(B + 1)]
    for xs in itertools.product(range(B + 1), repeat=L):
        chance = Fraction(1)
        for x in xs:
            chance *= pmf[x]
        buffer, need, rounds_in, done, crashed = 0, T, 0, 0, False
        for x in xs:
            rounds_in += 1
            c = min(need, buffer)
            buffer, need = buffer - c + x, need - c
            if need > 0:
                if M > 0 and rounds_in >= M:
                    crashed = True
                    break
                continue
            done, need, rounds_in = done + 1, T, 0
        steps += chance * done
        crash += chance * crashed
    return steps, crash


@pytest.mark.parametrize(("B", "T", "M", "L"), [(2, 2, 2, 5), (3, 2, 3, 5), (2, 3, 0, 6)])
def test_pilot_commit_epoch_is_the_enumerated_loop(B: int, T: int, M: int, L: int) -> None:
    pi = Fraction(2, 5)
    steps, crash = _enumerate_epoch(pi, B, T, M, L)
    e = pilot.pilot_epoch(float(pi), B, T, M, L)
    assert e.steps == pytest.approx(float(steps), abs=1e-12)
    assert e.p_crash == pytest.approx(float(crash), abs=1e-12)


def pilot_run_sim(
    pi: float, B: int, T: int, M: int, L: int, epochs: int, steps: int, runs: int, seed: int
) -> dict[str, np.ndarray]:
    """Whole runs of ``fit`` (l.420-852): epochs of L rounds from an empty buffer (the partial step and the
    buffer dropped at each epoch's end), ending at ``steps`` steps (``is_last_step``), a crash, or the
    epochs' end; eviction kept out (the chain's assumption, measured above)."""
    rng = np.random.default_rng(seed)
    out = {k: np.zeros(runs) for k in ("steps", "crash", "rounds")}
    for r in range(runs):
        done = 0
        for _ in range(epochs):
            buffer, need, rounds_in = 0, T, 0
            for _ in range(L):
                rounds_in += 1
                out["rounds"][r] += 1
                c = min(need, buffer)
                buffer, need = buffer - c + int(rng.binomial(B, pi)), need - c
                if need > 0:
                    if M > 0 and rounds_in >= M:
                        out["crash"][r] = 1
                        break
                    continue
                done += 1
                need, rounds_in = T, 0
                if done >= steps:
                    break
            if out["crash"][r] or done >= steps:
                break
        out["steps"][r] = done
    return out


# The step limit beyond the epochs' steps, within the second epoch, and within the first of endless caps.
@pytest.mark.parametrize(
    ("pi", "B", "T", "M", "L", "epochs", "steps"),
    [(0.4, 10, 6, 3, 8, 3, 100), (0.4, 10, 6, 3, 8, 3, 4), (0.35, 12, 10, 0, 20, 2, 9)],
)
def test_a_pilot_commit_run_of_epochs_is_the_simulated_run(
    pi: float, B: int, T: int, M: int, L: int, epochs: int, steps: int
) -> None:
    sim = pilot_run_sim(pi, B, T, M, L, epochs, steps, 4_000, seed=steps)
    crash, done, rounds = pilot.pilot_run_exact(pi, B, T, M, L, epochs, steps)
    _within(sim["crash"], crash, "crash")
    _within(sim["steps"], done, "steps")
    _within(sim["rounds"], rounds, "rounds")


def test_without_a_step_limit_the_exact_run_is_the_product_over_epochs() -> None:
    epoch = pilot.pilot_epoch(0.4, 10, 6, 3, 8)
    exact = pilot.pilot_run_exact(0.4, 10, 6, 3, 8, 3, 10_000)
    assert exact == pytest.approx(pilot.pilot_run([epoch] * 3), rel=1e-10)

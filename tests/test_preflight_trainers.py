"""Other trainers' filtering loops (docs/preflight.md, "Other trainers' loops"): each simulated literally
from its source, prompt by prompt, against ``preflight``'s step at the settings the docs map it to; the
loops that are not verl's against the simulations of tests/trainer_sims.py (each citing its source).

- SkyRL's ``filter`` (NovaSky-AI/SkyRL @ a9564572eb8e91076be43c1bd5e4615e3de17265,
  ``skyrl/train/trainer.py`` l.1613-1636 and ``skyrl/train/utils/trainer_utils.py`` l.517-607): a generation
  batch of ``train_batch_size`` prompts; the counter is raised, groups with ``np.std > 0`` (or n = 1) are
  appended, the step is done at ``train_batch_size`` groups, and a ``RuntimeError`` is raised when it is
  still short and the counter has reached ``max_sample_batches`` > 0.
- NeMo-RL's dynamic sampling without the leave-one-out baseline (NVIDIA-NeMo/RL @
  7ea279abfbeb698b092856d0dab61e7cf39bc909, ``nemo_rl/algorithms/grpo.py`` l.565-573, 1738-1821, 2924): a
  generation batch of ``int(num_prompts_per_step × batch_multiplier)`` prompts; the counter is raised
  before generating; the rows of groups with std > 0 are cached, the step is done at ``num_prompts_per_step
  × n`` rows; otherwise ``assert dynamic_sampling_max_gen_batches > 0`` and the loop goes on while the
  counter is ≤ that cap, else ``ValueError``.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sigmatool import preflight
from sigmatool.preflight import others
from tests import trainer_sims
from tests.conftest import BIGMATH

STEPS = 10_000


@pytest.fixture(scope="module")
def rates() -> np.ndarray:
    """Big-Math's pass rates, one per prompt (the bundled sample)."""
    return pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy()


def _kept(rng: np.random.Generator, rates: np.ndarray, steps: int, B: int, n: int) -> np.ndarray:
    """Kept groups in one generation batch of B prompts per step: each prompt drawn from the dataset, its n
    rewards drawn, kept when they do not all agree (every group of one rollout is kept)."""
    p = rates[rng.integers(0, rates.size, size=(steps, B))]
    right = rng.binomial(n, p)
    keep = (right > 0) & (right < n) if n > 1 else np.ones_like(right, dtype=bool)
    return np.asarray(keep.sum(axis=1))


def skyrl_filter(rates: np.ndarray, B: int, n: int, M: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per step: batches drawn and whether it raised, as SkyRL's trainer runs ``filter``."""
    rng = np.random.default_rng(seed)
    kept, count = np.zeros(STEPS, dtype=np.int64), np.zeros(STEPS, dtype=np.int64)
    going, crashed = np.ones(STEPS, dtype=bool), np.zeros(STEPS, dtype=bool)
    while going.any():
        count[going] += 1  # the counter is raised first
        kept[going] += _kept(rng, rates, int(going.sum()), B, n)
        done = going & (kept >= B)
        raise_now = going & ~done & (M > 0) & (count >= M)
        crashed |= raise_now
        going &= ~done & ~raise_now
    return count, crashed


def nemo_rl(
    rates: np.ndarray, P: int, multiplier: float, n: int, M: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per step: batches drawn and whether it raised, as NeMo-RL's ``grpo_train`` runs dynamic sampling
    without the leave-one-out baseline (rows of a group are kept or dropped together)."""
    rng = np.random.default_rng(seed)
    B = int(P * multiplier)
    rows, count = np.zeros(STEPS, dtype=np.int64), np.zeros(STEPS, dtype=np.int64)
    going, crashed = np.ones(STEPS, dtype=bool), np.zeros(STEPS, dtype=bool)
    while going.any():
        count[going] += 1  # raised before the batch is generated
        rows[going] += n * _kept(rng, rates, int(going.sum()), B, n)
        done = going & (rows >= P * n)
        short = going & ~done
        # assert M > 0 (an AssertionError stops the run as the ValueError does), then go on while count ≤ M
        stop = short & ((M <= 0) | (count > M))
        crashed |= stop
        going &= ~done & ~stop
    return count, crashed


def _modelled(rates: np.ndarray, B: int, T: int, n: int, M: int) -> preflight.Step:
    q = 1.0 - rates**n - (1.0 - rates) ** n if n > 1 else np.ones_like(rates)
    return preflight.step(float(q.mean()), B, T, n, M)


def _agrees(count: np.ndarray, crashed: np.ndarray, s: preflight.Step) -> None:
    """The simulated crash share and mean batches within 4.5 standard errors of the model's (the error of a
    share the steps never or always show taken as the rule of three's, 3 / steps)."""
    for simulated, modelled in (
        (crashed.astype(float), s.p_crash),
        (count.astype(float), s.expected_batches),
    ):
        se = max(simulated.std(ddof=1) / np.sqrt(simulated.size), 3.0 / simulated.size)
        assert abs(simulated.mean() - modelled) <= 4.5 * se, (simulated.mean(), modelled, se)


# From safe (one batch nearly always fills the step) to crashing most steps; n = 1 keeps every group.
@pytest.mark.parametrize(("B", "n", "M"), [(64, 8, 2), (64, 8, 1), (64, 4, 3), (200, 16, 1), (64, 1, 1)])
def test_skyrl_filter_is_verls_loop_with_the_gen_batch_its_train_batch(
    rates: np.ndarray, B: int, n: int, M: int
) -> None:
    count, crashed = skyrl_filter(rates, B, n, M, seed=B + n + M)
    _agrees(count, crashed, _modelled(rates, B, B, n, M))


def test_skyrl_filter_without_a_cap_never_raises(rates: np.ndarray) -> None:
    count, crashed = skyrl_filter(rates, 64, 8, -1, seed=5)
    assert not crashed.any()
    _agrees(count, crashed, _modelled(rates, 64, 64, 8, 0))


@pytest.mark.parametrize(
    ("P", "multiplier", "n", "M"), [(64, 1.0, 8, 1), (64, 1.0, 4, 2), (64, 1.5, 4, 1), (100, 1.0, 16, 0)]
)
def test_nemo_rl_is_verls_loop_with_one_more_batch(
    rates: np.ndarray, P: int, multiplier: float, n: int, M: int
) -> None:
    count, crashed = nemo_rl(rates, P, multiplier, n, M, seed=P + n + M)
    # Its cap M lets M + 1 batches run; a cap ≤ 0 fails at the first short batch: verl's cap of 1.
    _agrees(count, crashed, _modelled(rates, int(P * multiplier), P, n, max(M, 0) + 1))
    assert crashed.any()  # each setting is one where the difference shows


# ---------------------------------------------------------------------------------------------------------
# The loops that are not verl's (sigmatool.preflight.others), each against its literal simulation
# (tests/trainer_sims.py, which cites the trainer's file, commit and lines).


def _keep(rates: np.ndarray, n: int, loo: bool = False) -> preflight.Keep:
    """Each prompt's chance of a kept group, from its pass rate (one prompt per value); with NeMo-RL's
    leave-one-out, the chance of k = 1 or n − 1 right (n − 1 rows kept), none at n ≤ 2."""
    q = 1.0 - rates**n - (1.0 - rates) ** n
    if not loo:
        return preflight.Keep(q, np.ones_like(rates))
    if n <= 2:
        return preflight.Keep(np.zeros_like(rates), np.ones_like(rates))
    short = n * (rates * (1 - rates) ** (n - 1) + rates ** (n - 1) * (1 - rates))
    return preflight.Keep(q, np.ones_like(rates), short)


def _within(simulated: np.ndarray, modelled: float, label: str) -> None:
    """The simulated mean within 4.5 standard errors of the model's (the rule of three's for a share the
    simulation never or always shows)."""
    se = max(simulated.std(ddof=1) / np.sqrt(simulated.size), 3.0 / simulated.size)
    assert abs(simulated.mean() - modelled) <= 4.5 * se, (label, simulated.mean(), modelled, se)


def test_the_leave_one_out_share_is_each_estimators(rates: np.ndarray) -> None:
    # The model writes P(k = 1 or n − 1) with the all-wrong and all-right chances at n − 1 and n, so that
    # each estimator gives it: with the plug-in, the binomial formula.
    hist = pl.DataFrame({"p": rates}).group_by("p").len("prompts").sort("p")
    settings = preflight.LoopSettings(trainer="nemo-rl", n=6, leave_one_out=True)
    from tests.test_preflight import PLUGIN

    keep = preflight.keep_probabilities(hist, 6, PLUGIN, settings)
    assert keep.short_rate == pytest.approx(_keep(rates, 6, loo=True).short_rate, rel=1e-12)
    assert preflight.keep_probabilities(hist, 6, PLUGIN).short_rate == 0.0  # verl's loop: whole groups


# NeMo-RL with its leave-one-out baseline: n = 3 (every kept group one row short), 4 and 8, from safe to
# crashing most steps; whole groups would give 0.0823 and 0.0012 for the first two crash chances.
@pytest.mark.parametrize(
    ("P", "multiplier", "n", "M"),
    [(64, 1.0, 8, 1), (64, 2.0, 3, 1), (64, 1.25, 4, 2), (64, 1.0, 8, 3), (100, 1.0, 4, 0)],
)
def test_nemo_rl_with_leave_one_out_fills_rows(
    rates: np.ndarray, P: int, multiplier: float, n: int, M: int
) -> None:
    sim = trainer_sims.nemo_rl_steps(rates, P, multiplier, n, M, True, STEPS, seed=P + n + M)
    keep = _keep(rates, n, loo=True)
    s = preflight.step(keep.rate, int(P * multiplier), P, n, max(M, 0) + 1, short_rate=keep.short_rate)
    _within(sim["crashed"].astype(float), s.p_crash, "crash")
    _within(sim["batches"].astype(float), s.expected_batches, "batches")
    _within(sim["rows_kept"] * sim["crashed"], s.lost_in_crash, "rows lost in a crash")
    _within(sim["rows_trained"].astype(float), s.trained, "rows trained")


def test_nemo_rl_with_leave_one_out_keeps_nothing_at_two_rollouts(rates: np.ndarray) -> None:
    sim = trainer_sims.nemo_rl_steps(rates, 32, 1.0, 2, 2, True, 200, seed=2)
    keep = _keep(rates, 2, loo=True)
    assert sim["crashed"].all()
    assert preflight.step(keep.rate, 32, 32, 2, 3).p_crash == 1.0


# Whole NeMo-RL runs on 400 prompts of Big-Math's with 0.05 < p < 0.95: each epoch starts with an empty
# cache, so a step half filled at its end is dropped; runs end at the first of the epochs and the steps, or
# a crash. Carried over epochs, as verl does, the first would take 12.60 steps, not 11.66.
@pytest.mark.parametrize(
    ("P", "B", "loo", "steps"), [(40, 44, False, None), (40, 50, True, None), (40, 50, True, 9)]
)
def test_nemo_rl_runs_start_each_epoch_afresh(
    rates: np.ndarray, P: int, B: int, loo: bool, steps: int | None
) -> None:
    mixed = rates[(rates > 0.05) & (rates < 0.95)]
    data = np.random.default_rng(4).choice(mixed, 400, replace=False)
    n, M, epochs, runs = 4, 1, 3, 6_000
    sim = trainer_sims.nemo_rl_runs(data, P, B / P, n, M, loo, epochs, steps, runs, seed=B, replacement=True)
    keep = _keep(data, n, loo)
    settings = preflight.LoopSettings(
        trainer="nemo-rl", train_batch_size=P, gen_batch_size=B, n=n, max_gen_batches=M,
        leave_one_out=loo, epochs=epochs, steps=steps,
    )  # fmt: skip
    _, crash, run_steps, run_batches = preflight.run_of(keep, settings)
    _within(sim["crashed"].astype(float), crash, "crash")
    _within(sim["steps"].astype(float), run_steps, "steps")
    _within(sim["batches"].astype(float), run_batches, "batches")


# SkyRL's replace: safe, a stricter ratio, and n = 2 with a cap of 3, where most steps raise.
@pytest.mark.parametrize(
    ("B", "n", "M", "ratio"), [(64, 8, 30, 0.3), (64, 4, 5, 0.6), (64, 2, 3, 0.3), (40, 2, 0, 0.25)]
)
def test_skyrl_replace_passes_batches_one_by_one(
    rates: np.ndarray, B: int, n: int, M: int, ratio: float
) -> None:
    sim = trainer_sims.skyrl_replace_steps(rates, B, n, M, ratio, STEPS, seed=B + n + M)
    keep = _keep(rates, n)
    s, copied = preflight.replace_step(keep.rate, B, n, M, ratio)
    _within(sim["crashed"].astype(float), s.p_crash, "crash")
    _within(sim["batches"].astype(float), s.expected_batches, "batches")
    passed = ~sim["crashed"]
    _within(sim["copied"][passed] / B, copied, "copied share")


# slime: rounds as large as the batch, and half as large again; a harder set at n = 4.
@pytest.mark.parametrize(
    ("T", "size", "n", "hard"), [(64, 64, 8, False), (64, 96, 8, False), (32, 32, 4, True)]
)
def test_slime_streams_rounds_until_the_batch_is_full(
    rates: np.ndarray, T: int, size: int, n: int, hard: bool
) -> None:
    data = rates[rates < 0.2] if hard else rates
    sim = trainer_sims.slime_steps(data, T, size, n, 4_000, seed=T + size + n)
    figures = others.streamed(float(_keep(data, n).rate), T, size)
    for key in ("submitted", "completed", "aborted"):
        _within(sim[key].astype(float), figures[key], key)


@pytest.mark.parametrize(("ofp", "train_time"), [(0, 0.0), (2, 3.0)])
def test_areal_draws_one_prompt_per_rejection(rates: np.ndarray, ofp: int, train_time: float) -> None:
    sim = trainer_sims.areal_steps(rates, 32, 8, ofp, 3_000, seed=ofp, train_time=train_time)
    figures = others.streamed(float(_keep(rates, 8).rate), 32, None)
    _within(sim["started"][100:].astype(float), figures["submitted"], "started")  # past the first steps


def test_slimes_partial_rollout_resumes_what_was_in_flight(rates: np.ndarray) -> None:
    # A step's new prompts are then those the loop completes, T / keep rate on average, once the chain
    # has run a few steps (the first step has nothing to resume).
    sim = trainer_sims.slime_partial_steps(rates, 32, 48, 8, 3_000, seed=3)
    a = float(_keep(rates, 8).rate)
    figures = others.streamed(a, 32, 48)
    _within(sim["fresh"][20:].astype(float), figures["completed"], "new prompts")
    _within(sim["completed"][20:].astype(float), figures["completed"], "completed")
    settings = preflight.LoopSettings(
        trainer="slime", train_batch_size=32, gen_batch_size=48, n=8, partial_rollout=True
    )
    row, _ = preflight.summarize(_keep(rates, 8), settings)
    assert row["prompts_per_step"][0] == pytest.approx(figures["completed"])

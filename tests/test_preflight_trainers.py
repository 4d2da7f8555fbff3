"""Other trainers' filtering loops that are verl's loop under other settings (docs/preflight.md, "Other
trainers' loops"): each simulated literally from its source, prompt by prompt, against ``preflight``'s step
at the settings the docs map it to.

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

"""Retirement over epochs (``--retire P [--recheck F]``, sigmatool.preflight.retire) against pools simulated
prompt by prompt as the trainers retire them.

- open-instruct, ``open_instruct/data_loader.py`` @ e6c3044aa6201c8bfa4573c1b03142af599e730d: l.789-800 (the
  replacement prompt is sent before the exclusion is recorded), l.810-813 (``percent_solved =
  np.mean(scores) / max_possible_score``, scores in units of ``verification_reward`` = 10, l.452; excluded
  when ≥ ``no_resampling_pass_rate``), l.160-172 and l.262-273 (the reshuffle at an epoch's end drops the
  indices excluded so far), l.1390-1401 (``async_steps`` × T prompts in flight).
- Pilot-Commit, ``recipe/pc/pc_ray_trainer.py`` @ 6def20ea211fc936ed092a5a08624807c54df381: l.642-650 and
  ``exclude_batch`` l.330-352 (a pilot with ``np.mean ≥ exclude_threshold_upper`` is marked), l.854-857 (the
  marks applied at the epoch's end).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sigmatool import preflight
from sigmatool.estimators import Valuation
from sigmatool.preflight import retire
from sigmatool.trainers.settings import LoopSettings
from tests.conftest import BIGMATH, csv_of, invoke

PLUGIN = Valuation("plugin")


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    """3,000 of Big-Math's pass rates."""
    rates = pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy()
    return np.random.default_rng(0).choice(rates, 3_000, replace=False)


def simulate_pools(
    p: np.ndarray,
    n: int,
    threshold: float,
    F: float,
    late: int,
    epochs: int,
    open_instruct: bool,
    seed: int,
    batch: int = 0,
) -> np.ndarray:
    """Each epoch's pool size at its start: every prompt of the pool drawn once in a random order, retired
    when its mean reaches the threshold (open-instruct's ``(10 k / n) / 10``, else k / n); the last
    ``late`` of an epoch's order are marked only during the next epoch, so they leave after it; each
    retired prompt returns with chance F at each epoch's start; with ``batch``, the order's last partial
    batch is not drawn (``drop_last``)."""
    rng = np.random.default_rng(seed)
    active = np.ones(p.size, dtype=bool)
    retired = np.zeros(p.size, dtype=bool)
    marked_late = np.zeros(p.size, dtype=bool)
    sizes = []
    for _ in range(epochs):
        sizes.append(int(active.sum()))
        order = rng.permutation(np.flatnonzero(active))
        if batch:
            order = order[: order.size // batch * batch]
        k = rng.binomial(n, p[order])
        mean = (10.0 * k / n) / 10.0 if open_instruct else k / n
        hit = mean >= threshold
        now = np.zeros(p.size, dtype=bool)
        cut = max(order.size - late, 0)
        now[order[:cut][hit[:cut]]] = True
        now |= marked_late  # the epoch before's late marks, applied at this epoch's end
        marked_late = np.zeros(p.size, dtype=bool)
        marked_late[order[cut:][hit[cut:]]] = True
        marked_late &= ~now
        active &= ~now
        retired |= now
        back = retired & (rng.random(p.size) < F)
        active |= back
        retired &= ~back
    return np.array(sizes, dtype=float)


def _modelled(data: np.ndarray, settings: LoopSettings) -> pl.DataFrame:
    hist = pl.DataFrame({"p": data}).group_by("p").len("prompts").sort("p")
    keep = preflight.keep_probabilities(hist, settings.n, PLUGIN, settings)
    return retire.epochs(keep, settings, lambda pool: 1.0)[0]


@pytest.mark.parametrize(
    ("trainer", "n", "P", "F", "T"),
    [
        ("open-instruct", 8, 0.875, 0.0, 32),
        ("open-instruct", 4, 0.5, 0.3, 16),
        ("pilot-commit", 8, 1.0, 0.1, 256),
    ],
)
def test_retirement_matches_the_simulated_pools_epoch_by_epoch(
    data: np.ndarray, trainer: str, n: int, P: float, F: float, T: int
) -> None:
    extra = {"pilot_n": n, "train_batch_size": T} if trainer == "pilot-commit" else {"train_batch_size": T}
    settings = LoopSettings(trainer=trainer, n=n, retire=P, recheck=F, epochs=6, **extra)  # type: ignore[arg-type]
    late = retire.lag_of(settings)
    batch = settings.gen if trainer == "pilot-commit" else 0
    sims = np.array(
        [simulate_pools(data, n, P, F, late, 6, trainer == "open-instruct", s, batch) for s in range(150)]
    )
    modelled = _modelled(data, settings)["prompts_start"].to_numpy()
    for e in range(6):
        column = sims[:, e]
        se = max(column.std(ddof=1) / np.sqrt(column.size), 0.5 / np.sqrt(column.size))
        assert abs(column.mean() - modelled[e]) <= 4.5 * se, (e, column.mean(), modelled[e], se)


def test_the_epoch_the_pool_falls_below_a_batch_is_in_the_simulated_range(data: np.ndarray) -> None:
    # A batch of 1,000 prompts: the pool of 3,000 falls below it within a few epochs at P = 0.5, n = 4.
    settings = LoopSettings(trainer="verl", n=4, train_batch_size=1_000, retire=0.5, steps=None, epochs=None)
    hist = pl.DataFrame({"p": data}).group_by("p").len("prompts").sort("p")
    keep = preflight.keep_probabilities(hist, 4, PLUGIN, settings)
    _, below, _ = retire.epochs(keep, settings, lambda pool: 1.0)
    firsts = []
    for seed in range(100):
        sizes = simulate_pools(data, 4, 0.5, 0.0, 0, 12, False, seed, batch=1_000)
        firsts.append(int(np.flatnonzero(sizes < 1_000)[0]) + 1)
    assert below is not None
    assert min(firsts) <= below <= max(firsts)


def test_open_instructs_big_math_pool_after_one_and_five_epochs() -> None:
    # P = .875, n = 8, the OLMo-3 batch (64 prompts, async_steps 8: 512 retired an epoch late), plug-in.
    out = csv_of(
        invoke(
            "preflight", BIGMATH, "--samples", "64", "--estimator", "plugin", "--trainer", "open-instruct",
            "--n", "8", "--train-batch-size", "64", "--refill", "--retire", "0.875", "--epochs", "6",
            "--format", "csv",
        )
    )  # fmt: skip
    pools = out["prompts_start"].to_list()
    assert round(pools[1]) == 148_723  # after one epoch (148,564 with every exclusion on time)
    assert round(pools[5]) == 124_699  # after five


def test_recheck_brings_retired_prompts_back() -> None:
    rows = [
        csv_of(invoke("preflight", BIGMATH, "--samples", "64", "--n", "8", "--retire", "0.875", "--epochs", "3",
                      *extra, "--format", "csv"))["prompts_start"][2]
        for extra in ([], ["--recheck", "0.5"])
    ]  # fmt: skip
    assert rows[1] > rows[0]

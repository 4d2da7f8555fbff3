"""What each loop's logged metrics will read (sigmatool.preflight.logged): ``reward_dataset``,
``reward_trained`` and the ``log:<key>`` columns, against each trainer's metric computed on simulated steps.

Sources (file:lines@commit):

- verl's ``critic/score/mean``: ``recipe/dapo/dapo_ray_trainer.py`` l.411 @ 48ea0a7 (the trained batch's
  mean sequence score; math_dapo scores +1 / −1).
- NeMo-RL's ``reward``: ``nemo_rl/algorithms/grpo.py`` l.3095-3099 @ 7ea279a (the kept rows' mean); the
  leave-one-out std of a row is its n − 1 others' (``calculate_baseline_and_std_per_prompt``).
- open-instruct: ``open_instruct/data_loader.py`` @ e6c3044, l.972-976 (``filtered_prompts_pct``,
  ``percent_solved_mean``), l.1545-1548 (``scores``, ``real_batch_size_ratio``), l.452
  (``verification_reward`` = 10).
- prime-rl: ``src/prime_rl/orchestrator/orchestrator.py`` l.696-702 and ``metrics.py`` l.324-357 @ 559b447
  (``all``: every group since the last ship; ``effective``: the shipped cohort; ``is_admitted``).
- Pilot-Commit: ``recipe/pc/pc_ray_trainer.py`` @ 6def20e, l.80-81 and l.147-150 (``pass_rate``), l.659-665
  (the trained batch: the committed prompts' pilots and their commits).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sigmatool import preflight
from sigmatool.estimators import Valuation
from sigmatool.preflight import logged
from sigmatool.trainers.settings import LoopSettings
from tests.conftest import BIGMATH

PLUGIN = Valuation("plugin")
STEPS = 2_000


@pytest.fixture(scope="module")
def extreme() -> np.ndarray:
    """Big-Math's prompts with p < 0.2 or p > 0.9: filtering moves the logged reward most."""
    rates = pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy()
    return rates[(rates < 0.2) | (rates > 0.9)]


def _keep(rates: np.ndarray, settings: LoopSettings) -> preflight.Keep:
    hist = pl.DataFrame({"p": rates}).group_by("p").len("prompts").sort("p")
    return preflight.keep_probabilities(hist, settings.n, PLUGIN, settings)


def _within(simulated: np.ndarray, modelled: float, label: str) -> None:
    se = max(simulated.std(ddof=1) / np.sqrt(simulated.size), 3.0 / simulated.size)
    assert abs(simulated.mean() - modelled) <= 4.5 * se, (label, simulated.mean(), modelled, se)


def _groups(rng: np.random.Generator, rates: np.ndarray, count: int, n: int) -> np.ndarray:
    """``count`` groups' rewards (rows: groups), prompts drawn with replacement."""
    p = rates[rng.integers(rates.size, size=count)]
    return (rng.random((count, n)) < p[:, None]).astype(float)


def test_the_filter_drops_the_logged_reward_below_the_datas(extreme: np.ndarray) -> None:
    # n = 8: the data's mean reward 0.422; the kept groups' 0.362; NeMo-RL's leave-one-out rows 0.330.
    verl = _keep(extreme, LoopSettings(n=8))
    nemo = _keep(extreme, LoopSettings(trainer="nemo-rl", n=8, leave_one_out=True))
    assert round(logged.reward_dataset(verl), 3) == 0.422
    assert round(logged.reward_trained(verl, LoopSettings(n=8)), 3) == 0.362
    assert (
        round(logged.reward_trained(nemo, LoopSettings(trainer="nemo-rl", n=8, leave_one_out=True)), 3)
        == 0.330
    )


def test_verls_score_mean_is_the_kept_groups_on_simulated_steps(extreme: np.ndarray) -> None:
    rng = np.random.default_rng(1)
    settings = LoopSettings(n=8, train_batch_size=32)
    means = []
    for _ in range(STEPS):
        g = _groups(rng, extreme, 320, 8)  # ten batches of 32: the step fills in fewer, nearly always
        kept = g[g.std(axis=1) > 0]
        batch = kept[:32]  # batch[:traj_bsz]
        means.append((2 * batch - 1).mean())  # math_dapo: +1 right, −1 wrong
    out = logged.logged(_keep(extreme, settings), settings)["log:critic/score/mean"]
    _within(np.array(means), out, "critic/score/mean")


def test_nemo_rls_reward_is_the_kept_rows_on_simulated_steps(extreme: np.ndarray) -> None:
    rng = np.random.default_rng(2)
    n = 6
    settings = LoopSettings(trainer="nemo-rl", n=n, leave_one_out=True, train_batch_size=32)
    means = []
    for _ in range(STEPS):
        g = _groups(rng, extreme, 64, n)
        others = g.sum(axis=1, keepdims=True) - g  # a row's others: their std > 0 iff they disagree
        kept = (others > 0) & (others < n - 1)
        means.append(g[kept].mean() if kept.any() else np.nan)
    sims = np.array(means)
    out = logged.logged(_keep(extreme, settings), settings)["log:reward"]
    _within(sims[~np.isnan(sims)], out, "reward")


@pytest.mark.parametrize("active", [False, True])
def test_open_instructs_batch_metrics_on_simulated_steps(extreme: np.ndarray, active: bool) -> None:
    rng = np.random.default_rng(3)
    T, n = 8, 4
    settings = LoopSettings(trainer="open-instruct", train_batch_size=T, n=n, refill=active)
    found: dict[str, list[float]] = {k: [] for k in ("ratio", "pct", "solved", "scores")}
    for _ in range(STEPS):
        g = _groups(rng, extreme, 40 * T, n)  # the results in arrival order
        good = g.std(axis=1) > 0
        if active:  # read until T are kept: the filtered ones do not count
            end = int(np.flatnonzero(np.cumsum(good) == T)[0]) + 1
        else:  # T results an attempt; an attempt that keeps none is redone
            ends = [a for a in range(T, g.shape[0] + 1, T) if good[a - T : a].any()]
            end = ends[0]
        start = end - T if not active else 0
        batch, filtered = g[start:end][good[start:end]], int((~good[start:end]).sum())
        found["ratio"].append(batch.size / (n * T))
        found["pct"].append(filtered / (filtered + batch.shape[0]))
        found["solved"].append(batch.mean(axis=1).mean())
        found["scores"].append((10.0 * batch).mean())
    out = logged.logged(_keep(extreme, settings), settings)
    _within(np.array(found["ratio"]), out["log:real_batch_size_ratio"], "real_batch_size_ratio")
    _within(np.array(found["pct"]), out["log:batch/filtered_prompts_pct"], "filtered_prompts_pct")
    _within(np.array(found["solved"]), out["log:batch/percent_solved_mean"], "percent_solved_mean")
    _within(np.array(found["scores"]), out["log:scores"], "scores")


def test_prime_rls_all_and_effective_rewards_on_simulated_steps(extreme: np.ndarray) -> None:
    rng = np.random.default_rng(4)
    T, n = 8, 4
    settings = LoopSettings(trainer="prime-rl", train_batch_size=T, n=n, refill=True)
    every, shipped, admitted = [], [], []
    for _ in range(STEPS):
        g = _groups(rng, extreme, 40 * T, n)
        good = g.std(axis=1) > 0  # the advantage_range gate admits a group with a nonzero advantage
        end = int(np.flatnonzero(np.cumsum(good) == T)[0]) + 1
        every.append(g[:end].mean())
        shipped.append(g[:end][good[:end]].mean())
        admitted.append(T / end)
    out = logged.logged(_keep(extreme, settings), settings)
    _within(np.array(every), out["log:train/agg/all/<agent>/reward/mean"], "all")
    _within(np.array(shipped), out["log:train/agg/effective/<agent>/reward/mean"], "effective")
    _within(np.array(admitted), out["log:train/agg/all/<agent>/is_admitted/mean"], "is_admitted")


def test_pilot_commits_trained_reward_counts_pilots_and_commits(extreme: np.ndarray) -> None:
    rng = np.random.default_rng(5)
    n0, n1 = 8, 16
    settings = LoopSettings(trainer="pilot-commit", pilot_n=n0, n=n1, keep_lo=0.125, keep_hi=0.75)
    rewards, passes = [], []
    for _ in range(STEPS):
        p = extreme[rng.integers(extreme.size, size=64)]
        k = rng.binomial(n0, p)
        inside = (k / n0 >= 0.125) & (k / n0 <= 0.75)
        passes.append(inside.mean())
        if inside.any():
            commits = rng.binomial(n1, p[inside])
            rewards.append((k[inside].sum() + commits.sum()) / (inside.sum() * (n0 + n1)))
    keep = _keep(extreme, settings)
    _within(np.array(passes), logged.logged(keep, settings)["log:filtering_stats/pass_rate"], "pass_rate")
    _within(np.array(rewards), logged.reward_trained(keep, settings), "reward trained")


def test_prime_rls_all_and_effective_rewards_differ_by_the_pruned_groups(extreme: np.ndarray) -> None:
    # Without a gate every group since the last ship is in ``all`` (the data's 0.422); the shipped cohort
    # has lost the pruned zero-advantage groups (0.362), as the kept groups of the other loops.
    settings = LoopSettings(trainer="prime-rl", n=8, train_batch_size=16)
    out = logged.logged(_keep(extreme, settings), settings)
    assert round(out["log:train/agg/all/<agent>/reward/mean"], 3) == 0.422
    assert round(out["log:train/agg/effective/<agent>/reward/mean"], 3) == 0.362

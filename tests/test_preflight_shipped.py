"""The loops of shipped configs once refused: slime's ``check_reward_nonzero_std_with_fallback``, AReaL's
``dynamic_bs: true`` (its ``examples/math/gsm8k_dapo_dynamic_bs.yaml``), and ``-1`` for an endless cap.

- slime @ 624b824a898ab0ec1fcb4d373004c7f3852bf515: ``slime/rollout/sglang_rollout.py`` l.406-442 (rounds of
  ``over_sampling_batch_size`` submitted while ``remaining_batch_size`` < T; a dropped group lowers it),
  ``slime/rollout/filter_hub/base_types.py`` l.14-24 (a refused group is kept when
  ``keep_when_insufficient`` and ``remaining_batch_size <= target_data_size``),
  ``dynamic_sampling_filters.py`` l.18-23.
- AReaL @ 4aef98d8d818af55b43621aaadba047ae10f4e77: ``areal/infra/workflow_executor.py`` l.705-727 (with
  ``dynamic_bs`` a refused result counts an attempt; the batch stops at ``batch_size`` attempts and returns
  the accepted ones).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool.preflight import streams
from tests.conftest import BIGMATH, csv_of, invoke

CONFIGS = Path(__file__).parent / "configs"


def slime_fallback_sim(q: float, T: int, size: int, steps: int, seed: int) -> dict[str, np.ndarray]:
    """Per step: groups submitted, completed before the batch fills, and refused groups trained."""
    rng = np.random.default_rng(seed)
    out = {k: np.zeros(steps) for k in ("submitted", "completed", "silent")}
    for s in range(steps):
        remaining, data, silent = 0, 0, 0
        while data < T:
            while remaining < T:  # submit a round
                remaining += size
                out["submitted"][s] += size
            keep = rng.random() < q  # a group completes, in an order that does not depend on it
            out["completed"][s] += 1
            if not keep and remaining > T:  # should_drop_dynamic_filter_output
                remaining -= 1
                continue
            data += 1
            silent += not keep
        out["silent"][s] = silent
    return out


@pytest.mark.parametrize(("q", "T", "size"), [(0.5, 8, 12), (0.3, 8, 4), (0.8, 16, 16)])
def test_slimes_fallback_filter_is_the_simulated_rollout(q: float, T: int, size: int) -> None:
    sim = slime_fallback_sim(q, T, size, 2_000, seed=T + size)
    f = streams.fallback_step(q, T, size)
    for key, modelled in (("submitted", f["submitted"]), ("completed", f["completed"]),
                          ("silent", f["silent_trained"])):  # fmt: skip
        x = sim[key]
        se = max(x.std(ddof=1) / np.sqrt(x.size), 3.0 / x.size)
        assert abs(x.mean() - modelled) <= 4.5 * se, (key, x.mean(), modelled)


def test_areals_dynamic_bs_trains_the_accepted_of_its_attempts() -> None:
    rates = pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy()
    rng = np.random.default_rng(7)
    p = rates[rng.integers(rates.size, size=(3_000, 256))]
    k = rng.binomial(4, p)
    accepted = ((k > 0) & (k < 4)).sum(axis=1)  # the docs' DAPO filter: 0 < mean reward < 1
    row = csv_of(
        invoke("preflight", BIGMATH, "--samples", "64", "--estimator", "plugin", "--config",
               CONFIGS / "areal/examples/math/gsm8k_dapo_dynamic_bs.yaml", "--filter", "--format", "csv")
    ).row(0, named=True)  # fmt: skip
    se = accepted.std(ddof=1) / np.sqrt(accepted.size)
    assert abs(4 * accepted.mean() - row["rollouts_trained"]) <= 4.5 * 4 * se
    assert row["prompts_per_step"] == 256


def test_a_slime_script_with_the_fallback_filter_is_read(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text(
        "ROLLOUT_ARGS=(\n  --rollout-batch-size 32 --n-samples-per-prompt 8 --over-sampling-batch-size 48\n"
        "  --num-rollout 100\n  --dynamic-sampling-filter-path "
        "slime.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std_with_fallback\n)\n"
    )
    row = csv_of(invoke("preflight", BIGMATH, "--samples", "64", "--config", path, "--format", "csv")).row(
        0, named=True
    )
    assert row["prompts_per_step"] == 48  # one round: a short batch keeps refused groups instead
    assert row["rollouts_silent_trained"] > 0


def test_minus_one_is_an_endless_cap_as_the_trainers_write_it() -> None:
    endless = csv_of(
        invoke("preflight", BIGMATH, "--samples", "64", "--max-gen-batches", "-1", "--format", "csv")
    )
    zero = csv_of(
        invoke("preflight", BIGMATH, "--samples", "64", "--max-gen-batches", "0", "--format", "csv")
    )
    assert endless.equals(zero)

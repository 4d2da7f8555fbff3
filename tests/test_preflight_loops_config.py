"""Each new trainer's config in its own form, read as the trainer reads it: the shipped files of
tests/configs (tests/configs/README.md names each repository and commit).

- open-instruct's launch script: ``grpo_fast.py`` arguments; steps = ``total_episodes`` // (T n)
  (``open_instruct/grpo_fast.py`` l.1032-1034 @ e6c3044); absent keys at ``StreamingDataLoaderConfig``'s
  defaults (``open_instruct/data_loader.py`` l.409-452).
- OpenRLHF's launch script: ``train_ppo_ray`` arguments (``openrlhf/cli/train_ppo_ray.py`` l.372-414,
  562-565 @ 3c3be62); ``data.max_samples`` keeps the dataset's first rows (``openrlhf/trainer/ppo_trainer.py``
  l.31-40).
- prime-rl's ``rl.toml`` (``packages/prime-rl-configs/.../orchestrator.py`` l.505-529, 620-630 @ 559b447).
- Pilot-Commit's ``pc_trainer.yaml`` with ``key=value`` and its 4B recipe's launch script
  (``recipe/pc/pc_ray_trainer.py`` l.313-315, 378-392 @ 6def20e: ``1 − diversity_threshold_upper``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sigmatool.trainers.loops import loop_settings
from sigmatool.trainers.settings import LoopSettings
from tests.conftest import BIGMATH, csv_of, invoke, one_error_line

CONFIGS = Path(__file__).parent / "configs"


def _settings(path: str, *overrides: str) -> LoopSettings:
    return loop_settings(list(overrides), str(CONFIGS / path), {"risk": 0.01, "silent_over": 0.5})[0]


def test_the_olmo3_32b_script_runs_19531_steps() -> None:
    # 64 prompts × 8 rollouts, active sampling, 10^7 episodes: 10,000,000 // 512 steps.
    st = _settings("open-instruct/scripts/train/olmo3/32b_think_rl.sh")
    assert st.trainer == "open-instruct"
    assert (st.train_batch_size, st.n, st.refill, st.filter) == (64, 8, True, True)
    assert st.steps == 19_531


def test_openrlhfs_dapo_script_reads_20000_prompts() -> None:
    row = csv_of(
        invoke("preflight", BIGMATH, "--samples", "64", "--config",
               CONFIGS / "openrlhf/examples/scripts/train_dapo_ray_hybrid_engine.sh", "--format", "csv")
    ).row(0, named=True)  # fmt: skip
    assert row["prompts"] == 20_000
    assert (row["train_batch_size"], row["n"], row["filter"]) == (128, 8, True)


def test_openrlhfs_range_is_read_as_its_two_numbers() -> None:
    st = _settings("openrlhf/examples/scripts/train_dapo_ray_hybrid_engine.sh")
    assert st.band == (0.0, 1.0)
    assert st.max_samples == 20_000


def test_pilot_commits_4b_recipe_reads_gen_384_pilot_16_commit_48() -> None:
    st = _settings("pilot-commit/train_scripts/pc_qwen3-4b_p16c48.sh")
    assert st.trainer == "pilot-commit"
    assert (st.gen, st.pilot_n, st.n) == (384, 16, 48)
    assert (st.keep_lo, st.keep_hi, st.retire) == (0.125, 0.75, 1.0)
    assert (st.steps, st.epochs, st.max_gen_batches, st.evict) == (500, 100, 10, 4)


def test_pilot_commits_yaml_with_key_value_takes_its_own_defaults() -> None:
    st = _settings("pilot-commit/recipe/pc/config/pc_trainer.yaml", "data.train_batch_size=64")
    assert (st.train_batch_size, st.gen, st.pilot_n) == (64, 64, 8)  # gen: ${data.train_batch_size}
    assert (st.keep_lo, st.keep_hi, st.retire) == (0.25, 0.75, None)


def test_prime_rls_toml_gives_groups_of_its_batch_and_its_gate() -> None:
    st = _settings("prime-rl/examples/basic/wiki-search/rl.toml")
    assert st.trainer == "prime-rl"
    assert (st.train_batch_size, st.n, st.refill, st.steps) == (512 // 16, 16, True, 200)


def test_a_prime_rl_toml_without_max_steps_asks_for_steps(tmp_path: Path) -> None:
    text = (CONFIGS / "prime-rl/examples/basic/wiki-search/rl.toml").read_text()
    path = tmp_path / "rl.toml"
    path.write_text(text.replace("max_steps = 200", ""))
    result = invoke("preflight", BIGMATH, "--samples", "64", "--config", path)
    assert result.exit_code == 2
    assert "--steps" in one_error_line(result.stderr)


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("open-instruct/scripts/train/olmo3/32b_think_rl.sh", "no_resampling_pass_rate=0.875"),
        ("pilot-commit/recipe/pc/config/pc_trainer.yaml", "algorithm.exclude_threshold_upper=0.875"),
    ],
)
def test_the_trainers_own_retirement_keys_give_retire(path: str, key: str) -> None:
    extra = ("data.train_batch_size=64",) if path.endswith(".yaml") else ()
    assert _settings(path, key, *extra).retire == 0.875


def _plugin_row(path: str) -> dict[str, object]:
    return csv_of(
        invoke("preflight", BIGMATH, "--samples", "64", "--estimator", "plugin", "--config", CONFIGS / path,
               "--format", "csv")
    ).row(0, named=True)  # fmt: skip


def test_the_olmo3_32b_script_generates_17_9_million_rollouts_on_big_math() -> None:
    row = _plugin_row("open-instruct/scripts/train/olmo3/32b_think_rl.sh")
    total = float(row["rollouts_generated"]) * float(row["expected_steps"])  # type: ignore[arg-type]
    assert round(total / 1e6, 1) == 17.9


def test_openrlhfs_dapo_pass_rate_reads_447_on_big_math() -> None:
    # 100 n T / (T + R) at n = 8, T = 128: a ratio of rollouts to prompts, not a percentage.
    row = _plugin_row("openrlhf/examples/scripts/train_dapo_ray_hybrid_engine.sh")
    assert round(float(row["log:dynamic_filtering_pass_rate"])) == 447  # type: ignore[arg-type]

"""``preflight --config`` and ``key=value``: a trainer's config read as the trainer reads it.

verl's defaults are those of verl-project/verl @ 1dda039b: ``verl/trainer/config/ppo_trainer.yaml`` (its
``filter_groups`` block, l. 80-95: enable False, max_num_gen_batches 0; ``total_epochs: 30`` l. 140,
``total_training_steps: null`` l. 143), ``data/legacy_data.yaml`` (``train_batch_size: 1024`` l. 42,
``gen_batch_size: null`` l. 45) and ``rollout/rollout.yaml`` (``n: 1`` l. 127). The run ends at the first
of its epochs and ``total_training_steps`` (``ray_trainer.py`` l. 435-438; the DAPO fit's
``is_last_step``, verl-recipe @ 48ea0a79 ``dapo/dapo_ray_trainer.py`` l. 160, 426-434).
"""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest

from sigmatool.options.preflight import defaults_list, from_config, read_config_sources
from tests.conftest import BIGMATH, invoke, one_error_line

# verl-recipe @ 48ea0a79, dapo/test_dapo_7b_math.sh: `python3 -m verl.trainer.main_ppo` (l. 60) with
# train_prompt_bsz=512 (l. 25), n_resp_per_prompt=16 (l. 26), total_epochs=10 (l. 127),
# total_training_steps=200 (l. 128), and no algorithm.filter_groups.* at all.
TEST_DAPO_7B_MATH = (
    "data.train_batch_size=512",
    "actor_rollout_ref.rollout.n=16",
    "trainer.total_epochs=10",
    "trainer.total_training_steps=200",
)


def _row(*args: object) -> dict[str, object]:
    result = invoke("preflight", BIGMATH, *args, "--format", "csv")
    assert result.exit_code == 0, result.stderr
    return pl.read_csv(io.StringIO(result.stdout)).row(0, named=True)


def test_the_7b_math_script_is_a_loop_with_no_filter() -> None:
    row = _row(*TEST_DAPO_7B_MATH)
    assert (False, 0, 512, 16) == (row["filter"], row["max_gen_batches"], row["train_batch_size"], row["n"])


def test_a_key_the_config_leaves_out_takes_verls_default_and_says_so() -> None:
    result = invoke("preflight", BIGMATH, "data.train_batch_size=256", "--format", "csv")
    row = pl.read_csv(io.StringIO(result.stdout)).row(0, named=True)
    assert (1, 30, None) == (row["n"], row["epochs"], row["steps"])
    assert "actor_rollout_ref.rollout.n=1 (verl default)" in result.stderr
    assert "data.train_batch_size=256 (command line)" in result.stderr


def test_verl_stops_at_the_first_of_its_epochs_and_its_steps(tmp_path: Path) -> None:
    # 17,500 prompts at 1,280 a step: one epoch is ⌊17,500 / 1,280⌋ = 13 batches, before 100 steps.
    pl.read_parquet(BIGMATH).sample(17_500, seed=1).write_parquet(tmp_path / "dapo17k.parquet")
    args = ("data.train_batch_size=1280", "trainer.total_epochs=1", "trainer.total_training_steps=100")
    result = invoke("preflight", tmp_path / "dapo17k.parquet", *args, "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert 13 == pl.read_csv(io.StringIO(result.stdout))["expected_steps"][0]


def test_a_step_count_of_zero_or_less_runs_one_step() -> None:
    settings, read = from_config({"trainer.total_training_steps": 0}, None, "x")
    assert (1, 30) == (settings.steps, settings.epochs)
    assert "trainer.total_training_steps=0 (x)" in read


def test_the_run_takes_fewer_optimizer_steps_than_its_batches_with_the_filter() -> None:
    args = ("algorithm.filter_groups.enable=True", "data.gen_batch_size=512", "trainer.total_epochs=1")
    row = _row(*args, "data.train_batch_size=512", "actor_rollout_ref.rollout.n=16")
    batches = 215_608 // 512
    assert row["expected_run_gen_batches"] == pytest.approx(batches, abs=1)  # the epoch's batches, all drawn
    assert row["expected_steps"] < batches / 1.3  # each step needs about 1/keep-rate batches


def test_a_hydra_defaults_list_reads_the_files_beside_it(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mine.yaml").write_text("train_batch_size: 64\ngen_batch_size: 128\n")
    (tmp_path / "loop.yaml").write_text("algorithm:\n  filter_groups:\n    enable: True\n")
    (tmp_path / "run.yaml").write_text(
        "defaults:\n  - ppo_trainer\n  - data@data: mine\n  - loop\n  - _self_\n"
        "actor_rollout_ref:\n  rollout:\n    n: 8\n"
    )
    values, sources, notes = read_config_sources(str(tmp_path / "run.yaml"))
    settings, _ = from_config(values, None, "run.yaml", sources)
    assert (64, 128, 8, True) == (settings.train_batch_size, settings.gen, settings.n, settings.filter)
    assert sources["data.train_batch_size"] == str(tmp_path / "data" / "mine.yaml")
    assert [] == notes


def test_the_file_s_own_keys_win_where_self_stands(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("data:\n  train_batch_size: 64\n")
    (tmp_path / "first.yaml").write_text("defaults:\n  - _self_\n  - base\ndata:\n  train_batch_size: 32\n")
    (tmp_path / "last.yaml").write_text("defaults:\n  - base\ndata:\n  train_batch_size: 32\n")
    first = read_config_sources(str(tmp_path / "first.yaml"))[0]
    last = read_config_sources(str(tmp_path / "last.yaml"))[0]
    assert (64, 32) == (first["data.train_batch_size"], last["data.train_batch_size"])


def test_a_defaults_entry_found_nowhere_is_noted(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("defaults:\n  - my_base\ndata:\n  train_batch_size: 32\n")
    result = invoke("preflight", BIGMATH, "--config", tmp_path / "run.yaml", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert "defaults entry 'my_base' is not beside the file" in result.stderr


def test_the_defaults_list_reads_hydras_forms() -> None:
    text = "defaults:\n  - override rollout@actor_rollout_ref.rollout: vllm\n  - x\nother: 1\n"
    assert [("rollout", "vllm", "actor_rollout_ref.rollout"), ("", "x", "")] == defaults_list(text)


def test_a_trl_config_s_absent_keys_take_trls_defaults(tmp_path: Path) -> None:
    (tmp_path / "grpo.json").write_text('{"per_device_train_batch_size": 64}')
    values, sources, _ = read_config_sources(str(tmp_path / "grpo.json"))
    settings, read = from_config(values, None, "grpo.json", sources)
    assert (8, 8, 3, None, False) == (
        settings.n,
        settings.train_batch_size,
        settings.epochs,
        settings.steps,
        settings.filter,
    )
    assert "num_generations=8 (TRL default)" in read


def test_flags_alone_keep_sigmatools_defaults() -> None:
    row = _row("--epochs", "2")
    assert (512, 16, None, 2) == (row["train_batch_size"], row["n"], row["steps"], row["epochs"])


def test_a_run_with_no_length_is_refused() -> None:
    # verl's own loop would fail on range(None); sigmatool says so before reading anything heavy.
    done = invoke("preflight", BIGMATH, "trainer.total_epochs=null", "--format", "csv")
    assert done.exit_code == 2
    assert "the run needs a length" in one_error_line(done.stderr)


# SkyRL (NovaSky-AI/SkyRL @ a9564572): skyrl/train/config/config.py l.716-723 (dynamic_sampling: type None,
# max_sample_batches 30), l.1225 (n_samples_per_prompt 5), l.1382-1390 (epochs 1, max_training_steps None,
# train_batch_size 1024); the filter's generation batch is one dataloader batch of train_batch_size
# (trainer.py l.324-331).
SKYRL = """trainer:
  train_batch_size: 64
  epochs: 2
  algorithm:
    dynamic_sampling:
      type: filter
      max_sample_batches: 2
generator:
  n_samples_per_prompt: 8
"""


def test_a_skyrl_config_is_the_filtered_loop_with_its_train_batch_as_gen_batch(tmp_path: Path) -> None:
    path = tmp_path / "skyrl.yaml"
    path.write_text(SKYRL)
    result = invoke("preflight", BIGMATH, "--config", path, "--format", "csv")
    assert result.exit_code == 0, result.stderr
    flags = ("--train-batch-size", "64", "--gen-batch-size", "64", "--n", "8", "--max-gen-batches", "2")
    flagged = invoke("preflight", BIGMATH, *flags, "--epochs", "2", "--format", "csv").stdout
    row = pl.read_csv(io.StringIO(result.stdout)).row(0, named=True)
    verls = pl.read_csv(io.StringIO(flagged)).row(0, named=True)
    # SkyRL has no generation batch of its own to advise on; every other figure is verl's loop's.
    advice = ("min_safe_gen_batch_size", "min_safe_gen_batch_size_rollouts")
    assert (None, None) == tuple(row[c] for c in advice)
    assert {k: v for k, v in row.items() if k not in advice} == {
        k: v for k, v in verls.items() if k not in advice
    }
    assert "trainer.max_training_steps=null (SkyRL default)" in result.stderr
    table = invoke("preflight", BIGMATH, "--config", path, "--format", "table").stdout
    assert f"{row['min_safe_max_gen_batches']} is the smallest max_sample_batches" in " ".join(table.split())


def test_a_skyrl_config_s_absent_keys_take_skyrls_defaults(tmp_path: Path) -> None:
    path = tmp_path / "skyrl.yaml"
    path.write_text("generator:\n  n_samples_per_prompt: 4\n")
    row = _row("--config", path)
    # No dynamic sampling by default: the plain loop, 1,024 prompts a step, one epoch.
    assert (False, 1024, 1024, 1, None) == (
        row["filter"],
        row["train_batch_size"],
        row["gen_batch_size"],
        row["epochs"],
        row["steps"],
    )
    endless = _row(
        "--config",
        path,
        "trainer.algorithm.dynamic_sampling.type=filter",
        "trainer.algorithm.dynamic_sampling.max_sample_batches=-1",
        "trainer.max_training_steps=0",
    )
    assert (True, 0, None) == (endless["filter"], endless["max_gen_batches"], endless["steps"])


def test_skyrls_replace_strategy_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "skyrl.yaml"
    path.write_text(SKYRL.replace("type: filter", "type: replace"))
    result = invoke("preflight", BIGMATH, "--config", path)
    assert result.exit_code == 2
    assert "dynamic_sampling.type=replace (POLARIS)" in one_error_line(result.stderr)

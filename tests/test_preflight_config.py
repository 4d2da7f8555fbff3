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
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from sigmatool.trainers.loops import from_config, loop_settings
from sigmatool.trainers.settings import LoopSettings, defaults_list, read_config_sources
from tests.conftest import BIGMATH, csv_of, invoke, one_error_line

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
    # SkyRL has no generation batch of its own to advise on; every other figure is verl's loop's (the
    # logged metrics named as each trainer logs them).
    advice = ("min_safe_gen_batch_size", "min_safe_gen_batch_size_rollouts")
    assert (None, None) == tuple(row[c] for c in advice)
    assert {k: v for k, v in row.items() if k not in advice and not k.startswith("log:")} == {
        k: v for k, v in verls.items() if k not in advice and not k.startswith("log:")
    }
    assert row["log:reward/avg_raw_reward"] == pytest.approx((verls["log:critic/score/mean"] + 1) / 2)
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


def test_skyrls_replace_strategy_is_its_own_loop(tmp_path: Path) -> None:
    path = tmp_path / "skyrl.yaml"
    path.write_text(SKYRL.replace("type: filter", "type: replace"))
    row = _row("--config", path)
    # Its figures (tests/test_preflight_trainers.py checks them against SkyRL's own control flow).
    assert 0 < row["p_batch_fails"] < 1
    assert 0 < row["copied_share"] < 1
    ratio = _row("--config", path, "trainer.algorithm.dynamic_sampling.min_replace_ratio=0.6")
    assert ratio["p_batch_fails"] > row["p_batch_fails"]  # the ratio asks more of a batch
    wrong = invoke("preflight", BIGMATH, "--config", path, "trainer.algorithm.dynamic_sampling.type=swap")
    assert wrong.exit_code == 2
    assert "must be filter, replace or null" in one_error_line(wrong.stderr)


# NeMo-RL (NVIDIA-NeMo/RL @ 7ea279ab): examples/configs/grpo_math_1B.yaml (its grpo block, l.3-29), and
# examples/configs/recipes/llm/dapo-qwen2.5-7b.v2.yaml (l.1-10: ``defaults: ../../grpo_math_1B.yaml``,
# num_prompts_per_step 512, batch_multiplier 3, max_num_steps 10000, use_leave_one_out_baseline false,
# use_dynamic_sampling true); the GRPOConfig defaults at nemo_rl/algorithms/grpo.py l.241-289.
GRPO_MATH_1B = """grpo:
  num_prompts_per_step: 32
  num_generations_per_prompt: 16
  max_rollout_turns: 1
  max_num_epochs: 1
  max_num_steps: 1000000
  normalize_rewards: true
  use_leave_one_out_baseline: true
  use_dynamic_sampling: false
  dynamic_sampling_max_gen_batches: 10
  batch_multiplier: 1
"""
DAPO_QWEN = """defaults: ../../grpo_math_1B.yaml
grpo:
  num_prompts_per_step: 512
  batch_multiplier: 3 # Multiplier for dataloader batch size calculation
  max_num_steps: 10000
  use_leave_one_out_baseline: false
  use_dynamic_sampling: true
policy:
  make_sequence_length_divisible_by: ${mul:${policy.automodel_cfg.tensor_parallel_size},
    ${mul:2, ${policy.automodel_cfg.context_parallel_size}}}
"""


def _nemo_recipe(tmp_path: Path, parent: bool = True) -> Path:
    recipe = tmp_path / "recipes" / "llm" / "dapo-qwen2.5-7b.v2.yaml"
    recipe.parent.mkdir(parents=True)
    recipe.write_text(DAPO_QWEN)
    if parent:
        (tmp_path / "grpo_math_1B.yaml").write_text(GRPO_MATH_1B)
    return recipe


def test_a_nemo_rl_dapo_recipe_is_read_with_the_file_it_extends(tmp_path: Path) -> None:
    result = invoke("preflight", BIGMATH, "--config", _nemo_recipe(tmp_path), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    row = pl.read_csv(io.StringIO(result.stdout)).row(0, named=True)
    # int(512 × 3) prompts a batch, 16 rollouts from the parent, the first of 1 epoch and 10,000 steps.
    assert (512, 1536, 16, 10, True, 10000, 1) == tuple(
        row[c]
        for c in ("train_batch_size", "gen_batch_size", "n", "max_gen_batches", "filter", "steps", "epochs")
    )
    assert row["p_batches_11"] is not None  # its cap of 10 lets 11 batches run
    said = " ".join(result.stderr.split())
    assert "grpo.num_generations_per_prompt=16 (" in said
    assert "grpo_math_1B.yaml)" in said
    assert "grpo.use_leave_one_out_baseline=False (" in said


def test_a_nemo_rl_recipe_without_its_parent_takes_nemo_rls_defaults(tmp_path: Path) -> None:
    result = invoke("preflight", BIGMATH, "--config", _nemo_recipe(tmp_path, parent=False), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "grpo_math_1B.yaml, is not there; its keys take NeMo-RL's defaults" in said
    assert "grpo.num_generations_per_prompt=16 (NeMo-RL default)" in said
    assert "grpo.max_num_epochs=1 (NeMo-RL default)" in said


def test_nemo_rls_multiplier_needs_dynamic_sampling(tmp_path: Path) -> None:
    done = invoke("preflight", BIGMATH, "--config", _nemo_recipe(tmp_path), "grpo.use_dynamic_sampling=false")
    assert done.exit_code == 2
    assert "NeMo-RL asserts batch_multiplier == 1" in one_error_line(done.stderr)
    plain = _row("grpo.num_prompts_per_step=64")  # NeMo-RL's defaults: no dynamic sampling
    assert (False, 64, 64, 16) == (
        plain["filter"],
        plain["train_batch_size"],
        plain["gen_batch_size"],
        plain["n"],
    )


# slime (THUDM/slime @ 624b824a): slime/utils/arguments.py l.429-455 (--over-sampling-batch-size None: the
# rollout batch; --dynamic-sampling-filter-path None), l.608-624 (--num-rollout, --num-epoch), l.690-701
# (--rollout-batch-size required, --n-samples-per-prompt 1); a launch script as its examples write them.
SLIME_FILTER = "slime.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std"
SLIME_SCRIPT = """#!/bin/bash
ROLLOUT_ARGS=(
   --prompt-data /root/dapo-math-17k/dapo-math-17k.jsonl
   --rollout-shuffle
   --num-rollout 300
   --rollout-batch-size 32
   --n-samples-per-prompt 8
   --over-sampling-batch-size 64
   --dynamic-sampling-filter-path slime.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std
)
python3 train.py ${ROLLOUT_ARGS[@]}
"""


def test_a_slime_launch_script_is_read_as_its_arguments(tmp_path: Path) -> None:
    path = tmp_path / "run-qwen3-4B.sh"
    path.write_text(SLIME_SCRIPT)
    row = _row("--config", path)
    assert (32, 64, 8, True, 300) == tuple(
        row[c] for c in ("train_batch_size", "gen_batch_size", "n", "filter", "steps")
    )
    assert row["p_crash_run"] is None  # no cap, no crash
    assert row["prompts_per_step"] > 32 / row["keep_rate"]  # whole rounds of 64
    resumed = _row("--config", path, "partial-rollout=true")  # what was in flight resumes the next step
    assert resumed["prompts_per_step"] == pytest.approx(32 / row["keep_rate"])
    fallback = "dynamic-sampling-filter-path=" + SLIME_FILTER + "_with_fallback"
    kept_short = _row("--config", path, fallback)  # one round of 64: a short batch keeps refused groups
    assert kept_short["prompts_per_step"] == 64
    other = invoke("preflight", BIGMATH, "--config", path, "dynamic-sampling-filter-path=my.own_filter")
    assert other.exit_code == 2
    assert "a filter of another rule" in one_error_line(other.stderr)
    small = invoke("preflight", BIGMATH, "--config", path, "over-sampling-batch-size=16")
    assert small.exit_code == 2
    assert "over-sampling-batch-size (16) must be ≥ rollout-batch-size (32)" in one_error_line(small.stderr)


def test_slimes_filter_at_one_rollout_never_fills_and_says_so_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text(SLIME_SCRIPT)
    done = invoke("preflight", BIGMATH, "--config", path, "n-samples-per-prompt=1")
    assert done.exit_code == 1
    assert "slime's loop never fills a step" in one_error_line(done.stderr)
    areal = invoke("preflight", BIGMATH, "--trainer", "areal", "--n", "1")
    assert areal.exit_code == 1
    assert "AReaL's loop never fills a step" in one_error_line(areal.stderr)


# AReaL (inclusionAI/AReaL @ 4aef98d8): areal/api/cli_args.py l.166-168 (gconfig.n_samples 1), l.2589-2591
# (train_dataset.batch_size 1), l.2705-2713 (total_train_epochs 1, total_train_steps None), l.2867-2874
# (dynamic_bs False); its filter is ``dynamic_filter_fn`` in code (rl_trainer.py l.514-579).
AREAL = """gconfig:
  n_samples: 4
train_dataset:
  batch_size: 256
  shuffle: true
total_train_epochs: 2
"""


def test_an_areal_config_counts_its_steps_in_dataloader_batches(tmp_path: Path) -> None:
    path = tmp_path / "gsm8k_grpo.yaml"
    path.write_text(AREAL)
    plain = _row("--config", path)
    assert (False, 256, 4) == (plain["filter"], plain["train_batch_size"], plain["n"])  # no filter in config
    row = _row("--config", path, "--filter")
    prompts = pl.read_parquet(BIGMATH).height
    assert row["expected_steps"] == 2 * (prompts // 256)  # max_steps = epochs × len(dataloader)
    assert row["data_passes"] == pytest.approx(row["expected_steps"] * 256 / row["keep_rate"] / prompts)
    dynamic = _row("--config", path, "--filter", "dynamic_bs=true")  # 256 attempts, the accepted trained
    assert dynamic["rollouts_trained"] == pytest.approx(4 * 256 * dynamic["keep_rate"])


def test_trainer_names_whose_keys_it_reads(tmp_path: Path) -> None:
    done = invoke("preflight", BIGMATH, "--trainer", "nemo-rl", "data.train_batch_size=256")
    assert done.exit_code == 2
    assert "--trainer nemo-rl, but the settings given are verl's" in one_error_line(done.stderr)
    trl = tmp_path / "grpo.json"
    trl.write_text('{"num_generations": 8, "per_device_train_batch_size": 64}')
    wrong = invoke("preflight", BIGMATH, "--trainer", "verl", "--config", trl)
    assert wrong.exit_code == 2
    assert "the settings given are TRL's (num_generations" in one_error_line(wrong.stderr)
    both = invoke("preflight", BIGMATH, "--trainer", "skyrl", "--gen-batch-size", "64")
    assert both.exit_code == 2
    assert "--gen-batch-size does not apply" in one_error_line(both.stderr)


def test_each_trainer_moves_the_loop() -> None:
    flags = ("--n", "8", "--train-batch-size", "128", "--max-gen-batches", "1", "--steps", "50")
    verl, nemo = _row(*flags), _row(*flags, "--trainer", "nemo-rl")
    # NeMo-RL lets one more batch run: a second batch where verl's step would raise.
    assert "p_batches_2" not in verl
    assert nemo["p_batches_2"] > 0
    assert nemo["p_crash_step"] < verl["p_crash_step"]
    whole = _row(*flags, "--trainer", "nemo-rl", "grpo.use_leave_one_out_baseline=false")
    assert whole["p_crash_step"] < nemo["p_crash_step"]  # leave-one-out rows are the harder to fill
    slime, areal = _row(*flags, "--trainer", "slime"), _row(*flags, "--trainer", "areal")
    assert slime["p_crash_run"] is None
    assert areal["p_crash_run"] is None
    assert slime["rollouts_aborted"] >= 0  # rounds of the batch's size: what is in flight at the end
    assert areal["rollouts_aborted"] is None  # AReaL aborts nothing
    assert areal["prompts_per_step"] == pytest.approx(128 / areal["keep_rate"])


def test_nemo_rls_advice_is_a_multiplier_that_gives_the_safe_batch() -> None:
    args = ("--trainer", "nemo-rl", "--train-batch-size", "128", "--n", "4", "--max-gen-batches", "1")
    table = " ".join(invoke("preflight", BIGMATH, *args, "--format", "table").stdout.split())
    safe = _row(*args)["min_safe_gen_batch_size"]
    said = re.search(r"([\d,]+) prompts a batch \(batch_multiplier ≥ ([\d.]+)\)", table)
    assert said is not None, table
    multiplier = float(said[2])
    assert int(said[1].replace(",", "")) == safe
    assert int(128 * multiplier) == safe  # as NeMo-RL computes its batch: int(P × batch_multiplier)
    assert (
        _row(*args, "grpo.use_dynamic_sampling=true", f"grpo.batch_multiplier={multiplier}")["gen_batch_size"]
        == safe
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--max-gen-batches", "0"),  # verl's endless loop
        ("trainer.train_batch_size=2", "trainer.algorithm.dynamic_sampling.type=replace",
         "trainer.algorithm.dynamic_sampling.max_sample_batches=-1"),  # SkyRL's endless replace
        ("--trainer", "areal"),
    ],
    ids=["verl-endless", "skyrl-replace-endless", "areal"],
)  # fmt: skip
def test_a_loop_with_no_cap_on_answers_that_all_agree_never_fills(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    path = tmp_path / "graded_wrong.csv"  # a grader that failed: every prompt never (or always) right
    path.write_text("pass_rate\n0\n0\n1\n0\n")
    done = invoke("preflight", path, "--n", "4", "--train-batch-size", "2", *args)
    assert done.exit_code == 1
    assert "loop never fills a step" in one_error_line(done.stderr)
    capped = invoke("preflight", path, "--n", "4", "--train-batch-size", "2", "--format", "csv")
    assert csv_of(capped)["p_crash_step"][0] == 1.0  # with a cap, verl's loop crashes at its first step


# Each class of bad input the trainers' configs bring, through a real process: one line, its exit code.
@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--trainer", "nemo-rl", "data.train_batch_size=256"), 2, "the settings given are verl's"),
        (("rollout-batch-size=32", "num-rollout=5", "dynamic-sampling-filter-path=my.filter"), 2,
         "a filter of another rule"),
        (("rollout-batch-size=32", "num-rollout=5", "n-samples-per-prompt=1", "--filter"), 1,
         "slime's loop never fills a step"),
        (("grpo.batch_multiplier=2",), 2, "NeMo-RL asserts batch_multiplier == 1"),
        (("grpo.num_prompts_per_step=lots",), 2, "must be a whole number, not 'lots'"),
    ],
    ids=["trainer-mismatch", "slime-other-filter", "never-fills", "nemo-assert", "not-a-number"],
)  # fmt: skip
def test_a_bad_trainer_setting_is_one_line_in_a_real_process(
    args: tuple[str, ...], code: int, message: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sigmatool", "preflight", str(BIGMATH), *args],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    errors = [line for line in done.stderr.splitlines() if not line.startswith("note:")]
    assert code == done.returncode, done.stderr
    assert 1 == len(errors), done.stderr
    assert message in errors[0]
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------------------------- one command line


def test_a_key_value_argument_sets_the_loop_and_leaves_data() -> None:
    settings, data, _, _ = loop_settings(["rates.csv", "data.train_batch_size=64"], None, {})
    assert (64, ("rates.csv",)) == (settings.train_batch_size, data)


def test_a_file_named_like_an_override_stays_data(tmp_path: Path) -> None:
    (tmp_path / "n=3").write_text("p\n0.5\n")
    _, data, _, _ = loop_settings([str(tmp_path / "n=3")], None, {})
    assert (str(tmp_path / "n=3"),) == data


def test_a_flag_wins_over_the_key_it_names() -> None:
    settings, _, _, _ = loop_settings(["data.train_batch_size=64"], None, {"train_batch_size": 32})
    assert 32 == settings.train_batch_size


def test_steps_alone_count_the_run_in_steps_over_the_configs_epochs() -> None:
    settings, _, _, _ = loop_settings(["trainer.total_epochs=3"], None, {"steps": 20})
    assert (20, None) == (settings.steps, settings.epochs)


def test_nemo_rl_without_a_config_has_its_leave_one_out_baseline_and_says_so() -> None:
    settings, _, notes, _ = loop_settings([], None, {}, "nemo-rl")
    assert settings.leave_one_out
    assert any("leave-one-out baseline is on" in note for note in notes)


@pytest.mark.parametrize(
    ("trainer", "key"),
    [
        ("verl", "max_num_gen_batches"),
        ("nemo-rl", "dynamic_sampling_max_gen_batches"),
        ("skyrl", "max_sample_batches"),
    ],
)
def test_the_cap_is_named_as_its_trainer_names_it(trainer: str, key: str) -> None:
    assert key == LoopSettings(trainer=trainer).key("max_gen_batches")


def test_slimes_batch_is_named_as_its_code_reads_it() -> None:
    assert "rollout_batch_size" == LoopSettings(trainer="slime").key("train_batch_size")


def test_a_setting_the_trainer_has_no_key_for_is_refused() -> None:
    with pytest.raises(KeyError, match="AReaL has no key for max_gen_batches"):
        LoopSettings(trainer="areal").key("max_gen_batches")

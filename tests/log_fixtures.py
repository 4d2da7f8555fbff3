"""Rollout logs as eval harnesses and rollout collectors write them: verifiers' vf-eval, NeMo-Gym, open-instruct.

Each writer follows its writer's code, cited beside it (docs/trainers.md gives the commits read). A prompt is
(text, rewards): 1/0 per rollout (open-instruct: verification_reward 10 or 0).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Prompt:
    text: str
    rewards: tuple[int, ...]
    label: str = ""  # NeMo-Gym: the agent; open-instruct: the verifier source (dataset)


def write_verifiers(
    base: Path, env: str, model: str, run: str, prompts: Sequence[Prompt], *, era: str = "new", seed: int = 0
) -> Path:
    """One vf-eval run: ``{base}/evals/{env}--{model with / as --}/{run}/results.jsonl`` and ``metadata.json``
    (PrimeIntellect-ai/verifiers a60a606e, legacy/utils/path_utils.py get_eval_results_path,
    legacy/utils/save_utils.py state_to_output, save_outputs, GenerateOutputsBuilder.build_metadata): rows keyed
    by ``example_id``, each example's rollouts together, examples in the order they finished.

    ``era="id"``: vf-eval from 8c1b7fe7 (2025-08-23) to ed7cdf22 (2025-10-18), scripts/eval.py: the dataset
    repeated r times (rows cycle through the examples) and ``"id": i // r``, metadata with ``env``."""
    rng = random.Random(seed)
    folder = base / "evals" / f"{env}--{model.replace('/', '--')}" / run
    folder.mkdir(parents=True, exist_ok=True)
    r = len(prompts[0].rewards)
    rows = []
    if era == "id":
        for i in range(len(prompts) * r):
            e, j = i % len(prompts), i // len(prompts)
            rows.append(_vf_row("id", i // r, prompts[e], j))
    else:
        order = list(range(len(prompts)))
        rng.shuffle(order)
        rows = [
            _vf_row("example_id", e, prompts[e], j) for e in order for j in range(len(prompts[e].rewards))
        ]
    (folder / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    mean = sum(row["reward"] for row in rows) / len(rows)  # type: ignore[misc]
    meta = {
        "env_id" if era == "new" else "env": env,
        "model": model,
        "num_examples": len(prompts),
        "rollouts_per_example": r,
        "sampling_args": {"max_tokens": None},
        "time": 12.5,
        "avg_reward": mean,
        "avg_metrics": {"correct_answer": mean},
    }
    (folder / "metadata.json").write_text(json.dumps(meta))
    return folder / "results.jsonl"


def _vf_row(key: str, value: int, prompt: Prompt, j: int) -> dict[str, object]:
    reward = float(prompt.rewards[j])
    return {
        key: value,
        "prompt": [{"role": "user", "content": prompt.text}],
        "completion": [{"role": "assistant", "content": f"answer {j}"}],
        "answer": "42",
        "info": {"source": "fixture"},
        "reward": reward,
        "error": None,
        "timing": {"generation_ms": 10.0},
        "is_completed": True,
        "is_truncated": False,
        "stop_condition": "has_answer",
        "metrics": {"correct_answer": reward},
        "tool_defs": None,
        "correct_answer": reward,
    }


def write_nemo_gym(path: Path, prompts: Sequence[Prompt], *, seed: int = 0, profile: bool = False) -> Path:
    """NeMo-Gym rollout collection (NVIDIA-NeMo/Gym 07d6b0d0, nemo_gym/rollout_collection.py): ``X.jsonl``, one
    row per finished rollout in completion order, the agent's verify response (responses_create_params,
    response, reward) with ``_ng_task_index``, ``_ng_rollout_index`` and ``agent_ref`` stamped after; beside
    it ``X_materialized_inputs.jsonl``. With ``profile``, also the reward profiler's
    ``X_reward_profiling.jsonl`` (nemo_gym/reward_profile.py profile_from_data): one row per task with
    ``mean/reward``, ``num_rollouts`` and ``rollout_infos``."""
    rng = random.Random(seed)
    rows, inputs = [], []
    for t, prompt in enumerate(prompts):
        params = {"input": [{"role": "user", "content": prompt.text, "type": "message"}], "temperature": 1.0}
        agent = {"type": "responses_api_agents", "name": prompt.label or "simple_agent"}
        for j, reward in enumerate(prompt.rewards):
            inputs.append({"responses_create_params": params, "agent_ref": agent, "_ng_task_index": t,
                           "_ng_rollout_index": j})  # fmt: skip
            rows.append({"responses_create_params": params, "response": {"id": f"resp_{t}_{j}", "output": []},
                         "reward": float(reward), "_ng_task_index": t, "_ng_rollout_index": j,
                         "agent_ref": agent})  # fmt: skip
    done = rows[:]
    rng.shuffle(done)
    path.write_text("".join(json.dumps(row) + "\n" for row in done))
    stem = path.with_suffix("")
    Path(f"{stem}_materialized_inputs.jsonl").write_text("".join(json.dumps(row) + "\n" for row in inputs))
    if profile:
        lines = []
        for t, prompt in enumerate(prompts):
            infos = [{"rollout_id": f"{t}:{j}", "_ng_task_index": t, "_ng_rollout_index": j, "reward": float(r),
                      "input_tokens": 10} for j, r in enumerate(prompt.rewards)]  # fmt: skip
            mean = sum(prompt.rewards) / len(prompt.rewards)
            lines.append({"_ng_task_index": t, "mean/reward": mean, "sample": {}, "num_rollouts": len(infos),
                          "expected_num_rollouts": len(infos), "rollout_infos": infos})  # fmt: skip
        Path(f"{stem}_reward_profiling.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def write_open_instruct(
    folder: Path,
    run_name: str,
    steps: dict[int, Sequence[Prompt]],
    *,
    shard_rows: int = 10_000,
    seed: int = 0,
) -> list[Path]:
    """open-instruct ``--save_traces`` (allenai/open-instruct e6c3044a, open_instruct/rl_utils.py
    save_rollouts_to_disk, _save_rollouts, save_rollout_metadata): ``{run_name}_metadata.jsonl`` and
    ``{run_name}_rollouts_{shard:06d}.jsonl``, a whole step in the shard chosen before it is written
    (shard = rows written so far // 10,000), each row a RolloutRecord: step (from 0), prompt_idx (the group's
    place in the step), sample_idx, prompt_tokens, response_tokens, reward (verification_reward 10 × the
    verifier's 0/1), advantage, finish_reason, dataset and ground_truth (lists), request_info, logprobs."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{run_name}_metadata.jsonl").write_text(
        json.dumps(
            {"run_name": run_name, "git_commit": "unknown", "model_name": "m", "timestamp": "2026-01-23"}
        )
        + "\n"
    )
    written, paths = 0, []
    for step, prompts in sorted(steps.items()):
        shard = folder / f"{run_name}_rollouts_{written // shard_rows:06d}.jsonl"
        lines = []
        for p, prompt in enumerate(prompts):
            tokens = [100 + ord(c) for c in prompt.text]
            for j, reward in enumerate(prompt.rewards):
                i = p * len(prompt.rewards) + j
                lines.append({"step": step, "prompt_idx": p, "sample_idx": i, "prompt_tokens": tokens,
                              "response_tokens": [rng.randrange(50_000)], "reward": float(reward),
                              "advantage": 0.0, "finish_reason": "stop", "dataset": [prompt.label or "math"],
                              "ground_truth": ["42"], "request_info": {"num_calls": 0}, "logprobs": None})  # fmt: skip
        with shard.open("a") as handle:
            handle.write("".join(json.dumps(line) + "\n" for line in lines))
        written += len(lines)
        if shard not in paths:
            paths.append(shard)
    return paths


ENGINE_ROLLOUTS = ("--rollouts", "--prompt-col", "prompt_id", "--reward-col", "reward")


def engine_questions(*extra: str) -> dict[str, tuple[str, ...]]:
    """What the engines must answer as polars does on :func:`write_engine_log`'s log (``extra`` added to each):
    silent, silent --by source, budget, and track keyed by the prompt text (hashed after the engine)."""
    track = ("track", "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward", "--step-col", "step")
    return {
        "silent": ("silent", *ENGINE_ROLLOUTS, *extra),
        "silent-by-source": ("silent", *ENGINE_ROLLOUTS, "--by", "source", *extra),
        "budget": ("budget", *ENGINE_ROLLOUTS, *extra),
        "track": (*track, *extra),
    }


def write_engine_log(
    path: Path, *, steps: int = 12, per_step: int = 1_000, rollouts: int = 8, seed: int = 7
) -> Path:
    """A rollout log of steps × per_step × rollouts rows (96,000 by default) in one parquet file, as a
    trainer's logger or a warehouse export holds it: ``step``, ``source``, ``prompt`` (the text), ``prompt_id``,
    ``reward`` (0/1, about 1 % null). Each step draws its prompts from a pool of twice as many, so that
    prompts recur across steps and ``track`` has each prompt's other steps to compare with."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    pool = 2 * per_step
    difficulty = rng.beta(0.6, 0.9, pool)
    difficulty[: pool // 20] = 0.0
    frames = []
    for step in range(1, steps + 1):
        drawn = np.repeat(rng.choice(pool, size=per_step, replace=False), rollouts)
        right = rng.random(drawn.size) < np.clip(difficulty[drawn] + 0.01 * step, 0.0, 1.0)
        frames.append(
            pl.DataFrame(
                {
                    "step": np.full(drawn.size, step, dtype=np.int64),
                    "source": np.array(["gsm8k", "math", "olympiad"])[drawn % 3],
                    "prompt": [f"Problem {i}: find x." for i in drawn],
                    "prompt_id": drawn.astype(np.int64),
                    "reward": np.where(rng.random(drawn.size) < 0.01, np.nan, right.astype(np.float64)),
                }
            ).with_columns(pl.col("reward").fill_nan(None))
        )
    pl.concat(frames).write_parquet(path)
    return path

"""Dump files as each RL trainer writes them, from a table of sampled groups.

Every writer follows the trainer's own code (fields, types, order, nesting, file layout), cited beside it;
docs/trainers.md gives the commits read. A group is (step, prompt, rewards): ``True``/``False`` or 1/0 per
rollout, ``None`` for a reward the trainer left missing. Rewards a trainer cannot leave missing are written
as the trainer would never see them: those rollouts are left out, which counts the same.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

Reward = bool | None
ROLL_DOMAIN = "math_rule"


@dataclass(frozen=True)
class Group:
    """One sampled group: its step, its prompt text, one reward per rollout (None: missing)."""

    step: int
    prompt: str
    rewards: tuple[Reward, ...]
    system: str | None = None  # NeMo-RL: a system message before the prompt
    domain: str | None = None  # ROLL: the dataset's domain in a multi-domain run (default math_rule)


def by_step(groups: Iterable[Group]) -> dict[int, list[Group]]:
    out: dict[int, list[Group]] = defaultdict(list)
    for g in groups:
        out[g.step].append(g)
    return dict(sorted(out.items()))


def roll_id(prompt: str) -> str:
    """The dataset id a ROLL fixture gives a prompt."""
    return "q-" + hashlib.sha1(prompt.encode()).hexdigest()[:10]


def prompt_key(trainer: str, group: Group) -> str:
    """The text each reader hashes as the prompt key of ``group``."""
    if trainer == "roll":
        return f"{group.domain or ROLL_DOMAIN}\x1f{roll_id(group.prompt)}"
    if trainer == "nemo-rl" and group.system is not None:
        return group.system + "\x1f" + group.prompt
    return group.prompt


def rollouts_csv(groups: Iterable[Group], path: Path, trainer: str = "verl") -> Path:
    """The same rollouts as an explicit table for ``--rollouts``: step, prompt key, 0/1 reward (blank: missing)."""
    rows = [
        {"step": g.step, "prompt": prompt_key(trainer, g), "reward": None if r is None else int(r)}
        for g in groups
        for r in g.rewards
    ]
    pl.DataFrame(rows, schema={"step": pl.Int64, "prompt": pl.String, "reward": pl.Int64}).write_csv(path)
    return path


def _answer(rng: random.Random, right: Reward) -> str:
    return f"Let me think... the answer is {rng.randint(0, 99)}" + (" ✓" if right else "")


# ------------------------------------------------------------------------------------------------ verl


def write_verl(
    folder: Path,
    groups: Sequence[Group],
    *,
    dapo: bool = False,
    uid: bool = False,
    reorder: bool = True,
    seed: int = 0,
) -> list[Path]:
    """verl ``{step}.jsonl`` (volcengine/verl verl/trainer/ppo/ray_trainer.py, RayPPOTrainer._dump_generations):
    base keys input, output, gts, score, step, then the reward function's extra keys in their order; an
    extra key of the same name (DAPO's "score") replaces the base value in place. json.dumps, ensure_ascii
    False, rows joined by newlines. ``dapo``: math_dapo.compute_score returns {"score": ±1.0, "acc": bool,
    "pred": str}; ``uid``: an extra "uid" key as forks and custom reward functions add (upstream writes
    none); ``reorder``: trainer.balance_batch (default on) reorders rows before the dump. Missing rewards
    exist only as a null "acc" (DAPO); elsewhere such rollouts are left out.
    """
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for step, step_groups in by_step(groups).items():
        lines = []
        for g in step_groups:
            group_uid = str(uuid.UUID(int=rng.getrandbits(128)))
            for r in g.rewards:
                if r is None and not dapo:
                    continue
                row: dict[str, object] = {
                    "input": g.prompt,
                    "output": _answer(rng, r),
                    "gts": str(rng.randint(0, 99)),
                    "score": 1.0 if r else 0.0,
                    "step": step,
                }
                if dapo:
                    row["score"] = 1.0 if r else -1.0
                    row["acc"] = r
                    row["pred"] = str(rng.randint(0, 99))
                if uid:
                    row["uid"] = group_uid
                lines.append(json.dumps(row, ensure_ascii=False))
        if reorder:
            rng.shuffle(lines)
        path = folder / f"{step}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


# ------------------------------------------------------------------------------------------------ TRL


def write_trl(
    output_dir: Path,
    groups: Sequence[Group],
    *,
    reward_names: Sequence[str] = ("accuracy_reward",),
    seed: int = 0,
) -> list[Path]:
    """TRL ``completions/completions_{step:05d}.parquet`` (huggingface/trl trl/trainer/grpo_trainer.py,
    GRPOTrainer.log, pandas to_parquet): step (int64), prompt, completion, one float column per reward
    function (None becomes NaN in rewards_per_func), advantage (float). A group's rows are contiguous.
    A second reward function scores a format check, independent of the first.
    """
    rng = random.Random(seed)
    folder = output_dir / "completions"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for step, step_groups in by_step(groups).items():
        table: dict[str, list[object]] = {"step": [], "prompt": [], "completion": []}
        for name in reward_names:
            table[name] = []
        table["advantage"] = []
        for g in step_groups:
            for r in g.rewards:
                table["step"].append(step)
                table["prompt"].append(g.prompt)
                table["completion"].append(_answer(rng, r))
                table[reward_names[0]].append(math.nan if r is None else float(r))
                for name in reward_names[1:]:
                    table[name].append(float(rng.random() < 0.5))
                table["advantage"].append(rng.uniform(-1, 1))
        schema = {"step": pl.Int64, "prompt": pl.String, "completion": pl.String}
        schema |= dict.fromkeys([*reward_names, "advantage"], pl.Float64)
        path = folder / f"completions_{step:05d}.parquet"
        pl.DataFrame(table, schema=schema).write_parquet(path)
        paths.append(path)
    return paths


# ------------------------------------------------------------------------------------------------ NeMo-RL


def _nemo_train_row(g: Group, r: bool, i: int, rng: random.Random) -> dict[str, object]:
    messages = [m for m in (g.system, g.prompt, _answer(rng, r)) if m is not None]
    prompt_len, answer_len = rng.randint(3, 6), rng.randint(1, 4)
    length = prompt_len + answer_len
    # Each value is a one-item slice of the batch (BatchedDataDict.slice via make_microbatch_iterator(1)).
    return {
        "content": [messages],
        "rewards": [1.0 if r else 0.0],
        "input_lengths": [length],
        "token_ids": [[rng.randint(1, 50000) for _ in range(length)]],
        "token_loss_mask": [[0] * prompt_len + [1] * answer_len],
        "sample_loss_mask": [1.0],
        "advantages": [[rng.uniform(-1, 1)] * length],
        "generation_logprobs": [[-rng.random() for _ in range(length)]],
        "prev_logprobs": [[-rng.random() for _ in range(length)]],
        "idx": i,
    }


def _nemo_val_row(g: Group, r: bool, i: int, rng: random.Random) -> dict[str, object]:
    messages = [{"role": "system", "content": g.system}] if g.system is not None else []
    messages += [{"role": "user", "content": g.prompt}, {"role": "assistant", "content": _answer(rng, r)}]
    return {"content": [messages], "rewards": [1.0 if r else 0.0], "idx": i}


def nonzero_std(group: Group) -> bool:
    """The group has both right and wrong rewards: what NeMo-RL's dynamic sampling (and DAPO's filter) keeps."""
    return len({r for r in group.rewards if r is not None}) > 1


def _dynamic(rows: list[dict[str, object]], total: list[float]) -> list[dict[str, object]]:
    """grpo_train with use_dynamic_sampling: log_data["filtered_rewards"] = the kept rows' own rewards, then
    log_data["rewards"] = repeated_batch["total_reward"], the whole generation batch's (sliced by position)."""
    out = []
    for i, row in enumerate(rows):
        own = row["rewards"]
        first = {"content": row["content"], "rewards": [total[i]], "filtered_rewards": own}
        out.append(first | {k: v for k, v in row.items() if k not in first})
    return out


def write_nemo_rl(
    folder: Path, groups: Sequence[Group], *, val: bool = False, dynamic: bool = False, seed: int = 0
) -> list[Path]:
    """NeMo-RL ``train_data_step{N}.jsonl`` / ``val_data_step{N}.jsonl`` (NVIDIA-NeMo/RL
    nemo_rl/algorithms/grpo.py grpo_train and validate; nemo_rl/utils/logger.py
    Logger.log_batched_dict_as_jsonl): one row per rollout, every value a one-item list, then "idx".
    Training rows: content (message texts), rewards, input_lengths, token_ids, token_loss_mask,
    sample_loss_mask, advantages, generation_logprobs, prev_logprobs. Validation rows: content as
    {role, content} messages, rewards. A group's rows are contiguous (repeat_interleave). The rewards are
    tensors, so a missing reward cannot be written: such rollouts are left out. ``dynamic``:
    use_dynamic_sampling (grpo.py dynamic_sampling, one generation batch per step): only the groups with a
    nonzero reward std are dumped, each row with 'rewards' from the unfiltered batch by position and its own
    reward in 'filtered_rewards'.
    """
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for step, step_groups in by_step(groups).items():
        rows: list[dict[str, object]] = []
        total = [float(r) for g in step_groups for r in g.rewards if r is not None]
        for g in step_groups:
            if dynamic and not nonzero_std(g):
                continue
            for r in g.rewards:
                if r is None:
                    continue
                rows.append((_nemo_val_row if val else _nemo_train_row)(g, r, len(rows), rng))
        if dynamic:
            rows = _dynamic(rows, total)
        path = folder / f"{'val' if val else 'train'}_data_step{step}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        paths.append(path)
    return paths


# ------------------------------------------------------------------------------------------------ AReaL


def write_areal(log_path: Path, groups: Sequence[Group], *, workers: int = 1, seed: int = 0) -> list[Path]:
    """AReaL ``rollout/{tail_version}/{task_id}.jsonl`` (inclusionAI/AReaL areal/infra/workflow_executor.py,
    WorkflowExecutor._dump_trajectory): one file per task (one group), appended, one json.dumps record per
    sample: task_id, sample_idx, seqlen, prompt_len, head_version, tail_version, reward (float), prompt,
    completion. The step is the policy version. Rewards are tensors: missing ones are left out.
    ``workers``: SPMD mode, data-parallel workers each with its own executor, whose TaskIdGenerator counts
    from 0: groups go to the workers in turn and share task ids, so their records land in the same file.
    """
    rng = random.Random(seed)
    paths: list[Path] = []
    for number, g in enumerate(groups):
        task_id = number // workers
        folder = log_path / "rollout" / str(g.step)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{task_id}.jsonl"
        with path.open("a") as handle:
            for i, r in enumerate(g.rewards):
                if r is None:
                    continue
                prompt_len = rng.randint(5, 40)
                record = {
                    "task_id": task_id,
                    "sample_idx": i,
                    "seqlen": prompt_len + 10,
                    "prompt_len": prompt_len,
                    "head_version": max(g.step - 1, 0),
                    "tail_version": g.step,
                    "reward": 1.0 if r else 0.0,
                    "prompt": g.prompt,
                    "completion": _answer(rng, r),
                }
                handle.write(json.dumps(record) + "\n")
        paths += [] if path in paths else [path]
    return paths


COLOURED = "\x1b[33m\x1b[2m{}\x1b[0m"  # colorama Fore.YELLOW + Style.DIM, text, Style.RESET_ALL


def write_areal_text(dump_dir: Path, groups: Sequence[Group], *, seed: int = 0) -> list[Path]:
    """AReaL before v0.5.2, ``{dump_dir}/{version}/{qid}.txt`` (inclusionAI/AReaL v0.5.1
    areal/workflow/rlvr.py, RLVRWorkflow.arun_episode; dump_dir is ``{log_path}/generated`` in the
    examples): each episode appends, per sample, "idx: {i+1} / {n}, seqlen: {seqlen}, reward is {reward}."
    then the coloured prompt and completion; qid is the dataset's query_id/id/qid. Rewards are the reward
    function's floats; a missing one cannot be written and is left out. A completion may hold new lines.
    """
    rng = random.Random(seed)
    paths: list[Path] = []
    for g in groups:
        folder = dump_dir / str(g.step)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{hashlib.sha1(g.prompt.encode()).hexdigest()[:12]}.txt"
        kept = [r for r in g.rewards if r is not None]
        with path.open("a") as handle:
            for i, r in enumerate(kept):
                info = "\n".join(
                    [
                        f"idx: {i + 1} / {len(kept)}, seqlen: {rng.randint(20, 90)}, reward is {float(r)}.",
                        f"prompt is \n{COLOURED.format(g.prompt)}",
                        f"sequence is: \n{COLOURED.format(_answer(rng, r) + chr(10) + 'so: ' + str(i))}",
                    ]
                )
                handle.write(info + "\n")
        paths += [] if path in paths else [path]
    return paths


# ------------------------------------------------------------------------------------------------ SkyRL


def _skyrl_rows(g: Group, r: bool, rng: random.Random, step_wise: bool) -> list[tuple[str, object]]:
    """(input_prompt, score) per dumped row of one trajectory. Step-wise (skyrl_gym_generator.agent_loop with
    step_wise_trajectories): one row per turn, each turn's prompt the conversation so far, its score a list
    of token rewards with the turn's reward on its last token: 0 before the final turn, the reward on it."""
    if not step_wise:
        return [(g.prompt, 1.0 if r else 0.0)]
    turns = rng.randint(1, 4)
    rows: list[tuple[str, object]] = []
    conversation = g.prompt
    for turn in range(turns):
        final = turn == turns - 1
        tokens = [0.0] * rng.randint(2, 5)
        tokens[-1] = (1.0 if r else 0.0) if final else 0.0
        rows.append((conversation, tokens))
        conversation += f"<assistant>{_answer(rng, None)}</assistant><user>observation {turn}</user>"
    return rows


def write_skyrl(
    export_path: Path, groups: Sequence[Group], *, step_wise: bool = False, seed: int = 0
) -> list[Path]:
    """SkyRL ``dumped_evals/global_step_{N}_evals/{data_source}.jsonl`` (NovaSky-AI/SkyRL
    skyrl/train/utils/trainer_utils.py, dump_per_dataset_eval_results): per data source, rows input_prompt,
    output_response, score (float), stop_reason, env_class, env_extras, data_source; plus
    aggregated_results.jsonl (one line of metrics). Data sources alternate between two; "/" becomes "_" in
    the file name (sanitize_data_source). Missing rewards cannot be written and are left out.
    ``step_wise``: evaluate_step_wise with step_wise_trajectories=true dumps every turn (see _skyrl_rows).
    """
    rng = random.Random(seed)
    paths = []
    for step, step_groups in by_step(groups).items():
        folder = export_path / "dumped_evals" / f"global_step_{step}_evals"
        folder.mkdir(parents=True, exist_ok=True)
        per_source: dict[str, list[str]] = defaultdict(list)
        for j, g in enumerate(step_groups):
            source = ("math/aime", "gsm8k")[j % 2]
            for r in g.rewards:
                if r is None:
                    continue
                for prompt, score in _skyrl_rows(g, r, rng, step_wise):
                    entry = {
                        "input_prompt": prompt,
                        "output_response": _answer(rng, r),
                        "score": score,
                        "stop_reason": "stop",
                        "env_class": "gsm8k",
                        "env_extras": {"data_source": source, "reward_spec": {"ground_truth": "42"}},
                        "data_source": source,
                    }
                    per_source[source].append(json.dumps(entry, ensure_ascii=False) + "\n")
        for source, lines in per_source.items():
            path = folder / f"{source.replace('/', '_')}.jsonl"
            path.write_text("".join(lines))
            paths.append(path)
        (folder / "aggregated_results.jsonl").write_text(json.dumps({"eval/all/avg_score": 0.5}) + "\n")
    return paths


# ------------------------------------------------------------------------------------------------ ROLL


def write_roll(
    folder: Path,
    groups: Sequence[Group],
    *,
    with_id: bool = True,
    numbered: bool = False,
    single: bool = False,
    seed: int = 0,
) -> list[Path]:
    """ROLL ``rollout_dump_data.step_{N}.jsonl`` (alibaba/ROLL roll/pipeline/rlvr/utils.py,
    dump_rollout_to_specific_path and write_to_json_process): one line, a JSON object of column arrays:
    the batch's dataset columns kept by COLUMMNS_CONFIG (id, prompt, messages, ground_truth, tag,
    difficulty, domain, ...) in their order, then responses, scores (float), sampling_params (a JSON string
    per row), global_step. Scores are tensors: missing ones are left out. ``numbered``: each domain's
    dataset numbers its prompts from 0 (ids collide across domains, as in ROLL's own example mixes);
    ``single``: ROLL before late 2025 (cec5234a^): every step appended as one line to rollout_data.jsonl,
    with every non-tensor column of the batch (none left out by COLUMMNS_CONFIG).
    """
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    numbers: dict[tuple[str, str], int] = {}
    for step, step_groups in by_step(groups).items():
        cols: dict[str, list[object]] = defaultdict(list)
        for g in step_groups:
            domain = g.domain or ROLL_DOMAIN
            number = numbers.setdefault((domain, g.prompt), sum(d == domain for d, _ in numbers))
            for r in g.rewards:
                if r is None:
                    continue
                if with_id:
                    cols["id"].append(str(number) if numbered else roll_id(g.prompt))
                cols["messages"].append(json.dumps([{"role": "user", "content": g.prompt}]))
                cols["ground_truth"].append("42")
                cols["tag"].append("math_rule")
                cols["difficulty"].append(str(rng.randint(1, 5)))
                cols["domain"].append(domain)
                if single:
                    cols["prompt_id"].append(rng.randint(0, 9))  # a column COLUMMNS_CONFIG would drop
                cols["responses"].append(_answer(rng, r))
                cols["scores"].append(1.0 if r else 0.0)
                cols["sampling_params"].append(json.dumps({"temperature": 1.0}))
                cols["global_step"].append(step)
        if not cols:
            continue  # ROLL dumps generated batches, never an empty one
        if single:
            path = folder / "rollout_data.jsonl"
            with path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(dict(cols), ensure_ascii=False) + "\n")
            paths += [] if path in paths else [path]
            continue
        path = folder / f"rollout_dump_data.step_{step}.jsonl"
        path.write_text(json.dumps(dict(cols), ensure_ascii=False) + "\n")
        paths.append(path)
    return paths


WRITERS = {
    "verl": write_verl,
    "trl": write_trl,
    "nemo-rl": write_nemo_rl,
    "areal": write_areal,
    "skyrl": write_skyrl,
    "roll": write_roll,
}

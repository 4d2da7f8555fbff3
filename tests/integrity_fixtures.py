"""Rollout logs whose groups break the way real logs do, written with what each prompt's counts are, for
tests/test_integrity.py and tests/test_check.py."""

from __future__ import annotations

import json
import random
from pathlib import Path

PROMPTS = 16
ROLLOUTS = 24
GROUPS = 48
N = 4


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_path_log(folder: Path) -> tuple[Path, dict[int, tuple[int, int]]]:
    """384 rollouts of 16 prompts, each prompt text holding its rollout's own workspace path (one checkout
    per rollout, as code environments give them: NVIDIA-NeMo/RL PR #4013); and each prompt's (k, n)."""
    rng = random.Random(7)
    rows, truth = [], {}
    for i in range(PROMPTS):
        rewards = [int(rng.random() < (i + 1) / (PROMPTS + 2)) for _ in range(ROLLOUTS)]
        truth[i] = (sum(rewards), ROLLOUTS)
        for r in rewards:
            ws = f"/tmp/ws/rollout-{rng.getrandbits(32):08x}/repo"
            rows.append({"prompt": f"Task {i}: fix the failing test in {ws}/src/app.py", "reward": r})
    rng.shuffle(rows)
    return write_jsonl(folder / "rollouts.jsonl", rows), truth


def write_turns_log(folder: Path) -> tuple[Path, dict[int, tuple[int, int]], int]:
    """48 groups (uid) of 4 rollouts; a rollout is one or two turns, each turn a row under the group's uid
    (the turn's own prompt, the rollout's reward on its last turn), as agent-lightning's multi-turn
    triplets share one uid (microsoft/agent-lightning#489). Returns the file, each group's (k, n) over
    rollouts, and how many groups have a two-turn rollout."""
    rng = random.Random(11)
    rows: list[dict[str, object]] = []
    truth, mixed = {}, 0
    for g in range(GROUPS):
        question = f"Question {g}: how many moves solve board {g}?"
        two_turns = [False] * N if g < GROUPS // 8 else [rng.random() < 0.6 for _ in range(N)]
        if g >= GROUPS // 8 and not any(two_turns):
            two_turns[0] = True
        mixed += any(two_turns)
        rewards = [int(rng.random() < 0.5) for _ in range(N)]
        truth[g] = (sum(rewards), N)
        for j in range(N):
            rollout = f"ro-{g}-{j}"
            if two_turns[j]:
                rows.append({"uid": f"u{g}", "rollout_id": rollout, "prompt": question, "reward": None})
                follow = f"{question}\nassistant: attempt {j}\nuser: the tool says {rng.random():.6f}"
                rows.append({"uid": f"u{g}", "rollout_id": rollout, "prompt": follow, "reward": rewards[j]})
            else:
                rows.append({"uid": f"u{g}", "rollout_id": rollout, "prompt": question, "reward": rewards[j]})
    return write_jsonl(folder / "turns.jsonl", rows), truth, mixed


SHORT = dict.fromkeys(range(12), 8) | {3: 5, 7: 5, 10: 6}


def write_short_log(folder: Path) -> tuple[Path, dict[int, int]]:
    """12 groups (group_index) of 8 rollouts of one prompt each, three cut short; each group's size."""
    rows = [
        {"group_index": g, "prompt": f"Prove lemma {g}", "reward": (g + j) % 2}
        for g, size in SHORT.items()
        for j in range(size)
    ]
    return write_jsonl(folder / "short.jsonl", rows), SHORT


def write_tasks_log(folder: Path) -> tuple[Path, dict[tuple[str, int], tuple[int, int]]]:
    """Two tasks that each number their 8 examples from 0 (example_id), 4 rollouts each, as environments
    reuse ids (PrimeIntellect-ai/verifiers#459); each (task, id)'s (k, n)."""
    rows, truth = [], {}
    for t, task in enumerate(("gsm8k", "aime")):
        for i in range(8):
            rewards = [int((i * 3 + t * 5 + j) % 4 == 0) for j in range(4)]
            truth[(task, i)] = (sum(rewards), 4)
            rows += [
                {"task": task, "example_id": i, "prompt": f"{task} problem {i}", "reward": r} for r in rewards
            ]
    return write_jsonl(folder / "results.jsonl", rows), truth


def write_clean_log(folder: Path) -> Path:
    """6 groups of 8 rollouts, one prompt each, every group whole."""
    rows = [
        {"group_index": g, "prompt": f"Prove lemma {g}", "reward": (g * j) % 2}
        for g in range(6)
        for j in range(8)
    ]
    return write_jsonl(folder / "clean.jsonl", rows)

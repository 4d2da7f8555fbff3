"""``--from rlprobe``: run folders laid out as rlprobe 0.1.0 (PyPI) records a TRL run, read against counts
made here; its default capture (a selection by reward) refused with its counts.

The writer mirrored (rlprobe 0.1.0's sdist, src/rlprobe/):

- ``integrations/trl.py:199-246`` (``_capture_samples``): per generation batch, sample i gets
  ``sample_id = f"{step}_{i}"``, ``prompt_text``, ``reward_total`` (the weighted sum of the reward functions'
  non-NaN values), ``reward_components`` and ``group_id = f"{step}_g{i // num_generations}"``;
  ``on_train_begin`` (trl.py:122-142) keeps ``args.to_dict()``'s scalars as ``trainer_config``.
- ``recorder/core.py:201-233`` coerces each dict to a ``SampleRecord`` (schemas/__init__.py:101-119) and,
  unless ``select=False``, applies ``select_samples`` (``recorder/sampling.py:28-60``: the bottom_k and top_k by
  reward, then random_k of the middle drawn by ``rng.choice``; every candidate tagged ``all`` when they fit
  the budget; ``SamplingConfig()`` is 2, 2, 4).
- ``storage.py:41-47, 86-98, 151-154``: each record flattened (``reward_component.<name>`` columns), the union
  of keys written by ``pa.Table.from_pydict`` + ``pq.write_table(compression="zstd")`` to
  ``samples/shard-{NNNNN}.parquet``; ``manifest.json`` is ``RunManifest.model_dump_json(indent=2)``.
"""

from __future__ import annotations

import io
import json
import math
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import one_error_line, run_cli, run_in

GENERATIONS = 8
PROMPTS = 6
STEPS = (1, 2, 3)
SAMPLE_FIELDS = (
    "step", "sample_id", "rank", "group_id", "prompt_id", "prompt_text", "completion_text",
    "completion_token_ids", "reward_total", "advantage", "logprob_mean", "kl_contribution",
    "completion_len", "truncated", "capture_reason",
)  # fmt: skip


def rewards(step: int, prompt: int) -> list[int]:
    return [int((step * 7 + prompt * 3 + j * j) % 5 < prompt % 4 + 1) for j in range(GENERATIONS)]


def batch(step: int) -> list[dict[str, object]]:
    """One step's samples as the TRL integration builds them: prompts repeated num_generations times."""
    samples = []
    for i in range(PROMPTS * GENERATIONS):
        prompt = i // GENERATIONS
        value = float(rewards(step, prompt)[i % GENERATIONS])
        samples.append(
            {
                "sample_id": f"{step}_{i}",
                "prompt_text": f"Problem {prompt}: find x",
                "completion_text": f"x = {i}",
                "reward_total": value,
                "reward_components": {"accuracy_reward": value},
                "advantage": None,
                "group_id": f"{step}_g{i // GENERATIONS}",
            }
        )
    return samples


def select(
    samples: list[dict[str, object]], top: int, bottom: int, random_k: int, rng: np.random.Generator
) -> list[dict[str, object]]:
    """sampling.select_samples."""
    if len(samples) <= top + bottom + random_k:
        return [{**s, "capture_reason": "all"} for s in samples]
    values = np.array([s["reward_total"] if s["reward_total"] is not None else 0.0 for s in samples])
    order = np.argsort(values, kind="stable")
    lows = [int(i) for i in order[:bottom]]
    highs = [int(i) for i in order[len(order) - top :]]
    middle = [int(i) for i in order[bottom : len(order) - top]]
    picked = (
        [int(i) for i in rng.choice(middle, size=min(random_k, len(middle)), replace=False)]
        if random_k and middle
        else []
    )
    tagged: dict[int, str] = {}
    for i in lows:
        tagged[i] = "bottom_k"
    for i in highs:
        tagged[i] = "top_k"
    for i in picked:
        tagged.setdefault(i, "random")
    return [{**samples[i], "capture_reason": reason} for i, reason in sorted(tagged.items())]


def record(step: int, sample: dict[str, object]) -> dict[str, object]:
    """A SampleRecord's model_dump, flattened as storage._flatten does."""
    row: dict[str, object] = dict.fromkeys(SAMPLE_FIELDS)
    row.update({k: v for k, v in sample.items() if k in SAMPLE_FIELDS})
    row["step"], row["rank"] = step, 0
    for name, value in dict(sample.get("reward_components") or {}).items():  # type: ignore[call-overload]
        row[f"reward_component.{name}"] = value
    return row


def write_run(folder: Path, top: int, bottom: int, random_k: int) -> Path:
    """A recorded run: manifest.json and one samples shard (fewer than 4,096 samples: one shard)."""
    rng = np.random.default_rng(0)
    rows = [record(step, s) for step in STEPS for s in select(batch(step), top, bottom, random_k, rng)]
    (folder / "samples").mkdir(parents=True)
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(row))
    table = pa.Table.from_pydict({k: [row.get(k) for row in rows] for k in keys})
    pq.write_table(table, folder / "samples" / "shard-00000.parquet", compression="zstd")
    manifest = {
        "schema_version": 1, "run_id": "run-0", "created_at": "2026-01-01T00:00:00+00:00", "algorithm": "grpo",
        "model_name": "Qwen/Qwen2.5-0.5B", "world_size": 1,
        "trainer_config": {"num_generations": GENERATIONS, "learning_rate": 1e-6, "logging_steps": 1},
        "environment": {}, "notes": None, "extra": {},
    }  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return folder


def silent(found: list[tuple[int, int]], G: int) -> float:
    total = sum(Fraction(math.comb(k, G) + math.comb(n - k, G), math.comb(n, G)) for k, n in found)
    return float(total / len(found))


def counts(steps: tuple[int, ...]) -> list[tuple[int, int]]:
    pooled: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for step in steps:
        for prompt in range(PROMPTS):
            pooled[prompt][0] += sum(rewards(step, prompt))
            pooled[prompt][1] += GENERATIONS
    return [(k, n) for k, n in pooled.values()]


def csv(*args: object) -> tuple[pl.DataFrame, str]:
    done = run_in(*args, "--format", "csv")
    assert 0 == done.returncode, done.stderr
    return pl.read_csv(io.StringIO(done.stdout)), done.stderr


@pytest.fixture(scope="module")
def every(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SamplingConfig(top_k=0, bottom_k=0, random_k=B), B ≥ a step's samples: every rollout, 'all'."""
    return write_run(tmp_path_factory.mktemp("every") / "runs" / "my-run", 0, 0, PROMPTS * GENERATIONS)


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SamplingConfig(): 2 top, 2 bottom and 4 random samples a step."""
    return write_run(tmp_path_factory.mktemp("default") / "runs" / "my-run", 2, 2, 4)


def test_a_full_capture_pools_every_step(every: Path) -> None:
    out, _ = csv("silent", every, "--from", "rlprobe", "--G", "4")
    assert silent(counts(STEPS), 4) == pytest.approx(out["silent_rate"].item(), abs=1e-12)


def test_a_full_capture_reads_each_step(every: Path) -> None:
    out, _ = csv("silent", every, "--from", "rlprobe", "--G", "2", "--by", "step")
    found = dict(zip(out["step"].to_list(), out["silent_rate"].to_list(), strict=True))
    assert {s: silent(counts((s,)), 2) for s in STEPS} == pytest.approx(found, abs=1e-12)


def test_a_shard_is_read_alone(every: Path) -> None:
    out, _ = csv("silent", every / "samples" / "shard-00000.parquet", "--from", "rlprobe", "--G", "4")
    assert PROMPTS == out["prompts"].item()


def test_the_manifest_gives_n_and_whole_groups_pass(every: Path) -> None:
    out, _ = csv("check", every, "--from", "rlprobe")
    found = out.filter(pl.col("check") == "group_size").row(0, named=True)
    assert ("ok", f"every group holds n = {GENERATIONS}") == (found["status"], found["detail"])


def test_the_default_capture_exits_1(default: Path) -> None:
    done = run_cli("silent", default, "--from", "rlprobe")
    assert 1 == done.returncode


def test_the_default_capture_counts_each_reason(default: Path) -> None:
    table = pl.read_parquet(default / "samples" / "shard-00000.parquet")
    reasons = Counter(table["capture_reason"].to_list())
    line = one_error_line(run_in("silent", default, "--from", "rlprobe").stderr)
    said = ", ".join(f"{r}: {reasons[r]}" for r in ("top_k", "bottom_k", "random"))
    assert f"{table.height} of {table.height} rows were captured by reward ({said})" in line


def test_the_default_capture_names_the_config_that_records_every_rollout(default: Path) -> None:
    line = one_error_line(run_in("silent", default, "--from", "rlprobe").stderr)
    assert "SamplingConfig(top_k=0, bottom_k=0, random_k=B)" in line


def test_check_shows_the_selection_as_a_failed_row(default: Path) -> None:
    out, _ = csv("check", default, "--from", "rlprobe")
    found = out.filter(pl.col("check") == "selection").row(0, named=True)
    rows = pl.read_parquet(default / "samples" / "shard-00000.parquet").height
    assert ("fail", rows, rows) == (found["status"], found["affected"], found["total"])


def test_a_folder_without_samples_exits_1_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{}")
    done = run_cli("silent", tmp_path, "--from", "rlprobe")
    assert 1 == done.returncode
    assert "no rlprobe dump file" in one_error_line(done.stderr)


ROLLOUTS = ("--rollouts", "--prompt-col", "prompt_text", "--reward-col", "reward_total")


def test_the_default_capture_read_as_rollouts_is_noted(default: Path) -> None:
    shard = default / "samples" / "shard-00000.parquet"
    rows = pl.read_parquet(shard).height
    _, err = csv("silent", shard, *ROLLOUTS)
    assert f"{rows} of {rows} rows were captured by reward" in err


def test_the_default_capture_read_as_rollouts_fails_checks_selection(default: Path) -> None:
    out, _ = csv("check", default / "samples" / "shard-00000.parquet", *ROLLOUTS)
    assert "fail" == out.filter(pl.col("check") == "selection")["status"].item()


def test_a_full_capture_read_as_rollouts_passes_selection(every: Path) -> None:
    out, _ = csv("check", every / "samples" / "shard-00000.parquet", *ROLLOUTS)
    assert "ok" == out.filter(pl.col("check") == "selection")["status"].item()


def test_a_shard_read_without_from_names_rlprobe(every: Path) -> None:
    done = run_in("silent", every / "samples" / "shard-00000.parquet")
    assert "read it with --from rlprobe" in one_error_line(done.stderr)

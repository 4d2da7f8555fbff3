"""``--from miles``: a ``--dump-details`` folder laid out as miles 31f1ca96 writes it, read against counts made
here; its ``.pt`` files never unpickled.

The writer mirrored:

- ``miles/utils/arguments.py:3183-3187@31f1ca96``: ``--dump-details D`` sets ``save_debug_rollout_data =
  D/rollout_data/{rollout_id}.pt`` (torch.save) and ``save_debug_trajectory_data =
  D/trajectory/{rollout_id}.jsonl``.
- ``miles/ray/rollout/debug_data.py:12-88@31f1ca96``: ``trajectory_rows`` keeps the samples that recorded a
  conversation (``metadata["messages"]``): ``sample_index, group_index, status, reward`` (a number, else
  None), ``prompt, messages``; ``save_debug_trajectory_data`` writes them to the path with ``rollout_id``
  formatted as ``"eval_" + id`` for an evaluation, one ``json.dumps(row, separators=(",", ":"))`` a line.
"""

from __future__ import annotations

import io
import json
import math
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import one_error_line, run_cli, run_in

SAMPLES = 4  # n_samples_per_prompt
PROMPTS = ("Fix the failing test", "Add a --verbose flag", "Speed up the parser")
ROLLOUTS = (0, 1, 2)


def reward(rollout: int, group: int, j: int) -> float | None:
    if (rollout, group, j) == (1, 2, 3):
        return None  # a non-numeric reward (a dict) is written as None
    return float((rollout + 2 * group + j * j) % 3 == 0)


def trajectory(rollout: int) -> list[dict[str, object]]:
    """One rollout's samples as trajectory_rows gives them: a group of SAMPLES per prompt."""
    rows = []
    for group, prompt in enumerate(PROMPTS):
        for j in range(SAMPLES):
            index = group * SAMPLES + j
            messages = [
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": f"try {rollout}.{index}"},
                {"role": "tool", "content": f"exit code {(rollout + index) % 2}"},
            ]
            rows.append(
                {
                    "sample_index": index,
                    "group_index": group,
                    "status": "completed",
                    "reward": reward(rollout, group, j),
                    "prompt": prompt,
                    "messages": messages,
                }
            )
    return rows


def write_rows(path: Path, rows: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    return path


def write_pt(path: Path) -> Path:
    """A torch.save file's first bytes (a zip archive): never to be opened as a pickle."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    return path


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("miles") / "dump_details"
    for rollout in ROLLOUTS:
        write_pt(folder / "rollout_data" / f"{rollout}.pt")
        write_rows(folder / "trajectory" / f"{rollout}.jsonl", trajectory(rollout))
    eval_rows = [{**r, "prompt": f"eval {r['group_index']}"} for r in trajectory(9)]
    write_rows(folder / "trajectory" / "eval_2.jsonl", eval_rows)
    return folder


def counts(rollouts: tuple[int, ...]) -> list[tuple[int, int]]:
    pooled: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for rollout in rollouts:
        for group in range(len(PROMPTS)):
            graded = [r for j in range(SAMPLES) if (r := reward(rollout, group, j)) is not None]
            pooled[group][0] += int(sum(graded))
            pooled[group][1] += len(graded)
    return [(k, n) for k, n in pooled.values()]


def silent(found: list[tuple[int, int]], G: int) -> float:
    total = sum(Fraction(math.comb(k, G) + math.comb(n - k, G), math.comb(n, G)) for k, n in found)
    return float(total / len(found))


def csv(*args: object) -> tuple[pl.DataFrame, str]:
    done = run_in(*args, "--format", "csv")
    assert 0 == done.returncode, done.stderr
    return pl.read_csv(io.StringIO(done.stdout)), done.stderr


def test_the_dump_folder_pools_every_rollout(dump: Path) -> None:
    out, _ = csv("silent", dump, "--from", "miles", "--G", "2")
    assert silent(counts(ROLLOUTS), 2) == pytest.approx(out["silent_rate"].item(), abs=1e-12)


def test_each_rollout_id_is_a_step(dump: Path) -> None:
    out, _ = csv("silent", dump, "--from", "miles", "--G", "2", "--by", "step")
    found = dict(zip(out["step"].to_list(), out["silent_rate"].to_list(), strict=True))
    assert {r: silent(counts((r,)), 2) for r in ROLLOUTS} == pytest.approx(found, abs=1e-12)


def test_a_folder_search_leaves_the_eval_file_out(dump: Path) -> None:
    out, _ = csv("silent", dump, "--from", "miles")
    assert len(PROMPTS) == out["prompts"].item()


def test_an_eval_file_is_read_when_named(dump: Path) -> None:
    out, _ = csv("silent", dump / "trajectory" / "eval_2.jsonl", "--from", "miles")
    assert len(PROMPTS) == out["prompts"].item()


def test_whole_groups_pass_every_group_check(dump: Path) -> None:
    out, _ = csv("check", dump, "--from", "miles")
    assert ["ok"] * out.height == out["status"].to_list()


def test_a_folder_of_pt_files_only_exits_1_with_one_line(tmp_path: Path) -> None:
    write_pt(tmp_path / "dump" / "rollout_data" / "0.pt")
    done = run_cli("silent", tmp_path / "dump", "--from", "miles")
    assert 1 == done.returncode
    assert "never unpickles" in one_error_line(done.stderr)


def test_a_pt_file_given_exits_1_with_one_line(tmp_path: Path) -> None:
    done = run_cli("silent", write_pt(tmp_path / "rollout_data" / "0.pt"), "--from", "miles")
    assert 1 == done.returncode
    assert "never unpickles" in one_error_line(done.stderr)


def test_read_as_rollouts_the_conversation_is_never_advised_as_the_key(dump: Path) -> None:
    _, err = csv(
        "silent",
        dump / "trajectory" / "0.jsonl",
        "--rollouts",
        "--prompt-col",
        "prompt",
        "--reward-col",
        "reward",
    )
    assert "--prompt-col messages" not in err


def test_a_trajectory_read_without_from_names_miles(dump: Path) -> None:
    done = run_in("silent", dump / "trajectory" / "0.jsonl")
    assert "read it with --from miles" in one_error_line(done.stderr)

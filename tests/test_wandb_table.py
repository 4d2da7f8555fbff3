"""``--from wandb-table``: W&B tables laid out as wandb 0.31.0 (b6e29505) writes them, holding TRL's
``completions`` table as trl f2cd5771 logs it, read pooled and per step against counts made here.

The writers mirrored:

- TRL ``GRPOTrainer.log`` (trl/trainer/grpo_trainer.py:3311-3350@f2cd5771): ``table = {"step", "prompt",
  "completion", **rewards, **extra, "advantage"}``; ``log_unique_prompts`` drops duplicate prompts; then
  ``wandb.log({"completions": wandb.Table(dataframe=df)})``.
- The run's media file: ``Table.bind_to_run`` (wandb/sdk/data_types/table.py:687-703@b6e29505) writes
  ``{"columns", "data"}`` with ``util.json_dump_safer`` → ``lib/json_util.dumps`` (json_util.py:20@b6e29505:
  pydantic-core, compact UTF-8, ``inf_nan_mode="constants"``: a bare ``NaN``), named
  ``media/table/{key}_{step}_{sha256[:20]}.table.json`` (base_types/media.py:139-141@b6e29505).
- The artifact: ``_log_table_artifact`` (data_types/utils.py:176-207@b6e29505) adds the table to a
  ``run-{id}-{key}`` ``run_table`` artifact; ``Table.to_json(artifact)`` (table.py:804-917@b6e29505) gives
  ``_type "table", columns, data, ncols, nrows, column_types, log_mode``, each cell through ``_json_helper``
  (``util.json_friendly``: NaN → None, util.py:644@b6e29505), written by ``json.dump(val, f,
  sort_keys=True)`` (sdk/artifacts/artifact.py:1755@b6e29505); users download it to
  ``artifacts/run-{id}-completions:v{N}/completions.table.json``.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import one_error_line, run_cli, run_in

PROMPTS = ("What is 2+2?", "Solve x+1=3", "Name a prime", "Integrate x dx")
COLUMNS = ["step", "prompt", "completion", "accuracy_reward", "advantage"]
# step → per prompt the rewards of its 4 completions (None: a reward function that returned None, NaN in TRL)
STEPS: dict[int, list[list[float | None]]] = {
    10: [[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]],
    20: [[1, 1, 1, 1], [1, 0, None, 0], [1, 1, 1, 0], [0, 1, 0, 0]],
    30: [[1, 0, 0, 0], [0, 0, 0, 1], [1, 1, 0, 1], [1, 1, 1, 1]],
}


def trl_rows(step: int) -> list[list[object]]:
    """One generation batch as TRL's table holds it: each prompt's completions in a row each."""
    rows: list[list[object]] = []
    for prompt, rewards in zip(PROMPTS, STEPS[step], strict=True):
        for j, r in enumerate(rewards):
            reward = math.nan if r is None else float(r)
            rows.append([step, prompt, f"answer {j}", reward, 0.5 - float(r or 0)])
    return rows


def write_media(run_dir: Path, key: str, step: int, columns: list[str], data: list[list[object]]) -> Path:
    """A run's media table: compact JSON, bare NaN, named {key}_{step}_{sha256[:20]}.table.json."""
    text = json.dumps({"columns": columns, "data": data}, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    path = run_dir / "media" / "table" / f"{key}_{step}_{digest}.table.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_artifact(
    folder: Path, run: str, key: str, version: int, columns: list[str], data: list[list[object]]
) -> Path:
    """A downloaded run_table artifact: sorted keys, NaN as null, _type 'table'."""
    cells = [[None if isinstance(v, float) and math.isnan(v) else v for v in row] for row in data]
    types = {c: {"wb_type": "number" if c != "prompt" and c != "completion" else "string"} for c in columns}
    table = {
        "_type": "table",
        "column_types": {"params": {"type_map": types}, "wb_type": "typedDict"},
        "columns": columns,
        "data": cells,
        "log_mode": "IMMUTABLE",
        "ncols": len(columns),
        "nrows": len(cells),
    }
    path = folder / "artifacts" / f"run-{run}-{key}:v{version}" / f"{key}.table.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(table, f, sort_keys=True)
    return path


def counts(steps: list[int]) -> dict[str, tuple[int, int]]:
    """Per prompt, k right and n graded over the steps (a missing reward left out)."""
    pooled: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for step in steps:
        for prompt, rewards in zip(PROMPTS, STEPS[step], strict=True):
            graded = [r for r in rewards if r is not None]
            pooled[prompt][0] += int(sum(graded))
            pooled[prompt][1] += len(graded)
    return {p: (k, n) for p, (k, n) in pooled.items()}


def silent(found: list[tuple[int, int]], G: int) -> float:
    total = sum(Fraction(math.comb(k, G) + math.comb(n - k, G), math.comb(n, G)) for k, n in found)
    return float(total / len(found))


def csv(*args: object) -> tuple[pl.DataFrame, str]:
    done = run_in(*args, "--format", "csv")
    assert 0 == done.returncode, done.stderr
    return pl.read_csv(io.StringIO(done.stdout)), done.stderr


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("wandb") / "run-20260101_000000-abc123" / "files"
    for history, step in enumerate(STEPS):
        write_media(run_dir, "completions", history * 7, COLUMNS, trl_rows(step))
    return run_dir


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("download")
    for version, step in enumerate(STEPS):
        write_artifact(folder, "abc123", "completions", version, COLUMNS, trl_rows(step))
    return folder


def test_the_media_file_holds_a_bare_nan(media: Path) -> None:
    assert any("NaN" in p.read_text() for p in media.rglob("*.table.json"))


@pytest.mark.parametrize("form", ["media", "artifacts"])
def test_a_trl_table_pools_every_step(form: str, request: pytest.FixtureRequest) -> None:
    folder = request.getfixturevalue(form)
    out, _ = csv("silent", folder, "--from", "wandb-table", "--G", "2")
    assert silent(list(counts(list(STEPS)).values()), 2) == pytest.approx(
        out["silent_rate"].item(), abs=1e-12
    )


@pytest.mark.parametrize("form", ["media", "artifacts"])
def test_a_trl_table_reads_each_step_by_its_step_column(form: str, request: pytest.FixtureRequest) -> None:
    folder = request.getfixturevalue(form)
    out, _ = csv("silent", folder, "--from", "wandb-table", "--G", "3", "--by", "step")
    found = dict(zip(out["step"].to_list(), out["silent_rate"].to_list(), strict=True))
    expected = {step: silent(list(counts([step]).values()), 3) for step in STEPS}
    assert expected == pytest.approx(found, abs=1e-12)


def test_a_missing_reward_is_left_out_and_counted(artifacts: Path) -> None:
    _, err = csv("silent", artifacts, "--from", "wandb-table")
    assert "skipped 1 rollout row(s) with a null reward" in err


def test_a_table_file_is_read_alone(artifacts: Path) -> None:
    one = next(artifacts.rglob("*:v1/*.table.json"))
    out, _ = csv("silent", one, "--from", "wandb-table", "--G", "2")
    assert len(PROMPTS) == out["prompts"].item()
    assert silent(list(counts([20]).values()), 2) == pytest.approx(out["silent_rate"].item(), abs=1e-12)


def test_another_table_is_read_by_the_columns_named(tmp_path: Path) -> None:
    """A table of another layout: its ids and rewards as text (which reads as numbers), no step column."""
    rows = [[f"q{i}", f"u{i}", "1" if (i + j) % 3 == 0 else "0"] for i in range(5) for j in range(6)]
    path = write_media(tmp_path / "files", "rollouts", 40, ["question_id", "uid", "score"], rows)
    out, _ = csv(
        "silent", path, "--from", "wandb-table", "--prompt-col", "question_id", "--reward-col", "score",
        "--group-col", "uid", "--G", "2",
    )  # fmt: skip
    expected = [(sum(1 for j in range(6) if (i + j) % 3 == 0), 6) for i in range(5)]
    assert silent(expected, 2) == pytest.approx(out["silent_rate"].item(), abs=1e-12)


def test_without_a_step_column_the_step_is_the_history_step(tmp_path: Path) -> None:
    rows = [[f"q{i}", (i + j) % 2] for i in range(3) for j in range(4)]
    for history in (5, 9):
        write_media(tmp_path / "files", "rollouts", history, ["question", "score"], rows)
    out, err = csv(
        "silent", tmp_path, "--from", "wandb-table", "--prompt-col", "question", "--reward-col", "score",
        "--by", "step",
    )  # fmt: skip
    assert [5, 9] == sorted(out["step"].to_list())
    assert "W&B's counter" in err


def test_without_a_step_column_the_step_is_the_artifact_version(tmp_path: Path) -> None:
    rows = [[f"q{i}", (i + j) % 2] for i in range(3) for j in range(4)]
    for version in (0, 3):
        write_artifact(tmp_path, "xyz", "rollouts", version, ["question", "score"], rows)
    out, _ = csv(
        "silent", tmp_path, "--from", "wandb-table", "--prompt-col", "question", "--reward-col", "score",
        "--by", "step",
    )  # fmt: skip
    assert [0, 3] == sorted(out["step"].to_list())


def test_log_unique_prompts_is_named(tmp_path: Path) -> None:
    """TRL's log_unique_prompts=True: df.drop_duplicates(subset=["prompt"]) keeps one completion a prompt."""
    for version, step in enumerate(STEPS):
        seen: set[object] = set()
        rows = [r for r in trl_rows(step) if not (r[1] in seen or seen.add(r[1]))]
        write_artifact(tmp_path, "abc123", "completions", version, COLUMNS, rows)
    _, err = csv("silent", tmp_path, "--from", "wandb-table")
    assert "log_unique_prompts" in err


def test_another_kind_of_table_file_exits_1_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "joined.table.json"
    path.write_text(json.dumps({"_type": "joined-table", "columns": [], "data": []}))
    done = run_cli("silent", path, "--from", "wandb-table")
    assert 1 == done.returncode
    assert "'joined-table', not a table" in one_error_line(done.stderr)


@pytest.mark.parametrize("cells", [3, 6], ids=["shorter", "longer"])
def test_a_row_of_another_length_than_the_columns_exits_1_naming_it(tmp_path: Path, cells: int) -> None:
    rows = trl_rows(10)
    rows[5] = (rows[5] * 2)[:cells]
    path = write_media(tmp_path, "completions", 1, COLUMNS, rows)
    done = run_cli("silent", path, "--from", "wandb-table")
    assert 1 == done.returncode
    assert "at rows 6" in one_error_line(done.stderr)


def test_a_table_of_a_steps_first_samples_counts_its_short_groups(tmp_path: Path) -> None:
    """A step's first 16 samples, round-robin over 8 groups of 8 (sample i in group i mod 8): groups of 2."""
    rows = [[i % 8, f"task {i % 8}", f"reply {i}", (i // 8 + i) % 2] for i in range(16)]
    path = write_media(
        tmp_path, "rollout/completions", 3, ["group_index", "prompt", "response", "reward"], rows
    )
    out, _ = csv(
        "check", path, "--from", "wandb-table", "--prompt-col", "prompt", "--reward-col", "reward",
        "--group-col", "group_index", "--rollouts-per-group", "8",
    )  # fmt: skip
    found = out.filter(pl.col("check") == "group_size").row(0, named=True)
    sizes = {g: sum(1 for r in rows if r[0] == g) for g in range(8)}
    assert ("warn", 8, 8) == (found["status"], found["affected"], found["total"])
    assert f"sizes 2 ({sum(1 for s in sizes.values() if s == 2)})" in str(found["detail"])


@pytest.mark.parametrize("form", ["media", "artifacts"])
def test_a_table_read_without_from_names_it(form: str, request: pytest.FixtureRequest) -> None:
    path = next(request.getfixturevalue(form).rglob("*.table.json"))
    done = run_in("silent", path)
    assert 1 == done.returncode
    assert "a W&B table (keys columns, data): read it with --from wandb-table" in one_error_line(done.stderr)

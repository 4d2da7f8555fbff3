"""Group checks on rollout logs (sigmatool.load.integrity): logs whose groups break the way real logs do,
each counted here from the rows written, and the options that mend them (--prompt-mask, --rollout-col,
--rollouts-per-group, --group-col, a repeated --prompt-col)."""

from __future__ import annotations

import io
import math
import re
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import ROOT, one_error_line, run_cli, run_in
from tests.integrity_fixtures import (
    GROUPS,
    PROMPTS,
    ROLLOUTS,
    N,
    write_clean_log,
    write_path_log,
    write_short_log,
    write_tasks_log,
    write_turns_log,
)

# The workspace path the path log's prompts hold: /tmp/ws/rollout-<8 hex>/repo.
PATH = re.compile(r"/tmp/ws/rollout-[0-9a-f]{8}/repo")


def silent(counts: list[tuple[int, int]], G: int) -> float:
    """The mean over prompts of the unbiased [C(k, G) + C(n − k, G)] / C(n, G), exactly."""
    total = sum(Fraction(math.comb(k, G) + math.comb(n - k, G), math.comb(n, G)) for k, n in counts)
    return float(total / len(counts))


def csv(*args: object) -> tuple[pl.DataFrame, str]:
    done = run_in(*args, "--format", "csv")
    assert 0 == done.returncode, done.stderr
    return pl.read_csv(io.StringIO(done.stdout)), done.stderr


@pytest.fixture(scope="module")
def path_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, tuple[int, int]]]:
    return write_path_log(tmp_path_factory.mktemp("path"))


def test_a_per_rollout_path_counts_every_rollout_a_singleton(path_log: tuple[Path, dict]) -> None:
    path, _ = path_log
    _, err = csv("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward")
    assert f"{PROMPTS * ROLLOUTS} of {PROMPTS * ROLLOUTS} groups hold one rollout" in err


def test_a_per_rollout_path_names_the_mask_that_merges_it(path_log: tuple[Path, dict]) -> None:
    path, _ = path_log
    _, err = csv("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward")
    assert f"merges their {PROMPTS * ROLLOUTS} texts into {PROMPTS} prompts" in err
    assert "--prompt-mask '" in err


def test_a_per_rollout_path_is_never_told_to_sample_more(path_log: tuple[Path, dict]) -> None:
    path, _ = path_log
    _, err = csv("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward")
    assert "sample several" not in err


def test_the_suggested_mask_keys_the_sixteen_prompts_exactly(path_log: tuple[Path, dict]) -> None:
    path, truth = path_log
    _, err = csv("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward")
    mask = re.search(r"--prompt-mask '([^']+)'", err)
    assert mask is not None
    out, err = csv(
        "silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward", "--G", "4",
        "--prompt-mask", mask.group(1),
    )  # fmt: skip
    assert PROMPTS == out["prompts"].item()
    assert silent(list(truth.values()), 4) == pytest.approx(out["silent_rate"].item(), abs=1e-12)
    assert "hold one rollout" not in err


def test_a_mask_gives_each_prompt_its_pass_rate(path_log: tuple[Path, dict]) -> None:
    path, truth = path_log
    out, _ = csv(
        "silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward", "--per-prompt",
        "--prompt-mask", PATH.pattern,
    )  # fmt: skip
    assert sorted(k / n for k, n in truth.values()) == pytest.approx(sorted(out["p"].to_list()), abs=1e-15)


# ------------------------------------------------------------------------------- turns sharing one uid


@pytest.fixture(scope="module")
def turns_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, tuple[int, int]], int]:
    return write_turns_log(tmp_path_factory.mktemp("turns"))


def test_turns_under_one_uid_are_counted_as_mixed_groups(turns_log: tuple[Path, dict, int]) -> None:
    path, _, mixed = turns_log
    assert 42 == mixed
    _, err = csv("silent", path, "--rollouts", "--prompt-col", "uid", "--reward-col", "reward")
    assert f"{mixed} of {GROUPS} groups hold several prompt texts" in err
    assert "--rollout-col" in err


def test_turns_under_one_uid_are_not_told_to_key_by_the_turn_text(turns_log: tuple[Path, dict, int]) -> None:
    path, _, _ = turns_log
    _, err = csv("silent", path, "--rollouts", "--prompt-col", "uid", "--reward-col", "reward")
    assert "--prompt-col prompt" not in err


def test_rollout_col_gives_groups_of_the_sampled_size(turns_log: tuple[Path, dict, int]) -> None:
    path, truth, _ = turns_log
    out, err = csv(
        "silent", path, "--rollouts", "--prompt-col", "uid", "--reward-col", "reward", "--G", "2",
        "--rollout-col", "rollout_id", "--rollouts-per-group", str(N),
    )  # fmt: skip
    assert GROUPS == out["prompts"].item()
    assert silent(list(truth.values()), 2) == pytest.approx(out["silent_rate"].item(), abs=1e-12)
    assert "groups hold" not in err


def test_without_rollout_col_the_group_sizes_are_counted_as_read(turns_log: tuple[Path, dict, int]) -> None:
    path, _, mixed = turns_log
    _, err = csv(
        "silent", path, "--rollouts", "--prompt-col", "uid", "--reward-col", "reward",
        "--rollouts-per-group", str(N),
    )  # fmt: skip
    assert f"{mixed} of {GROUPS} groups hold other than n = {N} rollouts" in err


# ------------------------------------------------------------------------------------------ short groups


@pytest.fixture(scope="module")
def short_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, int]]:
    return write_short_log(tmp_path_factory.mktemp("short"))


def test_short_groups_are_counted_against_rollouts_per_group(short_log: tuple[Path, dict[int, int]]) -> None:
    path, sizes = short_log
    short = defaultdict(int)
    for size in sizes.values():
        if size != 8:
            short[size] += 1
    _, err = csv(
        "silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
        "--group-col", "group_index", "--rollouts-per-group", "8",
    )  # fmt: skip
    shown = ", ".join(f"{s} ({c})" for s, c in sorted(short.items(), key=lambda i: (-i[1], i[0])))
    assert (
        f"{len([s for s in sizes.values() if s != 8])} of 12 groups hold other than n = 8 rollouts (sizes {shown})"
        in err
    )


def test_short_groups_pass_without_a_size_to_compare(short_log: tuple[Path, dict[int, int]]) -> None:
    path, _ = short_log
    _, err = csv("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward")
    assert "other than n" not in err


# ------------------------------------------------------------------------------- ids reused across tasks


@pytest.fixture(scope="module")
def tasks_log(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[tuple[str, int], tuple[int, int]]]:
    return write_tasks_log(tmp_path_factory.mktemp("tasks"))


def test_one_prompt_col_keys_by_the_id_alone(tasks_log: tuple[Path, dict]) -> None:
    path, _ = tasks_log
    out, _ = csv("silent", path, "--rollouts", "--prompt-col", "example_id", "--reward-col", "reward")
    assert 8 == out["prompts"].item()


def test_two_prompt_cols_key_by_task_and_id(tasks_log: tuple[Path, dict]) -> None:
    path, truth = tasks_log
    out, _ = csv(
        "silent", path, "--rollouts", "--prompt-col", "task", "--prompt-col", "example_id",
        "--reward-col", "reward", "--G", "2",
    )  # fmt: skip
    assert len(truth) == out["prompts"].item()
    assert silent(list(truth.values()), 2) == pytest.approx(out["silent_rate"].item(), abs=1e-12)


# ------------------------------------------------------------------------------------------- a clean log


def test_a_clean_log_gets_no_group_note(tmp_path: Path) -> None:
    path = write_clean_log(tmp_path)
    _, err = csv(
        "silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
        "--group-col", "group_index", "--rollouts-per-group", "8",
    )  # fmt: skip
    assert "groups hold" not in err
    assert "prompt keys" not in err


def test_a_prompt_mask_that_is_no_pattern_exits_2_with_one_line(tmp_path: Path) -> None:
    done = run_cli("silent", write_clean_log(tmp_path), "--rollouts", "--prompt-col", "prompt",
                   "--reward-col", "reward", "--prompt-mask", "rollout-[")  # fmt: skip
    assert 2 == done.returncode
    assert "--prompt-mask 'rollout-[': not a regular expression" in one_error_line(done.stderr)


def test_group_options_need_a_log(tmp_path: Path) -> None:
    done = run_in("silent", ROOT / "sample_data" / "toy_pass_rates.csv", "--group-col", "uid")
    assert 2 == done.returncode
    assert "--group-col: these read a rollout log" in one_error_line(done.stderr)


def test_track_notes_mixed_groups_within_each_step(turns_log: tuple[Path, dict, int], tmp_path: Path) -> None:
    path, _, mixed = turns_log
    steps = tmp_path / "steps.jsonl"
    pl.read_ndjson(path).with_columns(pl.lit(1).alias("step")).write_ndjson(steps)
    done = run_in("track", steps, "--rollouts", "--prompt-col", "uid", "--reward-col", "reward",
                  "--step-col", "step", "--format", "csv")  # fmt: skip
    assert f"{mixed} of {GROUPS} groups hold several prompt texts" in done.stderr


def test_track_counts_a_dumps_groups_against_rollouts_per_group() -> None:
    done = run_in("track", ROOT / "sample_data" / "example_run", "--from", "verl", "--rollouts-per-group", "8",
                  "--format", "csv")  # fmt: skip
    groups = sum(
        pl.read_ndjson(f).select(pl.struct("step", "uid").n_unique()).item()
        for f in sorted((ROOT / "sample_data" / "example_run").glob("*.jsonl"))
    )
    assert f"verl: {groups} of {groups} groups hold other than n = 8 rollouts" in done.stderr


def test_an_engine_refuses_what_needs_the_rows_here(tmp_path: Path) -> None:
    done = run_in("silent", write_clean_log(tmp_path), "--rollouts", "--prompt-col", "prompt", "--reward-col",
                  "reward", "--engine", "duckdb", "--rollout-col", "group_index")  # fmt: skip
    assert 2 == done.returncode
    assert "--rollout-col need the log's rows here" in one_error_line(done.stderr)

"""``sigmatool check``: a row per test, all ok on a clean log, and each trap of tests/integrity_fixtures.py
named with its count (counted here from the rows written)."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl

from sigmatool.check import CHECKS, COLUMNS
from tests.conftest import ROOT, run_cli, run_in
from tests.integrity_fixtures import (
    GROUPS,
    PROMPTS,
    ROLLOUTS,
    write_clean_log,
    write_path_log,
    write_short_log,
    write_tasks_log,
    write_turns_log,
)

LOG = ("--rollouts", "--prompt-col", "prompt", "--reward-col", "reward")


def checked(*args: object) -> pl.DataFrame:
    done = run_in("check", *args, "--format", "csv")
    assert 0 == done.returncode, done.stderr
    return pl.read_csv(io.StringIO(done.stdout))


def row(frame: pl.DataFrame, name: str) -> dict[str, object]:
    return frame.filter(pl.col("check") == name).row(0, named=True)


def test_check_has_a_row_per_test_in_order(tmp_path: Path) -> None:
    out = checked(write_clean_log(tmp_path), *LOG)
    assert list(CHECKS) == out["check"].to_list()
    assert list(COLUMNS) == out.columns


def test_a_clean_log_passes_every_check(tmp_path: Path) -> None:
    out = checked(write_clean_log(tmp_path), *LOG, "--group-col", "group_index", "--rollouts-per-group", "8")
    assert ["ok"] * len(CHECKS) == out["status"].to_list()


def test_a_clean_log_exits_0_under_strict(tmp_path: Path) -> None:
    done = run_cli("check", write_clean_log(tmp_path), *LOG, "--strict", "--format", "csv")
    assert 0 == done.returncode, done.stderr


def test_a_clean_log_counts_its_rows(tmp_path: Path) -> None:
    out = checked(write_clean_log(tmp_path), *LOG)
    assert 6 * 8 == row(out, "rows")["total"]


def test_a_trap_exits_1_under_strict(tmp_path: Path) -> None:
    path, _ = write_short_log(tmp_path)
    done = run_cli("check", path, *LOG, "--group-col", "group_index", "--rollouts-per-group", "8", "--strict")
    assert 1 == done.returncode


def test_a_trap_exits_0_without_strict(tmp_path: Path) -> None:
    path, _ = write_short_log(tmp_path)
    done = run_in("check", path, *LOG, "--group-col", "group_index", "--rollouts-per-group", "8")
    assert 0 == done.returncode


def test_a_per_rollout_path_fails_singleton_groups_with_its_count(tmp_path: Path) -> None:
    path, _ = write_path_log(tmp_path)
    found = row(checked(path, *LOG), "singleton_groups")
    assert ("fail", PROMPTS * ROLLOUTS, PROMPTS * ROLLOUTS) == (
        found["status"],
        found["affected"],
        found["total"],
    )


def test_a_per_rollout_path_names_the_mask(tmp_path: Path) -> None:
    path, _ = write_path_log(tmp_path)
    found = row(checked(path, *LOG), "singleton_groups")
    assert str(found["fix"]).startswith("--prompt-mask ")
    assert f"into {PROMPTS} prompts" in str(found["detail"])


def test_turns_under_one_uid_warn_mixed_groups_with_their_count(tmp_path: Path) -> None:
    path, _, mixed = write_turns_log(tmp_path)
    found = row(checked(path, "--rollouts", "--prompt-col", "uid", "--reward-col", "reward"), "mixed_groups")
    assert ("warn", mixed, GROUPS) == (found["status"], found["affected"], found["total"])
    assert "--rollout-col" in str(found["fix"])


def test_short_groups_warn_group_size_with_their_count(tmp_path: Path) -> None:
    path, sizes = write_short_log(tmp_path)
    out = checked(path, *LOG, "--group-col", "group_index", "--rollouts-per-group", "8")
    found = row(out, "group_size")
    short = sum(1 for s in sizes.values() if s != 8)
    assert ("warn", short, len(sizes)) == (found["status"], found["affected"], found["total"])


def test_ids_reused_across_tasks_warn_shared_keys_with_their_count(tmp_path: Path) -> None:
    path, truth = write_tasks_log(tmp_path)
    out = checked(path, "--rollouts", "--prompt-col", "example_id", "--reward-col", "reward")
    found = row(out, "shared_keys")
    ids = {i for _, i in truth}
    assert ("warn", len(ids), len(ids)) == (found["status"], found["affected"], found["total"])


def test_a_composite_key_clears_shared_keys(tmp_path: Path) -> None:
    path, truth = write_tasks_log(tmp_path)
    out = checked(
        path, "--rollouts", "--prompt-col", "task", "--prompt-col", "example_id", "--reward-col", "reward"
    )
    found = row(out, "shared_keys")
    assert ("ok", len(truth)) == (found["status"], found["total"])


def test_the_headline_says_every_check_passes(tmp_path: Path) -> None:
    done = run_in("check", write_clean_log(tmp_path), *LOG, "--format", "table")
    assert done.stdout.startswith(f"All {len(CHECKS)} checks pass")


def test_the_headline_names_the_checks_that_did_not_pass(tmp_path: Path) -> None:
    path, _ = write_path_log(tmp_path)
    done = run_in("check", path, *LOG, "--format", "table")
    assert "singleton_groups failed" in done.stdout.splitlines()[0]


def test_a_table_of_pass_rates_has_no_groups_to_check() -> None:
    path = ROOT / "sample_data" / "toy_pass_rates.csv"
    out = checked(path)
    assert ["ok"] * len(CHECKS) == out["status"].to_list()
    assert pl.read_csv(path).height == row(out, "rows")["total"]

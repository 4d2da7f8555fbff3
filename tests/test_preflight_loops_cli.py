"""``preflight``'s flags for open-instruct's, OpenRLHF's, prime-rl's and Pilot-Commit's loops and for
retirement: each bad value one line and exit 2 (through a real process), and each flag's reach."""

from __future__ import annotations

import pytest

from tests.conftest import BIGMATH, csv_of, invoke, one_error_line, run_cli


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--keep", "0.8,0.2"], "--keep"),
        (["--retire", "1.5"], "--retire"),
        (["--pilot", "0"], "--pilot"),
        (["--recheck", "2"], "--recheck"),
        (["--trainer", "open-instruct", "--n", "1"], "n = 1"),
    ],
)
def test_a_bad_loop_setting_is_one_line_and_exit_2(args: list[str], named: str) -> None:
    done = run_cli("preflight", BIGMATH, "--samples", "64", *args)
    assert done.returncode == 2
    assert named in one_error_line(done.stderr)
    assert "Traceback" not in done.stderr


def _row(*args: object) -> dict[str, object]:
    return csv_of(invoke("preflight", BIGMATH, "--samples", "64", "--format", "csv", *args)).row(
        0, named=True
    )


def test_refill_makes_open_instruct_read_prompts_until_the_step_is_full() -> None:
    plain = _row("--trainer", "open-instruct", "--n", "8", "--train-batch-size", "64")
    refilled = _row("--trainer", "open-instruct", "--n", "8", "--train-batch-size", "64", "--refill")
    assert refilled["rollouts_trained"] == 8 * 64
    assert float(plain["rollouts_trained"]) < 8 * 64  # type: ignore[arg-type]


def test_difficulty_pools_give_a_column_per_pool() -> None:
    row = _row(
        "--difficulty-pools", "hard:0.25:0.2,normal:0.75:1,easy:1:0.2", "--n", "4", "--train-batch-size", "16"
    )
    assert {"pool_hard", "pool_normal", "pool_easy"} <= set(row)


@pytest.mark.parametrize(
    ("args", "column", "value"),
    [
        (["--pilot", "16"], "pilot_n", 16),
        (["--keep", "0.125,0.75"], "keep_lo", 0.125),
        (["--commit", "48"], "n", 48),
    ],
)
def test_pilot_flags_imply_pilot_commit_and_set_its_loop(args: list[str], column: str, value: float) -> None:
    row = _row(*args, "--train-batch-size", "64")
    assert row[column] == value
    assert row["p_crash_first_step"] is not None

"""One rule for every cell: the same question gets the same number, whatever else is asked (docs/prior.md).

Each (prompt, G) cell is valued on its own: a rate with no counts by its definition, counts k of n by the
unbiased estimate where G ≤ n, by the NPMLE prior of the prompt's --by group beyond n where the group
identifies one, and otherwise not at all (the bounds are printed in its place). The tests below hold the
invariances that follow (one G alone equals the same G in a list; a --by group equals its rows alone; a
--col among several equals that column alone; one more prompt moves a mean by at most 1/N) and each case of
a real file that used to get a number it should not have, through the CLI, in CSV as in the table.
"""

from __future__ import annotations

import io
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.conftest import BIGMATH, SAMPLE, csv_of, headline, invoke, one_error_line, run_cli

EIGHT = SAMPLE / "bigmath_8_samples.csv"
COUNTS = ("--k-col", "k", "--n-col", "n")


def _csv(*args: object) -> pl.DataFrame:
    return csv_of(invoke(*args, "--format", "csv"))


def _table(*args: object) -> str:
    result = invoke(*args, "--format", "table")
    assert 0 == result.exit_code, result.stderr
    return " ".join(headline(result.stdout).split())


# --------------------------------------------------------------------------------------------- invariances


@pytest.mark.parametrize("command", ["silent", "budget"])
def test_one_g_alone_equals_the_same_g_in_a_list(command: str) -> None:
    alone = _csv(command, BIGMATH, "--G", "8")
    listed = _csv(command, BIGMATH, "--G", "8,128")
    assert alone.equals(listed.filter(pl.col("G") == 8))


def test_the_plans_uniform_baseline_is_the_same_when_a_size_is_added() -> None:
    args = ("--budget", "8", "--estimator", "auto")
    fewer = _csv("plan", BIGMATH, *args, "--sizes", "4,8,16,32").filter(pl.col("strategy") == "uniform")
    more = _csv("plan", BIGMATH, *args, "--sizes", "4,8,16,32,128").filter(pl.col("strategy") == "uniform")
    assert fewer.equals(more)


def test_the_table_at_8_says_the_same_with_128_asked_too() -> None:
    assert "43.1% at G=8 [unbiased]" in _table("silent", BIGMATH, "--G", "8,128")
    assert _table("silent", BIGMATH, "--G", "8").startswith("43.1% of groups are silent at G=8 [unbiased]")


def _twenty_thousand(folder: Path, extra: bool) -> Path:
    """20,000 Big-Math prompts (k of 64) drawn with a fixed seed, and maybe one prompt answered once."""
    k = np.round(pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy() * 64).astype(np.int64)
    k = np.random.default_rng(5).choice(k, 20_000, replace=False)
    frame = pl.DataFrame({"k": k, "n": np.full(k.size, 64)})
    if extra:
        frame = pl.concat([frame, pl.DataFrame({"k": [1], "n": [1]})])
    path = folder / f"twenty{'_plus' if extra else ''}.csv"
    frame.write_csv(path)
    return path


@pytest.fixture(scope="module")
def one_more(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, pl.DataFrame]:
    folder = tmp_path_factory.mktemp("one_more")
    args = ("--G", "4,8,64,128", *COUNTS)
    return _csv("silent", _twenty_thousand(folder, False), *args), _csv(
        "silent", _twenty_thousand(folder, True), *args
    )


@pytest.mark.parametrize("column", ["silent_rate", "all_right_rate", "all_wrong_rate"])
def test_one_prompt_answered_once_moves_each_rate_by_at_most_one_in_n(
    one_more: tuple[pl.DataFrame, pl.DataFrame], column: str
) -> None:
    before, after = one_more
    moved = (after[column] - before[column]).abs().to_list()
    assert all(m <= 1 / 20_001 for m in moved), moved


def test_one_prompt_answered_once_leaves_the_always_silent_share_near(
    one_more: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    before, after = one_more
    assert (after["always_silent_share"] - before["always_silent_share"]).abs().max() <= 1 / 20_001


@pytest.mark.parametrize("command", ["silent", "budget"])
def test_a_by_group_equals_its_rows_alone(command: str, tmp_path: Path) -> None:
    eight = pl.read_csv(EIGHT)
    both = pl.concat(
        [eight.with_columns(pl.lit("a").alias("part")), eight.head(6).with_columns(pl.lit("b").alias("part"))]
    )
    both.write_csv(tmp_path / "both.csv")
    eight.write_csv(tmp_path / "alone.csv")
    args = (*COUNTS, "--weight-col", "count", "--G", "4,16")
    grouped = _csv(command, tmp_path / "both.csv", *args, "--by", "part")
    alone = _csv(command, tmp_path / "alone.csv", *args)
    # The same numbers, to the last digit or two: several groups' posteriors are summed in one matrix product.
    assert_frame_equal(alone, grouped.filter(pl.col("part") == "a").drop("part"), rel_tol=1e-13, abs_tol=0.0)


def test_a_column_among_several_equals_that_column_alone(tmp_path: Path) -> None:
    k = pl.read_csv(EIGHT)
    rows = k.select(pl.col("k").repeat_by(pl.col("count")).explode())["k"].to_numpy()[::50]
    other = np.random.default_rng(1).integers(0, 9, rows.size)
    pl.DataFrame({"a_rate": rows / 8, "b_rate": other / 8}).write_csv(tmp_path / "two.csv")
    together = _csv("silent", tmp_path / "two.csv", "--col", "a_rate", "--col", "b_rate", "--G", "4,16")
    alone = _csv("silent", tmp_path / "two.csv", "--col", "a_rate", "--G", "4,16")
    assert_frame_equal(
        alone, together.filter(pl.col("column") == "a_rate").drop("column"), rel_tol=1e-13, abs_tol=0.0
    )


# --------------------------------------------------------------------------------------------- the cases


def test_two_prompts_are_not_identified_beyond_their_samples(tmp_path: Path) -> None:
    (tmp_path / "two.csv").write_text("k,n\n1,1\n2,4\n")
    row = _csv("silent", tmp_path / "two.csv", *COUNTS, "--G", "8").row(0, named=True)
    assert "not identified" == row["estimator"]
    assert row["silent_rate"] is None
    assert 0.0 <= row["silent_rate_lo"] < row["silent_rate_hi"] <= 1.0
    assert _table("silent", tmp_path / "two.csv", *COUNTS, "--G", "8").startswith(
        "Silent groups: not identified"
    )


@pytest.fixture(scope="module")
def answered_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100 prompts answered once each, as an eval harness writes them: one row per rollout."""
    path = tmp_path_factory.mktemp("once") / "results.jsonl"
    rewards = (np.random.default_rng(3).random(100) < 0.45).astype(int)
    pl.DataFrame({"example_id": np.arange(100), "reward": rewards}).write_ndjson(path)
    return path


def test_prompts_answered_once_are_not_identified_and_the_note_says_why(answered_once: Path) -> None:
    args = ("silent", answered_once, "--rollouts", "--prompt-col", "example_id", "--reward-col", "reward")
    result = invoke(*args, "--G", "8", "--format", "csv")
    row = pl.read_csv(io.StringIO(result.stdout)).row(0, named=True)
    assert row["silent_rate"] is None
    assert "one sample per prompt tells only the mean of p" in result.stderr
    assert "plug-in" not in result.stderr


def test_prompts_answered_once_give_the_range_the_data_allow(answered_once: Path) -> None:
    args = ("--rollouts", "--prompt-col", "example_id", "--reward-col", "reward", "--G", "8")
    said = _table("silent", answered_once, *args)
    assert said.startswith("Silent groups: not identified at G=8 (the data allow ")


@pytest.fixture(scope="module")
def broken_grader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("zero") / "log.csv"
    pl.DataFrame({"example_id": np.repeat(np.arange(40), 8), "reward": np.zeros(320, dtype=int)}).write_csv(
        path
    )
    return path


def test_a_log_whose_every_reward_is_0_needs_infinite_draws(broken_grader: Path) -> None:
    args = ("--rollouts", "--prompt-col", "example_id", "--reward-col", "reward", "--G", "8")
    row = _csv("silent", broken_grader, *args).row(0, named=True)
    assert 1.0 == row["silent_rate"]
    assert row["dapo_draws_per_group"] is None  # infinite: no group is ever usable


def test_a_log_whose_every_reward_is_0_names_the_grader(broken_grader: Path) -> None:
    args = (
        "--rollouts",
        "--prompt-col",
        "example_id",
        "--reward-col",
        "reward",
        "--G",
        "8",
        "--format",
        "csv",
    )
    assert "no answer was ever right" in invoke("silent", broken_grader, *args).stderr
    assert "grader" in invoke("budget", broken_grader, *args).stderr


def test_one_repeated_rate_is_read_as_a_rate_not_a_grid(tmp_path: Path) -> None:
    pl.DataFrame({"pass_rate": np.full(1_000_000, 0.25)}).write_parquet(tmp_path / "q.parquet")
    result = invoke("silent", tmp_path / "q.parquet", "--G", "8", "--format", "csv")
    rate = pl.read_csv(io.StringIO(result.stdout))["silent_rate"][0]
    assert float(Fraction(1, 4) ** 8 + Fraction(3, 4) ** 8) == pytest.approx(rate, rel=1e-14)
    assert "too few to read them as counts" in result.stderr


@pytest.fixture(scope="module")
def run_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 2 steps, 5,000 prompts a step in groups of 8, each prompt's p fixed (Beta(0.6, 0.8))."""
    rng = np.random.default_rng(11)
    prompts, steps, G = 5000, 2, 8
    p = rng.beta(0.6, 0.8, prompts)
    rewards = rng.random((steps, prompts, G)) < p[None, :, None]
    frame = pl.DataFrame(
        {
            "step": np.repeat(np.arange(steps), prompts * G),
            "prompt": np.tile(np.repeat(np.arange(prompts), G), steps),
            "reward": rewards.ravel().astype(int),
        }
    )
    path = tmp_path_factory.mktemp("run") / "run.csv"
    frame.write_csv(path)
    return path


def test_counts_at_g_within_n_agree_with_the_measured_silent_share(run_log: Path) -> None:
    frame = pl.read_csv(run_log)
    groups = frame.group_by("step", "prompt").agg(pl.col("reward").sum().alias("k"))
    measured = float(((groups["k"] == 0) | (groups["k"] == 8)).mean())  # type: ignore[arg-type]
    se = math.sqrt(measured * (1 - measured) / groups.height)
    args = ("--rollouts", "--prompt-col", "prompt", "--reward-col", "reward", "--G", "8")
    default = _csv("silent", run_log, *args)["silent_rate"][0]
    plugin = _csv("silent", run_log, *args, "--estimator", "plugin")["silent_rate"][0]
    assert abs(default - measured) < 4 * se
    assert plugin - measured > 4 * se  # p̂^G + (1 − p̂)^G overstates it from 16 samples a prompt


def test_an_estimate_outside_the_bounds_is_said_on_stderr_in_every_format() -> None:
    args = (
        "silent",
        EIGHT,
        *COUNTS,
        "--weight-col",
        "count",
        "--G",
        "16",
        "--estimator",
        "plugin",
        "--bounds",
    )
    result = invoke(*args, "--format", "csv")
    assert "the plug-in contradicts the data" in result.stderr


def test_a_rollout_log_run_bare_is_offered_rollouts(broken_grader: Path) -> None:
    result = invoke("silent", broken_grader)
    assert 1 == result.exit_code
    assert "--rollouts --prompt-col example_id --reward-col reward" in result.stderr


def test_a_rollout_log_read_as_rates_is_refused(broken_grader: Path) -> None:
    result = invoke("silent", broken_grader, "--col", "reward")
    assert 2 == result.exit_code
    assert "--rollouts --prompt-col example_id --reward-col reward" in result.stderr


def test_the_offered_route_reads_the_log(broken_grader: Path) -> None:
    offered = invoke("silent", broken_grader).stderr.split("read it with ")[1].split()
    assert 0 == invoke("silent", broken_grader, *offered, "--format", "csv").exit_code


# --------------------------------------------------------------------------------------------- refusals, in a real process


def test_a_rollout_log_read_as_rates_is_one_line_and_exit_2(broken_grader: Path) -> None:
    done = run_cli("silent", broken_grader, "--col", "reward")
    assert 2 == done.returncode
    assert "--rollouts --prompt-col example_id --reward-col reward" in one_error_line(done.stderr)
    assert "" == done.stdout


def test_a_plan_beyond_what_the_data_identify_is_one_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "two.csv").write_text("k,n\n1,1\n2,4\n")
    done = run_cli("plan", tmp_path / "two.csv", *COUNTS, "--budget", "8")
    assert 1 == done.returncode
    assert "not identified" in one_error_line(done.stderr)
    assert "" == done.stdout

"""`sigmatool plan`: the summary on Big-Math, the per-prompt rows read back, --by, and every bad input class."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool import kernels
from sigmatool.plan.export import ADDED_COLUMNS
from tests.conftest import BIGMATH, csv_of, headline, invoke

BIGMATH_PROMPTS = pl.scan_parquet(BIGMATH).select(pl.len()).collect().item()


@pytest.fixture(scope="module")
def bigmath_summary() -> pl.DataFrame:
    return csv_of(invoke("plan", BIGMATH, "--budget", "8", "--sizes", "4,8,16,32", "--format", "csv"))


def row(summary: pl.DataFrame, strategy: str) -> dict[str, object]:
    return summary.filter(pl.col("strategy") == strategy).row(0, named=True)


@pytest.mark.parametrize("strategy", ["uniform", "uniform_best", "uniform_dropped", "uniform_dropped_best"])
def test_on_big_math_the_plan_scores_at_least_every_uniform_size(
    bigmath_summary: pl.DataFrame, strategy: str
) -> None:
    assert row(bigmath_summary, "plan")["objective"] >= row(bigmath_summary, strategy)["objective"]


def test_on_big_math_the_budget_is_eight_rollouts_per_prompt(bigmath_summary: pl.DataFrame) -> None:
    assert 8 * BIGMATH_PROMPTS == row(bigmath_summary, "plan")["budget"]


def test_on_big_math_the_plan_stays_within_the_budget(bigmath_summary: pl.DataFrame) -> None:
    assert 8 * BIGMATH_PROMPTS >= row(bigmath_summary, "plan")["rollouts_used"]


def test_uniform_g8_objective_is_the_unbiased_kernels_sum_over_the_input(
    bigmath_summary: pl.DataFrame,
) -> None:
    # 64 samples per prompt: at G = 8 each prompt's E[σ] is estimated without bias from its k of 64.
    k = np.round(pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy() * 64)
    expected = float(np.sum(kernels.expected_sigma_unbiased(k, 64, 8)))
    assert expected == pytest.approx(row(bigmath_summary, "uniform")["objective"], rel=1e-9)


def test_plan_gain_is_the_plan_over_the_strategy(bigmath_summary: pl.DataFrame) -> None:
    best = row(bigmath_summary, "uniform_best")
    expected = row(bigmath_summary, "plan")["objective"] / best["objective"] - 1  # type: ignore[operator]
    assert expected == pytest.approx(best["plan_gain"], rel=1e-12)


def test_the_table_headline_says_the_gain_over_the_best_uniform_size() -> None:
    result = invoke("plan", BIGMATH, "--budget", "8", "--format", "table")
    assert "against the best uniform G (8)" in headline(result.stdout)


def test_the_table_reads_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke("plan", BIGMATH, "--budget", "8", "--format", "table")
    assert 80 >= max(len(line) for line in result.stdout.splitlines())


def test_distribution_rows_add_up_to_every_prompt_for_each_strategy() -> None:
    out = csv_of(invoke("plan", BIGMATH, "--distribution", "--format", "csv"))
    totals = out.group_by("strategy").agg(pl.col("prompts").sum())["prompts"].unique().to_list()
    assert [BIGMATH_PROMPTS] == totals


# --------------------------------------------------------------------------------------------- per prompt


def user_dataset(n: int = 400, seed: int = 4) -> pl.DataFrame:
    """A dataset as a user has it: prompt text, a shuffled id, a nested column, a rate with nulls, k/16."""
    rng = np.random.default_rng(seed)
    rates = (rng.integers(0, 17, size=n) / 16).tolist()
    return pl.DataFrame(
        {
            "id": (rng.permutation(n) * 7 + 3).tolist(),
            "prompt": [f'What is {i} + {i}?\nAnswer with a number, "quoted".' for i in range(n)],
            "solve_rate": [None if i % 37 == 0 else r for i, r in enumerate(rates)],
            "tags": [[f"t{i % 3}", "math"] for i in range(n)],
            "domain": ["algebra" if i % 3 else "geometry" for i in range(n)],
        }
    )


def test_per_prompt_parquet_reads_back_as_the_input_plus_the_plan_columns(tmp_path: Path) -> None:
    data = user_dataset()
    data.write_parquet(tmp_path / "prompts.parquet")
    out = tmp_path / "plan.parquet"
    result = invoke("plan", tmp_path / "prompts.parquet", "--per-prompt", "--id-col", "id", "-o", out)
    assert 0 == result.exit_code, result.stderr
    back = pl.read_parquet(out)
    assert [*data.columns, *ADDED_COLUMNS] == back.columns
    assert data.equals(back.select(data.columns))


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_per_prompt_text_formats_keep_every_input_column(tmp_path: Path, fmt: str) -> None:
    data = user_dataset().drop("tags")  # CSV has no lists
    data.write_csv(tmp_path / "prompts.csv")
    out = tmp_path / f"plan.{fmt}"
    result = invoke("plan", tmp_path / "prompts.csv", "--per-prompt", "--format", fmt, "-o", out)
    assert 0 == result.exit_code, result.stderr
    back = pl.read_csv(out) if fmt == "csv" else pl.read_ndjson(out)
    assert data.equals(back.select(data.columns))


def test_per_prompt_sizes_spend_what_the_summary_says(tmp_path: Path) -> None:
    data = user_dataset()
    data.write_parquet(tmp_path / "prompts.parquet")
    invoke("plan", tmp_path / "prompts.parquet", "--per-prompt", "-o", tmp_path / "plan.parquet")
    summary = csv_of(invoke("plan", tmp_path / "prompts.parquet", "--format", "csv"))
    assert (
        row(summary, "plan")["rollouts_used"]
        == pl.read_parquet(tmp_path / "plan.parquet")["group_size"].sum()
    )


def test_rows_without_a_pass_rate_get_no_size(tmp_path: Path) -> None:
    user_dataset().write_parquet(tmp_path / "prompts.parquet")
    invoke("plan", tmp_path / "prompts.parquet", "--per-prompt", "-o", tmp_path / "plan.parquet")
    back = pl.read_parquet(tmp_path / "plan.parquet").filter(pl.col("solve_rate").is_null())
    assert [None] * back.height == back["group_size"].to_list()
    assert [False] * back.height == back["keep"].to_list()


def test_per_prompt_expected_sigma_is_the_kernel_at_the_rows_size(tmp_path: Path) -> None:
    user_dataset().write_parquet(tmp_path / "prompts.parquet")
    out = tmp_path / "plan.parquet"
    invoke("plan", tmp_path / "prompts.parquet", "--per-prompt", "--estimator", "plugin", "-o", out)
    kept = pl.read_parquet(tmp_path / "plan.parquet").filter(pl.col("keep"))
    expected = kernels.expected_sigma(kept["solve_rate"].to_numpy(), kept["group_size"].to_numpy())
    np.testing.assert_allclose(expected, kept["expected_sigma"].to_numpy(), rtol=1e-12)


def test_split_values_give_the_larger_size_to_the_smallest_ids(tmp_path: Path) -> None:
    data = user_dataset(2000, seed=9).with_columns(pl.col("solve_rate").fill_null(0.5))
    data.write_parquet(tmp_path / "prompts.parquet")
    args = ("--budget", "7", "--sizes", "4,8,16", "--objective", "knapsack-rl", "--id-col", "id")
    result = invoke(
        "plan", tmp_path / "prompts.parquet", *args, "--per-prompt", "-o", tmp_path / "plan.parquet"
    )
    assert "get G =" in result.stderr
    back = pl.read_parquet(tmp_path / "plan.parquet")
    for _, part in back.group_by("p_used"):
        sizes = part.sort("id")["group_size"].to_list()
        assert sorted(sizes, reverse=True) == sizes


def test_by_plans_each_group_within_its_own_budget(tmp_path: Path) -> None:
    data = user_dataset(600)
    data.write_parquet(tmp_path / "prompts.parquet")
    out = csv_of(
        invoke("plan", tmp_path / "prompts.parquet", "--by", "domain", "--budget", "6", "--format", "csv")
    )
    plans = out.filter(pl.col("strategy") == "plan").sort("domain")
    groups = data.filter(pl.col("solve_rate").is_not_null()).group_by("domain").len().sort("domain")
    assert (6 * groups["len"]).to_list() == plans["budget"].to_list()
    assert (plans["rollouts_used"] <= plans["budget"]).all()


def test_by_per_prompt_rows_follow_their_groups_plan(tmp_path: Path) -> None:
    data = user_dataset(600)
    data.write_parquet(tmp_path / "prompts.parquet")
    args = ("--by", "domain", "--budget", "6", "--per-prompt", "-o", tmp_path / "plan.parquet")
    assert 0 == invoke("plan", tmp_path / "prompts.parquet", *args).exit_code
    used = (
        pl.read_parquet(tmp_path / "plan.parquet")
        .group_by("domain")
        .agg(pl.col("group_size").sum())
        .sort("domain")
    )
    summary = csv_of(
        invoke("plan", tmp_path / "prompts.parquet", "--by", "domain", "--budget", "6", "--format", "csv")
    )
    planned = summary.filter(pl.col("strategy") == "plan").sort("domain")
    assert planned["rollouts_used"].to_list() == used["group_size"].to_list()


def test_rollout_logs_give_one_row_per_prompt(write_csv) -> None:  # type: ignore[no-untyped-def]
    path = write_csv("q,r\na,1\na,0\nb,1\nb,1\nc,0\nc,1\nc,1\nc,0\n")
    out = csv_of(
        invoke(
            "plan",
            path,
            "--rollouts",
            "--prompt-col",
            "q",
            "--reward-col",
            "r",
            "--per-prompt",
            "--estimator",
            "plugin",  # three prompts identify no prior for the sizes beyond their n
            "--format",
            "csv",
        )
    )
    assert ["a", "b", "c"] == out["q"].to_list()
    assert [1, 2, 2] == out["k"].to_list()
    assert [2, 2, 4] == out["n"].to_list()


# --------------------------------------------------------------------------------------------- usage errors

BAD = {
    "zero budget": ["--budget", "0"],
    "negative budget": ["--budget", "-1"],
    "size zero": ["--sizes", "0,4"],
    "size one": ["--sizes", "1,8"],
    "not a size": ["--sizes", "abc"],
    "empty range": ["--sizes", "9..3"],
    "unknown objective": ["--objective", "nope"],
    "unknown method": ["--method", "ppo"],
    "unknown std": ["--std", "sample"],
    "bessel with drgrpo": ["--method", "drgrpo", "--std", "bessel"],
    "fidelity target out of range": ["--objective", "fidelity", "--fidelity", "1.5"],
    "fidelity target without the fidelity objective": ["--fidelity", "0.9"],
    "budget and total": ["--budget", "8", "--total-rollouts", "1000"],
    "zero total": ["--total-rollouts", "0"],
    "no size in range": ["--min-G", "64"],
    "min above max": ["--min-G", "16", "--max-G", "8"],
    "per prompt and distribution": ["--per-prompt", "--distribution"],
    "per prompt with weights": ["--per-prompt", "--weight-col", "w"],
    "total with by": ["--by", "domain", "--total-rollouts", "1000"],
    "keep all beyond the budget": ["--keep-all", "--budget", "2", "--sizes", "4,8"],
}


# Each bad input runs once, in a real process through `main`, and every fact below is read from that run: its
# exit code, its stderr, and whether polars or numpy had been imported when it was refused.
REFUSE = (
    "import sys; from sigmatool.cli import main; "
    "code = main(['plan', *sys.argv[1:]]); "
    "print('polars' in sys.modules, 'numpy' in sys.modules); sys.exit(code)"
)


@functools.cache
def refused(name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", REFUSE, str(BIGMATH), *BAD[name]],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_exits_2(name: str) -> None:
    assert 2 == refused(name).returncode


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_says_what_is_wrong_in_one_line(name: str) -> None:
    lines = [line for line in refused(name).stderr.splitlines() if not line.startswith("note:")]
    assert 1 == len(lines)
    assert lines[0].startswith("error: ")


@pytest.mark.parametrize("name", [n for n in BAD if n != "keep all beyond the budget"])
def test_a_bad_option_is_refused_before_polars_or_numpy_is_imported(name: str) -> None:
    assert "False False" == refused(name).stdout.strip()


def test_each_column_s_footer_names_its_column_and_its_own_rollouts(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    a = rng.binomial(8, rng.beta(0.5, 0.7, 400)) / 8
    b = rng.binomial(8, rng.beta(0.7, 0.5, 300)) / 8
    path = tmp_path / "two.csv"
    pl.DataFrame({"a": a, "b": np.concatenate([b, np.full(100, np.nan)])}).write_csv(path)
    args = (path, "--col", "a", "--col", "b", "--samples", "8", "--nan-missing", "--estimator", "plugin")
    table = invoke("plan", *args, "--format", "table")
    assert table.exit_code == 0, table.stderr
    summary = csv_of(invoke("plan", *args, "--format", "csv")).filter(pl.col("strategy") == "plan")
    for column in ("a", "b"):
        used = int(summary.filter(pl.col("column") == column)["rollouts_used"].item())
        assert f"{column}: plan's rollouts: {used:,} of the budget's" in table.stdout
        assert f"{column}: guarantee:" in table.stdout
    assert "\nguarantee:" not in table.stdout  # no line leaves its column unsaid

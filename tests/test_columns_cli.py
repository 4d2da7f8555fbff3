"""Several pass-rate columns through the CLI: ``--col A --col B`` (or a glob) is two runs in one.

The data: prompts drawn from the bundled Big-Math counts (k of 64), each given two independent draws of 8
of its 64 answers (two 8-sample columns, as a difficulty file holds one per model or temperature) and a
`src` column to group by. Each command's output for column A equals the same command run with `--col A`
alone; the per-prompt exports hold one row per prompt and column. A second file names its pass-rate
column differently, for the report.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import Result
from polars.testing import assert_frame_equal

from tests.conftest import BIGMATH_COUNTS, csv_of, invoke, one_error_line

SEED = 20261201
PROMPTS = 400
A, B = "llama8b_8a", "llama8b_8b"


def _draws(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Prompts drawn by the sample's prompt counts: their k of 64, and their n = 64."""
    counts = pl.read_csv(BIGMATH_COUNTS)
    weights = counts["count"].to_numpy().astype(np.float64)
    rows = rng.choice(counts.height, size=PROMPTS, p=weights / weights.sum())
    return counts["k"].to_numpy()[rows], counts["n"].to_numpy()[rows]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("columns")
    rng = np.random.default_rng(SEED)
    k, n = _draws(rng)
    eights = [rng.hypergeometric(k, n - k, 8) / 8 for _ in (A, B)]
    ids = [f"q{i}" for i in range(PROMPTS)]
    frame = pl.DataFrame({"id": ids, "src": rng.choice(["x", "y"], PROMPTS), A: eights[0], B: eights[1]})
    frame.write_parquet(path / "two.parquet")
    pl.DataFrame({"id": ids, "pass_rate": k / n}).write_csv(path / "other.csv")
    return path


@cache
def run(*args: str) -> Result:
    """One run of the CLI on the two-column file (each distinct command line once per module)."""
    return invoke(*args)


def two(folder: Path) -> str:
    return str(folder / "two.parquet")


COMMANDS = {
    "silent": ("silent", "--G", "4,16"),
    "budget": ("budget", "--G", "8"),
    "groupsize": ("groupsize",),
    "plan": ("plan", "--budget", "8"),
}


def _one(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    return frame.filter(pl.col("column") == column).drop("column")


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("column", [A, B])
def test_each_column_is_its_own_run(folder: Path, command: str, column: str) -> None:
    both = csv_of(run(*COMMANDS[command], two(folder), "--col", A, "--col", B, "-f", "csv"))
    alone = csv_of(run(*COMMANDS[command], two(folder), "--col", column, "-f", "csv"))
    assert_frame_equal(alone, _one(both, column), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("command", COMMANDS)
def test_the_column_key_comes_first(folder: Path, command: str) -> None:
    both = csv_of(run(*COMMANDS[command], two(folder), "--col", A, "--col", B, "-f", "csv"))
    assert "column" == both.columns[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_column_has_its_rows(folder: Path, command: str) -> None:
    both = csv_of(run(*COMMANDS[command], two(folder), "--col", A, "--col", B, "-f", "csv"))
    assert [A, B] == sorted(both["column"].unique().to_list())


def test_a_glob_is_the_columns_it_matches(folder: Path) -> None:
    repeated = run("silent", two(folder), "--col", A, "--col", B, "-f", "csv")
    assert repeated.stdout == run("silent", two(folder), "--col", "llama8b_*", "-f", "csv").stdout


def test_a_glob_of_one_column_still_names_it(folder: Path) -> None:
    assert [A] == csv_of(run("silent", two(folder), "--col", "*_8a", "-f", "csv"))[
        "column"
    ].unique().to_list()


def test_a_glob_that_matches_nothing_is_one_line_listing_the_columns(folder: Path) -> None:
    result = run("silent", two(folder), "--col", "qwen_*", "-f", "csv")
    assert 1 == result.exit_code
    assert f"id, src, {A}, {B}" in one_error_line(result.stderr)


@pytest.mark.parametrize("command", ["silent", "budget"])
def test_columns_compose_with_by(folder: Path, command: str) -> None:
    both = csv_of(run(*COMMANDS[command], two(folder), "--col", A, "--col", B, "--by", "src", "-f", "csv"))
    alone = csv_of(run(*COMMANDS[command], two(folder), "--col", B, "--by", "src", "-f", "csv"))
    assert_frame_equal(alone, _one(both, B), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


def test_by_column_is_refused_beside_several_columns(folder: Path) -> None:
    result = run("silent", two(folder), "--col", A, "--col", B, "--by", "column")
    assert 2 == result.exit_code
    assert "--by column" in one_error_line(result.stderr)


def test_the_table_compares_the_columns_row_by_row(folder: Path) -> None:
    table = run("silent", two(folder), "--col", A, "--col", B, "--G", "8", "-f", "table").stdout
    rows = [line.split("│")[0].strip() for line in table.splitlines() if "│" in line]
    assert [A, B] == rows


# --------------------------------------------------------------------------------------------- per prompt

PER_PROMPT = {
    "silent": ("silent", "--G", "4,16", "--per-prompt", "--id-col", "id"),
    "groupsize": ("groupsize", "--per-prompt", "--id-col", "id"),
    "plan": ("plan", "--budget", "8", "--per-prompt", "--id-col", "id"),
}
ROWS_PER_PROMPT = {"silent": 2, "groupsize": 1, "plan": 1}


@pytest.mark.parametrize("command", PER_PROMPT)
def test_the_per_prompt_export_has_a_row_per_prompt_and_column(folder: Path, command: str) -> None:
    both = csv_of(run(*PER_PROMPT[command], two(folder), "--col", A, "--col", B, "-f", "csv"))
    assert 2 * PROMPTS * ROWS_PER_PROMPT[command] == both.height


@pytest.mark.parametrize("command", PER_PROMPT)
@pytest.mark.parametrize("column", [A, B])
def test_the_per_prompt_export_of_a_column_is_its_own_run(folder: Path, command: str, column: str) -> None:
    both = csv_of(run(*PER_PROMPT[command], two(folder), "--col", A, "--col", B, "-f", "csv"))
    alone = csv_of(run(*PER_PROMPT[command], two(folder), "--col", column, "-f", "csv"))
    assert_frame_equal(alone, _one(both, column), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


# --------------------------------------------------------------------------------------------- other commands


def test_preflight_runs_one_loop_per_column(folder: Path) -> None:
    both = csv_of(run("preflight", two(folder), "--col", A, "--col", B, "-f", "csv"))
    alone = csv_of(run("preflight", two(folder), "--col", B, "-f", "csv"))
    assert_frame_equal(alone, _one(both, B), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


def test_simulate_refuses_several_columns_in_one_line(folder: Path) -> None:
    result = run("simulate", "--init", two(folder), "--col", A, "--col", B, "--steps", "2")
    assert 2 == result.exit_code
    assert "one --col" in one_error_line(result.stderr)


def test_counts_and_bare_rates_are_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    rng = np.random.default_rng(SEED)
    pl.DataFrame({"a": rng.binomial(8, 0.4, 100) / 8, "b": rng.random(100)}).write_csv(path)
    result = invoke("silent", path, "--col", "a", "--col", "b")
    assert 1 == result.exit_code
    assert "--samples N" in one_error_line(result.stderr)


# --------------------------------------------------------------------------------------------- report


@pytest.mark.parametrize("suffix", ["html", pytest.param("md", marks=pytest.mark.slow)])
def test_the_report_compares_columns_of_files_with_other_names(folder: Path, suffix: str) -> None:
    page = folder / f"report.{suffix}"
    result = invoke(
        "report", two(folder), folder / "other.csv", "--col", "llama8b_*", "--col", "pass_rate", "-o", page
    )
    assert 0 == result.exit_code, result.stderr
    text = page.read_text()
    assert all(label in text for label in (f"two.parquet: {A}", f"two.parquet: {B}", "other.csv: pass_rate"))


def test_a_report_column_no_input_has_is_one_line(folder: Path) -> None:
    result = invoke("report", two(folder), "--col", A, "--col", "pass_at_1", "-o", folder / "none.html")
    assert 1 == result.exit_code
    assert "pass_at_1" in one_error_line(result.stderr)

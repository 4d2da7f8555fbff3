"""How the input was read, first, where a likely misreading is possible: a histogram read one prompt per row
(its count column not given as --weight-col), rates read as counts on the grid they lie on, rates that are
all 0 or 1 (rows of answers, perhaps), rows of answers read as pass rates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import SAMPLE, invoke, one_error_line

HISTOGRAM = SAMPLE / "bigmath_8_samples.csv"  # k, n, count: 9 rows standing for 215,608 prompts


@pytest.mark.parametrize("command", ["silent", "budget", "groupsize", "plan", "curriculum"])
def test_a_histogram_read_as_rows_names_weight_col_in_the_headline(command: str) -> None:
    extra = {"curriculum": ("--batch-size", "4"), "plan": ("--sizes", "2,4,8", "--estimator", "plugin")}.get(
        command, ()
    )
    result = invoke(command, HISTOGRAM, "--format", "table", *extra)
    assert result.exit_code == 0, result.stderr
    assert "--weight-col count" in " ".join(result.stdout.splitlines()[:2])
    assert "Read as 9 prompts, one per row" in result.stdout.splitlines()[0]


def test_in_the_data_formats_the_first_note_names_weight_col() -> None:
    result = invoke("silent", HISTOGRAM, "--format", "csv")
    first = next(line for line in result.stderr.splitlines() if line.startswith("note: "))
    assert "--weight-col count" in first


def test_with_weight_col_nothing_is_said() -> None:
    result = invoke("silent", HISTOGRAM, "--weight-col", "count", "--format", "table")
    assert "Read as" not in result.stdout
    assert "--weight-col" not in result.stderr


def test_rows_of_answers_are_not_read_as_pass_rates(tmp_path: object) -> None:
    path = tmp_path / "answers.csv"  # type: ignore[operator]
    rows = [(f"q{i}", int((i * 7 + j) % 3 == 0)) for i in range(50) for j in range(4)]
    pl.DataFrame(rows, schema=["prompt_id", "pass_rate"], orient="row").write_csv(path)
    result = invoke("silent", path)
    assert result.exit_code == 2
    assert "--rollouts --prompt-col prompt_id --reward-col pass_rate" in one_error_line(result.stderr)


def test_a_repeated_id_col_of_any_name_marks_rows_of_answers(tmp_path: object) -> None:
    # Found by the slow suite's odd-names test: 'id' repeated was refused, 'qid' given as --id-col was not.
    path = tmp_path / "answers.csv"  # type: ignore[operator]
    pl.DataFrame({"rate": [0.0, 1.0, 0.0, 1.0], "qid": [7, 7, 8, 8]}).write_csv(path)
    result = invoke("silent", path, "--col", "rate", "--id-col", "qid")
    assert result.exit_code == 2
    assert "--rollouts --prompt-col qid --reward-col rate" in one_error_line(result.stderr)


@pytest.fixture
def eighths(tmp_path: Path) -> Path:
    path = tmp_path / "eighths.csv"
    rng = np.random.default_rng(8)
    pl.DataFrame({"pass_rate": rng.binomial(8, rng.random(500)) / 8}).write_csv(path)
    return path


def test_rates_read_as_counts_on_their_grid_say_so_first(eighths: Path) -> None:
    table = invoke("silent", eighths, "--format", "table")
    assert table.stdout.splitlines()[0] == "Rates read as k right of n = 8 samples (all multiples of 1/8)."
    data = invoke("silent", eighths, "--format", "csv")
    first = next(line for line in data.stderr.splitlines() if line.startswith("note: "))
    assert "are all multiples of 1/8: read as k right of n = 8 samples" in first


def test_rates_given_their_samples_are_not_said_to_be_read_so(eighths: Path) -> None:
    result = invoke("silent", eighths, "--samples", "8", "--format", "table")
    assert not result.stdout.startswith("Rates read as")


def test_rates_all_0_or_1_are_said_to_be_rows_perhaps_answers(tmp_path: Path) -> None:
    path = tmp_path / "zero_one.csv"
    pl.DataFrame({"pass_rate": [0.0, 1.0, 1.0, 0.0, 0.0] * 20}).write_csv(path)
    table = invoke("silent", path, "--format", "table")
    assert table.stdout.startswith("Read as 100 prompts, one per row, each never or always right")
    data = invoke("silent", path, "--format", "csv")
    first = next(line for line in data.stderr.splitlines() if line.startswith("note: "))
    assert "--rollouts --prompt-col ID --reward-col pass_rate" in first


def test_counts_of_0_or_n_are_not_said_to_be_answers(tmp_path: Path) -> None:
    path = tmp_path / "ends.csv"
    pl.DataFrame({"k": [0, 4, 4, 0], "n": [4, 4, 4, 4]}).write_csv(path)
    result = invoke("silent", path, "--format", "table")
    assert "Read as" not in result.stdout

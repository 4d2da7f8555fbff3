"""--col on the difficulty columns of public datasets, in files shaped as each dataset stores them.

Each form must give exactly what the same counts give as --k-col/--n-col columns (tested against brute force
elsewhere); the fixtures follow the schemas in docs/datasets.md.
"""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import csv_of, invoke, run_in

SKYWORK_7B = "extra_info.model_difficulty.DeepSeek-R1-Distill-Qwen-7B"
POLARIS = ["3/8", "0/8", "8/8", "5/8", "1/8", "7/8"]
# Skywork-OR1: one int64 per model size inside extra_info.model_difficulty, counting out of 16 samples.
SKYWORK = [(16, 4, 2), (3, 16, 9), (0, 0, 0), (8, 12, 15), (1, 5, 7)]
OPENR1 = [[True, False], [True, True, None, False], [False, True, True, True], [True, True]]
GURU = [0.25, math.nan, 1.0, 0.5, None, 0.8125]
COMMANDS = [
    ("silent", "--G", "2,8"),
    ("silent", "--G", "2", "--estimator", "unbiased"),
    ("silent", "--G", "2", "--per-prompt"),
    ("budget", "--G", "4,inf"),
    ("groupsize", "--fidelity", "0.8", "--per-prompt"),
]


def counts_csv(folder: Path, k: list[int], n: list[int]) -> Path:
    path = folder / "counts.csv"
    pl.DataFrame({"k": k, "n": n}).write_csv(path)
    return path


def polaris(folder: Path) -> Path:
    """Polaris-Dataset-53K rows: problem, answer, difficulty as "k/n" text (JSON lines)."""
    path = folder / "polaris.jsonl"
    rows = {"problem": [f"q{i}" for i in range(len(POLARIS))], "answer": ["1"] * len(POLARIS)}
    pl.DataFrame({**rows, "difficulty": POLARIS}).write_ndjson(path)
    return path


def skywork(folder: Path) -> Path:
    """Skywork-OR1-RL-Data rows: data_source, prompt, extra_info{index, model_difficulty{1.5B, 7B, 32B}}."""
    sizes = ("1.5B", "7B", "32B")
    info = [
        {
            "index": i,
            "model_difficulty": {f"DeepSeek-R1-Distill-Qwen-{s}": v for s, v in zip(sizes, row, strict=True)},
        }
        for i, row in enumerate(SKYWORK)
    ]
    path = folder / "skywork.parquet"
    pl.DataFrame({"data_source": ["math"] * len(info), "extra_info": info}).write_parquet(path)
    return path


def openr1(folder: Path) -> Path:
    """OpenR1-Math-220k rows: problem, correctness_math_verify (a list of booleans, one per generation)."""
    path = folder / "openr1.parquet"
    problems = [f"q{i}" for i in range(len(OPENR1))]
    frame = pl.DataFrame(
        {"problem": problems, "correctness_math_verify": OPENR1},
        schema={"problem": pl.String, "correctness_math_verify": pl.List(pl.Boolean)},
    )
    frame.write_parquet(path)
    return path


def guru(folder: Path) -> Path:
    """Guru rows: prompt, qwen2.5_7b_pass_rate (float; NaN or null where the model was not run)."""
    path = folder / "guru.parquet"
    frame = pl.DataFrame(
        {"prompt": [f"q{i}" for i in range(len(GURU))], "qwen2.5_7b_pass_rate": GURU},
        schema={"prompt": pl.String, "qwen2.5_7b_pass_rate": pl.Float64},
    )
    frame.write_parquet(path)
    return path


def same_output(command: tuple[str, ...], data: Path, options: list[str], counts: Path) -> None:
    via_form = invoke(command[0], data, *command[1:], *options, "--format", "csv")
    via_counts = invoke(command[0], counts, *command[1:], "--k-col", "k", "--n-col", "n", "--format", "csv")
    assert via_counts.exit_code == 0, via_counts.stderr
    assert via_counts.stdout == via_form.stdout


# ------------------------------------------------------------------------------------------------ the forms


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_k_of_n_text_reads_as_counts(command: tuple[str, ...], tmp_path: Path) -> None:
    k = [int(v.split("/")[0]) for v in POLARIS]
    same_output(command, polaris(tmp_path), ["--col", "difficulty"], counts_csv(tmp_path, k, [8] * len(k)))


def test_polaris_difficulty_is_detected_by_its_values(tmp_path: Path) -> None:
    result = invoke("silent", polaris(tmp_path), "--format", "csv")
    assert "note: using pass-rate column 'difficulty'" in result.stderr.splitlines()


def test_a_difficulty_level_is_not_taken_for_a_pass_rate(tmp_path: Path) -> None:
    path = tmp_path / "levels.csv"
    pl.DataFrame({"problem": ["a", "b"], "difficulty": ["easy", "hard"]}).write_csv(path)
    result = invoke("silent", path)
    assert 1 == result.exit_code
    assert "no pass-rate column found" in result.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_skywork_counts_wrong_answers_of_16_by_default(command: tuple[str, ...], tmp_path: Path) -> None:
    k = [16 - row[1] for row in SKYWORK]
    same_output(command, skywork(tmp_path), ["--col", SKYWORK_7B], counts_csv(tmp_path, k, [16] * len(k)))


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_counts_right_reads_the_count_as_right_answers(command: tuple[str, ...], tmp_path: Path) -> None:
    k = [row[1] for row in SKYWORK]
    options = ["--col", SKYWORK_7B, "--samples", "16", "--counts", "right"]
    same_output(command, skywork(tmp_path), options, counts_csv(tmp_path, k, [16] * len(k)))


def test_the_assumed_count_direction_is_said(tmp_path: Path) -> None:
    result = invoke("silent", skywork(tmp_path), "--col", SKYWORK_7B, "--format", "csv")
    assert "--counts right reads it the other way" in result.stderr


def test_a_count_of_unknown_n_asks_for_samples(tmp_path: Path) -> None:
    path = tmp_path / "solved.csv"
    pl.DataFrame({"solved": [1, 2, 3]}).write_csv(path)
    result = invoke("silent", path, "--col", "solved", "--counts", "right")
    assert 2 == result.exit_code
    assert "give --samples N" in result.stderr


def test_a_path_that_does_not_resolve_lists_the_fields_where_it_stopped(tmp_path: Path) -> None:
    result = invoke("silent", skywork(tmp_path), "--col", "extra_info.model_difficulty.Qwen-7B")
    assert 1 == result.exit_code
    assert (
        "the fields inside 'extra_info.model_difficulty' are: DeepSeek-R1-Distill-Qwen-1.5B" in result.stderr
    )


def test_a_record_column_lists_its_field_paths(tmp_path: Path) -> None:
    result = invoke("silent", skywork(tmp_path), "--col", "extra_info")
    assert 1 == result.exit_code
    assert "give the path of one field: extra_info.index, extra_info.model_difficulty" in result.stderr


def test_a_rate_inside_a_record_is_read_at_its_path(tmp_path: Path) -> None:
    path = tmp_path / "nested.parquet"
    pl.DataFrame({"meta": [{"stats": {"pass.rate": p}} for p in (0.25, 0.5, 1.0)]}).write_parquet(path)
    flat = tmp_path / "flat.csv"
    pl.DataFrame({"pass_rate": [0.25, 0.5, 1.0]}).write_csv(flat)
    nested = invoke("silent", path, "--col", "meta.stats.pass.rate", "--format", "csv")
    assert invoke("silent", flat, "--format", "csv").stdout == nested.stdout


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_a_list_of_grades_counts_trues_of_graded_answers(command: tuple[str, ...], tmp_path: Path) -> None:
    k = [sum(1 for g in row if g) for row in OPENR1]
    n = [sum(1 for g in row if g is not None) for row in OPENR1]
    same_output(command, openr1(tmp_path), ["--col", "correctness_math_verify"], counts_csv(tmp_path, k, n))


def test_openr1_grades_are_detected_and_ungraded_answers_counted(tmp_path: Path) -> None:
    result = invoke("silent", openr1(tmp_path), "--format", "csv")
    lines = result.stderr.splitlines()
    assert "note: using pass-rate column 'correctness_math_verify'" in lines
    assert any(line.startswith("note: left out 1 ungraded (null) answer(s)") for line in lines)


def test_the_silent_rate_of_a_list_column_equals_brute_force(tmp_path: Path) -> None:
    out = csv_of(invoke("silent", openr1(tmp_path), "--G", "3", "--estimator", "plugin", "--format", "csv"))
    rates = [Fraction(sum(1 for g in r if g), sum(1 for g in r if g is not None)) for r in OPENR1]
    expected = sum(p**3 + (1 - p) ** 3 for p in rates) / len(rates)
    assert float(expected) == pytest.approx(out["silent_rate"].item(), rel=1e-12)


def test_nan_is_an_error_by_default_and_suggests_nan_missing(tmp_path: Path) -> None:
    result = invoke("silent", guru(tmp_path))
    assert 1 == result.exit_code
    assert "NaN is not a pass rate at row 2" in result.stderr
    assert "--nan-missing" in result.stderr


def test_nan_missing_skips_nan_rows_and_counts_them(tmp_path: Path) -> None:
    result = invoke("silent", guru(tmp_path), "--nan-missing", "--format", "csv")
    lines = result.stderr.splitlines()
    assert "note: skipped 1 row(s) with NaN in 'qwen2.5_7b_pass_rate' (--nan-missing: not measured)" in lines
    assert "note: skipped 1 row(s) with a null 'qwen2.5_7b_pass_rate'" in lines


def test_nan_missing_gives_the_rates_without_the_nan_rows(tmp_path: Path) -> None:
    flat = tmp_path / "measured.csv"
    pl.DataFrame({"pass_rate": [p for p in GURU if p is not None and not math.isnan(p)]}).write_csv(flat)
    skipped = invoke("silent", guru(tmp_path), "--nan-missing", "--samples", "16", "--G", "4", "-f", "csv")
    assert invoke("silent", flat, "--samples", "16", "--G", "4", "-f", "csv").stdout == skipped.stdout


# ------------------------------------------------------------------------------------------------ bad values


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["3/8", "3/8.0", "2/8"], "column 'difficulty': not of the form k/n at row 2"),
        (["9/8", "3/8"], "column 'difficulty': k is larger than n at row 1"),
        (["1/0", "0/0", "3/8"], "column 'difficulty': n must be at least 1 at rows 1, 2"),
    ],
)
def test_bad_k_of_n_text_is_named_by_row(values: list[str], expected: str, tmp_path: Path) -> None:
    path = tmp_path / "polaris.jsonl"
    pl.DataFrame({"difficulty": values}).write_ndjson(path)
    result = invoke("silent", path, "--col", "difficulty")
    assert 1 == result.exit_code
    assert expected in result.stderr


def test_a_grade_that_is_not_a_boolean_is_named_by_row(tmp_path: Path) -> None:
    path = tmp_path / "grades.parquet"
    pl.DataFrame({"correctness": [[1, 0], [1, 2]]}).write_parquet(path)
    result = invoke("silent", path, "--col", "correctness")
    assert 1 == result.exit_code
    assert "column 'correctness': list holds a value other than true/false or 0/1 at row 2" in result.stderr


def test_a_count_beyond_n_is_named_by_row(tmp_path: Path) -> None:
    path = tmp_path / "counts.csv"
    pl.DataFrame({"solved": [3, 17, 0]}).write_csv(path)
    result = invoke("silent", path, "--col", "solved", "--samples", "16", "--counts", "right")
    assert 1 == result.exit_code
    assert "column 'solved': count outside [0, n] at row 2" in result.stderr


def test_skip_invalid_skips_bad_forms_and_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "polaris.jsonl"
    pl.DataFrame({"difficulty": ["3/8", "x", "9/8", "4/8"]}).write_ndjson(path)
    result = invoke("silent", path, "--col", "difficulty", "--skip-invalid", "--format", "csv")
    assert "note: skipped 2 row(s) with an invalid value (--skip-invalid)" in result.stderr.splitlines()
    assert 2 == csv_of(result)["prompts"].item()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--col", "difficulty", "--samples", "8"], "carries its own n: drop --samples"),
        (["--counts", "sideways"], "'sideways' is not one of"),
        (["--k-col", "k", "--n-col", "n", "--counts", "right"], "--counts says what a whole-number"),
        (["--k-col", "k", "--n-col", "n", "--nan-missing"], "--nan-missing applies to a pass-rate column"),
    ],
)
def test_form_options_out_of_place_are_usage_errors(args: list[str], expected: str, tmp_path: Path) -> None:
    command = ["silent", str(polaris(tmp_path)), *args]
    # The first case in a real process, the others in-process through the same entry point.
    if args[0] != "--col":
        done = run_in(*command)
    else:
        done = subprocess.run(
            [sys.executable, "-m", "sigmatool", *command],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert 2 == done.returncode
    assert 1 == len(done.stderr.splitlines())
    assert expected in done.stderr

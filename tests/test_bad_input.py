"""Every class of bad or odd input, run as a user would: one line, a documented exit code. Each class has a
case in a real process (and every way of giving stdin runs in one); its other cases run in-process through the
same entry point (tests/conftest.py `run_in`).

Never a traceback and never a plausible wrong number with exit 0: either a clear error (exit 1 for data, 2
for usage) or, where a sensible reading exists, the answer and a note on stderr saying what was done.
"""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import BIGMATH, TOY, invoke, one_error_line, run_cli, run_in


def run(*args: object, real: bool = False) -> subprocess.CompletedProcess[str]:
    """A run in a real process for the case of a class that stands for it, in-process for the others."""
    return run_cli(*args) if real else run_in(*args)


# --------------------------------------------------------------------------------------------- stdin


def test_an_empty_pipe_is_an_error_not_the_bundled_sample() -> None:
    done = run_cli("silent", stdin=b"")
    assert 1 == done.returncode
    assert "standard input is empty" in one_error_line(done.stderr)
    assert "" == done.stdout


def test_stdin_from_a_terminal_reads_the_bundled_sample() -> None:
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sigmatool", "silent", "--format", "csv"],
            stdin=terminal,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        os.close(controller)
        os.close(terminal)
    assert 0 == done.returncode
    assert [215_608] == pl.read_csv(io.StringIO(done.stdout))["prompts"].to_list()


def test_a_closed_stdin_reads_the_bundled_sample() -> None:
    code = (
        "import os, sys; os.close(0); from sigmatool.cli import main; sys.exit(main(['silent', '-f', 'csv']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert 0 == done.returncode
    assert "bundled Big-Math sample" in done.stderr


def test_a_file_redirected_to_stdin_is_read() -> None:
    done = run_cli("silent", "--format", "csv", stdin=TOY.read_bytes())
    assert 0 == done.returncode
    assert [20] == pl.read_csv(io.StringIO(done.stdout))["prompts"].to_list()


def test_stdin_given_twice_is_a_usage_error() -> None:
    done = run_cli("silent", "-", "-", stdin=TOY.read_bytes())
    assert 2 == done.returncode
    assert "more than once" in one_error_line(done.stderr)


# --------------------------------------------------------------------------------------------- columns


@pytest.fixture
def write(tmp_path: Path):  # type: ignore[no-untyped-def]
    def _write(text: str, name: str = "data.csv") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return _write


def test_a_duplicated_column_that_is_used_is_an_error(write) -> None:  # type: ignore[no-untyped-def]
    done = run("silent", write("pass_rate,pass_rate\n0.5,0.1\n"), real=True)
    assert 1 == done.returncode
    assert "more than once" in one_error_line(done.stderr)


def test_a_duplicated_column_that_is_not_used_is_noted(write) -> None:  # type: ignore[no-untyped-def]
    done = run_in("silent", write("pass_rate,x,x\n0.5,1,2\n"), "--format", "csv")
    assert 0 == done.returncode
    assert "'x' appears more than once" in done.stderr


def test_booleans_in_a_rate_column_are_an_error(write) -> None:  # type: ignore[no-untyped-def]
    done = run_in("silent", write("pass_rate\ntrue\nfalse\n"))
    assert 1 == done.returncode
    assert "true/false" in one_error_line(done.stderr)


def test_percent_signs_are_an_error_naming_the_rows(write) -> None:  # type: ignore[no-untyped-def]
    done = run_in("silent", write("pass_rate\n45%\n30%\n"))
    assert 1 == done.returncode
    assert "a percentage" in one_error_line(done.stderr)


def test_a_column_reaching_100_is_an_error_with_a_hint(write) -> None:  # type: ignore[no-untyped-def]
    done = run_in("silent", write("pass_rate\n45\n100\n"))
    assert 1 == done.returncode
    assert "--percent" in one_error_line(done.stderr)


@pytest.mark.parametrize("text", ["pass_rate\n45%\n30%\n", "pass_rate\n45\n30\n"])
def test_percent_reads_percentages_as_fractions(write, text: str) -> None:  # type: ignore[no-untyped-def]
    fractions = run_in("silent", write("pass_rate\n0.45\n0.3\n", "f.csv"), "--format", "csv")
    percent = run_in("silent", write(text), "--percent", "--format", "csv")
    assert fractions.stdout == percent.stdout


def test_a_nan_threshold_is_a_usage_error(write) -> None:  # type: ignore[no-untyped-def]
    path = write("id,r\na,0.5\n")
    done = run_in(
        "silent", path, "--rollouts", "--prompt-col", "id", "--reward-col", "r", "--threshold", "nan"
    )
    assert 2 == done.returncode
    assert "--threshold" in one_error_line(done.stderr)


@pytest.mark.parametrize("size", ["4294967296", "9223372036854775808", "0", "-3", "8.5"])
@pytest.mark.parametrize("command", ["silent", "budget"])
def test_a_group_size_outside_what_the_kernels_handle_is_a_usage_error(command: str, size: str) -> None:
    done = run_in(command, TOY, "--G", size)
    assert 2 == done.returncode
    assert "--G" in one_error_line(done.stderr)


@pytest.mark.parametrize(("command", "bins"), [("silent", "--by-bins"), ("groupsize", "--bins")])
def test_an_option_that_would_be_ignored_is_a_usage_error(command: str, bins: str) -> None:
    done = run_in(command, TOY, "--per-prompt", bins, "5")
    assert 2 == done.returncode
    assert bins in one_error_line(done.stderr)


# --------------------------------------------------------------------------------------------- values


def test_float32_rates_of_k_over_50_are_valid_counts(tmp_path: Path) -> None:
    k = np.random.default_rng(0).integers(0, 51, 12_500)
    path = tmp_path / "rates.parquet"
    pl.DataFrame({"pass_rate": (k / 50).astype(np.float32)}).write_parquet(path)
    done = run_in("silent", path, "--samples", "50", "--estimator", "unbiased", "--G", "8", "--format", "csv")
    assert 0 == done.returncode
    assert [12_500] == pl.read_csv(io.StringIO(done.stdout))["prompts"].to_list()


@pytest.mark.parametrize(
    ("samples", "rates"), [(50, [0.7, 0.82, 0.94, 0.6]), (5, [0.6, 0.2, 0.4]), (7, [3 / 7, 1.0])]
)
def test_per_prompt_with_samples_gives_every_prompt_its_values(
    write, samples: int, rates: list[float]
) -> None:  # type: ignore[no-untyped-def]
    path = write("pass_rate\n" + "".join(f"{r!r}\n" for r in rates))
    done = run_in(
        "silent", path, "--samples", samples, "--per-prompt", "--estimator", "plugin", "--format", "csv"
    )
    out = pl.read_csv(io.StringIO(done.stdout))
    assert 0 == out["p_silent"].null_count()
    assert rates == out["p"].to_list()


def test_per_prompt_prints_a_float32_rate_as_written(tmp_path: Path) -> None:
    path = tmp_path / "rates.parquet"
    pl.DataFrame({"pass_rate": np.array([0.7, 0.86], dtype=np.float32)}).write_parquet(path)
    done = run_in("silent", path, "--samples", "50", "--per-prompt", "--format", "csv")
    assert ["0.7", "0.86"] == [line.split(",")[1] for line in done.stdout.splitlines()[1:]]


BINS = {"silent": "--by-bins", "budget": "--bins", "groupsize": "--bins"}


@pytest.mark.parametrize("command", ["silent", "budget", "groupsize"])
def test_a_rate_on_a_bin_edge_lies_in_the_bin_it_starts(write, command: str) -> None:  # type: ignore[no-untyped-def]
    path = write("pass_rate\n0.29\n0.3\n0.295\n")
    done = run_in(command, path, BINS[command], "100", "--format", "csv")
    out = pl.read_csv(io.StringIO(done.stdout)).filter(pl.col("prompts") > 0)
    edges = out.filter(pl.col("p_hi") < 1.0).select("p_lo", "p_hi").unique().sort("p_lo").rows()
    assert [(0.29, 0.3), (0.3, 0.31)] == edges


def test_bin_edges_join_across_commands(write) -> None:  # type: ignore[no-untyped-def]
    path = write("pass_rate\n" + "".join(f"{k / 37!r}\n" for k in range(38)))
    frames = []
    for command in ("silent", "budget", "groupsize"):
        out = pl.read_csv(io.StringIO(run_in(command, path, BINS[command], "100", "--format", "csv").stdout))
        if "segment" in out.columns:
            out = out.filter(pl.col("segment") == "bin")
        frames.append(out.select("p_lo", "p_hi", "prompts").unique())
    assert frames[0].sort("p_lo").equals(frames[1].sort("p_lo"))
    assert frames[0].sort("p_lo").equals(frames[2].sort("p_lo"))


# --------------------------------------------------------------------------------------------- files


def test_json_lines_with_an_unused_column_of_mixed_types_are_read(write) -> None:  # type: ignore[no-untyped-def]
    path = write(
        '{"pass_rate":0.5,"x":[1,2]}\n{"pass_rate":0.25,"x":3}\n{"pass_rate":0.75,"x":{"a":1}}\n', "m.jsonl"
    )
    done = run("silent", path, "--format", "csv", real=True)
    assert 0 == done.returncode
    assert [3] == pl.read_csv(io.StringIO(done.stdout))["prompts"].to_list()


def test_a_json_array_with_an_unused_column_of_mixed_types_is_read(write) -> None:  # type: ignore[no-untyped-def]
    path = write(json.dumps([{"pass_rate": 0.5, "x": [1]}, {"pass_rate": 0.25, "x": 2}]), "m.json")
    done = run_in("silent", path, "--format", "csv")
    assert 0 == done.returncode


@pytest.mark.parametrize("value", ["[0.3]", '{"a": 0.3}'])
def test_a_nested_value_in_the_used_column_names_the_row(write, value: str) -> None:  # type: ignore[no-untyped-def]
    path = write(f'{{"pass_rate": 0.5}}\n{{"pass_rate": {value}}}\n', "n.jsonl")
    done = run_in("silent", path)
    assert 1 == done.returncode
    assert "list or record, not a number at row 2" in one_error_line(done.stderr)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("garbage.csv", bytes(range(256)) * 20, "binary"),
        ("utf16.csv", "pass_rate\n0.5\n".encode("utf-16"), "binary"),
        ("parquet.csv", BIGMATH.read_bytes(), "parquet"),
        ("text.parquet", b"pass_rate\n0.5\n", "not a parquet file"),
        ("truncated.parquet", BIGMATH.read_bytes()[:5000], "parquet"),
        ("gzip.csv", b"\x1f\x8b\x08\x00" + bytes(50), "gzip"),
        ("pickle.jsonl", b"\x80\x04\x95" + bytes(30), "pickle"),
        ("empty.csv", b"", "empty"),
        ("broken.jsonl", b'{"pass_rate": 0.5}\n{"pass_rate": \n', "jsonl"),
    ],
)
def test_an_unreadable_file_is_one_line_naming_it(
    tmp_path: Path, name: str, content: bytes, expected: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    done = run("silent", path, real=name == "garbage.csv")
    assert 1 == done.returncode
    line = one_error_line(done.stderr)
    assert name in line
    assert expected in line


def test_a_symlink_loop_says_so(tmp_path: Path) -> None:
    (tmp_path / "a.csv").symlink_to("b.csv")
    (tmp_path / "b.csv").symlink_to("a.csv")
    done = run_in("silent", tmp_path / "a.csv")
    assert 1 == done.returncode
    assert "symbolic link loop" in one_error_line(done.stderr)


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (("nope.csv",), 1, "no such file"),
        (("nope*.csv",), 1, "no file matches"),
        (("data.xlsx",), 2, "cannot tell the format"),
    ],
)
def test_a_missing_or_unknown_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], code: int, expected: str
) -> None:
    (tmp_path / "data.xlsx").write_bytes(b"PK\x03\x04")
    monkeypatch.chdir(tmp_path)
    done = run("silent", *args, real=args == ("nope.csv",))
    assert code == done.returncode
    assert expected in one_error_line(done.stderr)


def test_a_folder_as_data_says_what_to_give(tmp_path: Path) -> None:
    done = run_in("silent", tmp_path)
    assert 1 == done.returncode
    assert "is a folder" in one_error_line(done.stderr)


@pytest.mark.parametrize(("separator", "explicit"), [(";", False), ("|", False), ("\t", False), ("|", True)])
def test_other_separators_are_detected_or_given(write, separator: str, explicit: bool) -> None:  # type: ignore[no-untyped-def]
    comma = run_in("silent", write("id,pass_rate\n1,0.5\n2,0.25\n", "comma.csv"), "--format", "csv")
    path = write(f"id{separator}pass_rate\n1{separator}0.5\n2{separator}0.25\n", "other.csv")
    args = ("--separator", separator) if explicit else ()
    done = run_in("silent", path, *args, "--format", "csv")
    assert comma.stdout == done.stdout
    assert explicit or "detected" in done.stderr


def test_a_separator_of_two_characters_is_a_usage_error() -> None:
    done = run_in("silent", TOY, "--separator", ";;")
    assert 2 == done.returncode
    assert "--separator" in one_error_line(done.stderr)


# --------------------------------------------------------------------------------------------- file shapes and hints


def test_a_json_object_of_ids_to_values_is_read_as_rows(write) -> None:  # type: ignore[no-untyped-def]
    records = invoke("silent", write("id,pass_rate\na,0.5\nb,0.25\nc,1.0\n"), "--format", "csv")
    done = run_in("silent", write('{"a": 0.5, "b": 0.25, "c": 1.0}', "object.json"), "--format", "csv")
    assert 0 == done.returncode
    assert records.stdout == done.stdout


def test_a_json_object_on_stdin_is_read_as_rows(write) -> None:  # type: ignore[no-untyped-def]
    records = invoke("silent", write("id,pass_rate\na,0.5\nb,0.25\n"), "--format", "csv")
    assert (
        records.stdout == invoke("silent", "--format", "csv", input='{\n "a": 0.5,\n "b": 0.25\n}\n').stdout
    )


def test_a_list_of_lists_column_is_one_line_naming_file_column_and_form(write) -> None:  # type: ignore[no-untyped-def]
    path = write('{"id": 1, "pass_rate": [[0.5, 0.25], [1.0]]}\n{"id": 2, "pass_rate": [[0.5]]}\n', "n.jsonl")
    done = run_in("silent", path)
    assert 1 == done.returncode
    assert "n.jsonl: column 'pass_rate' holds lists of lists of numbers" in one_error_line(done.stderr)


def test_a_1_to_10_rating_is_said_to_be_maybe_no_pass_rate(write) -> None:  # type: ignore[no-untyped-def]
    done = run_in("silent", write("id,rating\n1,9.5\n2,3.0\n3,7.5\n4,1\n"), "--col", "rating")
    assert 1 == done.returncode
    assert "may be a rating, not a pass rate" in one_error_line(done.stderr)


def test_a_1_to_10_rating_is_not_steered_to_percent(write) -> None:  # type: ignore[no-untyped-def]
    result = invoke("silent", write("id,rating\n1,9.5\n2,3.0\n3,7.5\n4,1\n"), "--col", "rating")
    assert "--percent" not in result.stderr


def test_the_percent_hint_says_the_column_may_be_no_pass_rate(write) -> None:  # type: ignore[no-untyped-def]
    result = invoke("silent", write("pass_rate\n45\n12.5\n80\n"))
    assert "--percent reads them as such, or the column is not a pass rate" in result.stderr


def test_rate_col_is_another_spelling_of_col() -> None:
    done = run_in("silent", TOY, "--rate-col", "pass_rate", "--format", "csv")
    assert 0 == done.returncode
    assert invoke("silent", TOY, "--col", "pass_rate", "--format", "csv").stdout == done.stdout


def test_rate_col_beside_the_same_col_names_it_once() -> None:
    both = invoke("silent", TOY, "--rate-col", "pass_rate", "--col", "pass_rate", "--format", "csv")
    assert invoke("silent", TOY, "--col", "pass_rate", "--format", "csv").stdout == both.stdout


def test_a_misspelt_column_gets_a_did_you_mean() -> None:
    assert "(did you mean 'pass_rate'?)" in invoke("silent", TOY, "--col", "pass_rat").stderr


def test_a_list_of_grades_is_listed_when_no_pass_rate_column_is_found(write) -> None:  # type: ignore[no-untyped-def]
    result = invoke("silent", write('{"id": 1, "graded": [1, 0, 1]}\n{"id": 2, "graded": [0]}\n', "g.jsonl"))
    assert "lists of grades (k of n): graded" in result.stderr


def test_a_list_of_rates_column_says_how_to_make_rows(tmp_path: Path) -> None:
    path = tmp_path / "steps.parquet"
    pl.DataFrame({"id": [1, 2], "pass_rate": [[0.5, 0.25], [1.0, 0.0]]}).write_parquet(path)
    assert ".explode('pass_rate', 'step')" in invoke("silent", path).stderr


# ------------------------------------------------------------------------------------- empty and nested


@pytest.mark.parametrize("name", ["empty.jsonl", "blank.csv"])
def test_an_empty_file_is_one_line_naming_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("" if name.endswith("jsonl") else "\n\n")
    done = run("silent", path, real=name.endswith("jsonl"))
    assert 1 == done.returncode
    line = one_error_line(done.stderr)
    assert name in line
    assert "the file is empty" in line
    assert "NDJSON" not in line


def test_a_dump_folder_of_empty_files_names_them(tmp_path: Path) -> None:
    (tmp_path / "1.jsonl").write_text("\n")
    done = run("silent", tmp_path, "--from", "verl")
    assert 1 == done.returncode
    assert "every verl dump file given is empty (" in one_error_line(done.stderr)
    assert "1.jsonl" in one_error_line(done.stderr)


@pytest.mark.parametrize("where", [(), ("-o", "out.csv"), ("-o", "out.tsv")])
def test_a_nested_input_column_bound_for_csv_is_one_line_and_nothing_written(
    tmp_path: Path, where: tuple[str, ...]
) -> None:
    data = tmp_path / "nested.jsonl"
    data.write_text("".join(json.dumps({"p": (i % 9) / 8, "tags": ["a", "b"]}) + "\n" for i in range(40)))
    out = [str(tmp_path / w) if w.startswith("out") else w for w in where]
    done = run(
        "plan",
        data,
        "--col",
        "p",
        "--per-prompt",
        "--budget",
        "500",
        "--format",
        "csv" if not where else "auto",
        *out,
        real=not where,
    )
    assert 2 == done.returncode
    line = one_error_line(done.stderr)
    assert "cannot hold the nested column(s) 'tags'" in line
    assert "parquet" in line
    assert "cannot read the input" not in done.stderr
    assert "" == done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nested.jsonl"]
    parquet = tmp_path / "out.parquet"
    done = run("plan", data, "--col", "p", "--per-prompt", "--budget", "500", "-o", parquet)
    assert 0 == done.returncode
    assert ["a", "b"] == pl.read_parquet(parquet)["tags"][0].to_list()

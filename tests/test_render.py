"""Output: every format carries the same numbers, files are written atomically, pipes end quietly."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import sigmatool
from sigmatool.errors import UsageError
from sigmatool.options import OutputOptions
from sigmatool.render import View, resolve_format, write_frame
from sigmatool.render.table import print_table
from tests.conftest import TOY, csv_of, invoke

ARGS = ("silent", TOY, "--G", "4,8", "--by", "source")


@pytest.fixture(scope="module")
def reference() -> pl.DataFrame:
    return csv_of(invoke(*ARGS, "--format", "csv"))


@pytest.mark.parametrize("ext", ["csv", "tsv", "json", "jsonl", "parquet"])
def test_output_file_format_follows_the_extension(tmp_path: Path, reference: pl.DataFrame, ext: str) -> None:
    path = tmp_path / f"out.{ext}"
    assert 0 == invoke(*ARGS, "-o", path).exit_code
    readers = {
        "csv": lambda: pl.read_csv(path),
        "tsv": lambda: pl.read_csv(path, separator="\t"),
        "json": lambda: pl.DataFrame(json.loads(path.read_text())),
        "jsonl": lambda: pl.read_ndjson(path),
        "parquet": lambda: pl.read_parquet(path),
    }
    assert_frame_equal(reference, readers[ext](), check_dtypes=False)


@pytest.mark.parametrize("fmt", ["json", "jsonl", "tsv"])
def test_stdout_formats_carry_full_precision(reference: pl.DataFrame, fmt: str) -> None:
    out = invoke(*ARGS, "--format", fmt).stdout
    if fmt == "json":
        frame = pl.DataFrame(json.loads(out))
    elif fmt == "jsonl":
        frame = pl.read_ndjson(io.StringIO(out))
    else:
        frame = pl.read_csv(io.StringIO(out), separator="\t")
    assert_frame_equal(reference, frame, check_dtypes=False)


@pytest.mark.parametrize("fmt", ["json", "jsonl", "parquet", "tsv"])
def test_per_prompt_streams_to_every_format(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"rows.{fmt}"
    assert 0 == invoke("silent", TOY, "--per-prompt", "-o", path).exit_code
    readers = {
        "json": lambda: pl.DataFrame(json.loads(path.read_text())),
        "jsonl": lambda: pl.read_ndjson(path),
        "parquet": lambda: pl.read_parquet(path),
        "tsv": lambda: pl.read_csv(path, separator="\t"),
    }
    expected = csv_of(invoke("silent", TOY, "--per-prompt", "--format", "csv"))
    assert_frame_equal(expected, readers[fmt](), check_dtypes=False)


def test_an_output_file_is_replaced_whole_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    path.write_text("old contents\n")
    invoke(*ARGS, "-o", path)
    assert ["out.csv"] == os.listdir(tmp_path)
    assert "source,G" == path.read_text()[:8]


def test_a_failed_run_leaves_the_previous_output_untouched(tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    path.write_text("old contents\n")
    result = invoke("silent", TOY, "--col", "missing", "-o", path)
    assert 1 == result.exit_code
    assert "old contents\n" == path.read_text()
    assert ["out.csv"] == os.listdir(tmp_path)


def test_unknown_output_extension_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="cannot tell the format"):
        resolve_format("auto", "out.xlsx")


def test_output_into_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(*ARGS, "-o", tmp_path / "nope" / "out.csv")
    assert 2 == result.exit_code
    assert "does not exist" in result.stderr


def test_non_finite_values_are_written_as_null() -> None:
    buffer = io.StringIO()
    frame = pl.DataFrame({"x": [1.5, float("inf"), float("nan")]})
    sys_stdout, sys.stdout = sys.stdout, buffer
    try:
        write_frame(frame, OutputOptions("csv"))
    finally:
        sys.stdout = sys_stdout
    assert "x\n1.5\n\n\n" == buffer.getvalue()


def test_table_view_rounds_and_shows_shares_as_percentages() -> None:
    buffer = io.StringIO()
    frame = pl.DataFrame({"G": [8], "silent_rate": [0.44278603], "draws": [1.794642]})
    print_table(frame, View(headline="Headline.", percent=("silent_rate",)), buffer, 80)
    text = buffer.getvalue()
    assert "Headline." == text.splitlines()[0]
    assert "44.28%" in text
    assert "1.795" in text


def _run(args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        args, shell=True, capture_output=True, text=True, env=full_env, check=False, executable="/bin/bash"
    )


def test_a_closed_pipe_ends_quietly() -> None:
    done = _run(
        f"set -o pipefail; {sys.executable} -m sigmatool silent {TOY} --per-prompt --G 1,2,3,4,5,6,7,8 --format csv | head -1"
    )
    assert 0 == done.returncode, done.stderr
    assert [] == [line for line in done.stderr.splitlines() if not line.startswith("note: ")]


def test_no_colour_codes_when_piped_or_with_no_color() -> None:
    done = _run(
        f"{sys.executable} -m sigmatool silent {TOY} --format table --col nope", env={"NO_COLOR": "1"}
    )
    assert 1 == done.returncode
    assert "\x1b[" not in done.stderr + done.stdout


def test_python_dash_m_runs_the_cli() -> None:
    done = _run(f"{sys.executable} -m sigmatool --version")
    assert f"sigmatool {sigmatool.__version__}" == done.stdout.strip()


def test_a_usage_error_from_the_entry_point_is_one_line_with_exit_code_2() -> None:
    done = _run(f"{sys.executable} -m sigmatool silent {TOY} --by-bins 0")
    assert 2 == done.returncode
    assert 1 == len(done.stderr.strip().splitlines())
    assert "--by-bins" in done.stderr


def test_no_command_shows_the_help() -> None:
    done = _run(f"{sys.executable} -m sigmatool")
    assert "silent" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr

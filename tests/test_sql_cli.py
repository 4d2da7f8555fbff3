"""``sigmatool sql``: the query on stdout or in a file, the command line's checks, and its start-up cost."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import sqlglot

from sigmatool.cli.sql import sql_command
from sigmatool.sql import DIALECTS, histogram_query
from tests.conftest import invoke, one_error_line

LOG = ["--table", "rollouts", "--prompt-col", "prompt_id", "--reward-col", "reward"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_command_prints_the_query_of_its_options(dialect: str) -> None:
    result = invoke("sql", *LOG, "--dialect", dialect, "--by", "source", "--step-col", "step")
    expected = histogram_query(
        "rollouts", "prompt_id", "reward", dialect=dialect, by=["source"], step_col="step"
    )
    assert expected + "\n" == result.stdout


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_printed_query_parses_in_its_dialect(dialect: str) -> None:
    result = invoke("sql", *LOG, "--dialect", dialect, "--threshold", "0.5")
    assert isinstance(sqlglot.parse_one(result.stdout, read=dialect), sqlglot.exp.Select)


def test_the_default_dialect_is_duckdb() -> None:
    assert (
        histogram_query("rollouts", "prompt_id", "reward", dialect="duckdb") + "\n"
        == invoke("sql", *LOG).stdout
    )


def test_the_last_line_runs_the_chosen_command_on_the_named_result() -> None:
    out = invoke(
        "sql", *LOG, "--command", "plan", "--result", "out/hist.parquet", "--by", "data source"
    ).stdout
    expected = (
        "-- sigmatool plan out/hist.parquet --k-col k --n-col n --weight-col prompts --by 'data source'"
    )
    assert expected == out.splitlines()[-1]


def test_a_boolean_reward_is_tested_as_true() -> None:
    out = invoke("sql", *LOG, "--reward-type", "boolean").stdout
    assert 'CASE WHEN "r"."reward" THEN 1 ELSE 0 END' in out


def test_output_goes_to_the_file_and_nowhere_else(tmp_path: Path) -> None:
    path = tmp_path / "hist.sql"
    result = invoke("sql", *LOG, "-o", path)
    assert "" == result.stdout
    assert histogram_query("rollouts", "prompt_id", "reward") + "\n" == path.read_text()


def test_output_to_a_folder_is_refused(tmp_path: Path) -> None:
    result = invoke("sql", *LOG, "-o", tmp_path)
    assert 2 == result.exit_code
    assert "is a folder" in one_error_line(result.stderr)


BAD = {
    "no table": (
        ["--prompt-col", "p", "--reward-col", "r"],
        "give --table: the rollout log's table and columns",
    ),
    "no columns": (["--table", "t"], "give --prompt-col and --reward-col"),
    "unknown dialect": ([*LOG, "--dialect", "mysql"], "'mysql' is not one of"),
    "threshold on booleans": ([*LOG, "--reward-type", "boolean", "--threshold", "0.5"], "boolean"),
    "infinite threshold": ([*LOG, "--threshold", "inf"], "finite"),
    "by a result column": ([*LOG, "--by", "K"], "--by/--step-col 'K'"),
    "by a reserved name": ([*LOG, "--by", "weight"], "sigmatool reserves it"),
    "by twice": ([*LOG, "--by", "step", "--step-col", "STEP"], "each column may be given once"),
    "empty by": ([*LOG, "--by", ""], "must not be empty"),
    "not a table name": (["--table", "", "--prompt-col", "p", "--reward-col", "r"], "give --table"),
    "unknown command": ([*LOG, "--command", "simulate"], "'simulate' is not one of"),
}


@pytest.mark.parametrize(("args", "message"), list(BAD.values()), ids=list(BAD))
def test_a_bad_option_is_a_usage_error_in_one_line(args: list[str], message: str) -> None:
    result = invoke("sql", *args)
    assert 2 == result.exit_code
    assert message in one_error_line(result.stderr)


@pytest.mark.parametrize("name", ["no columns", "unknown dialect", "by a result column"])
def test_a_bad_option_is_refused_before_any_heavy_import(name: str) -> None:
    script = (
        "import sys; from sigmatool.cli import main; "
        f"code = main(['sql', *{BAD[name][0]!r}]); "
        "print(code, *[m for m in ('polars', 'numpy', 'sqlglot') if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True
    )
    assert "2" == done.stdout.strip()


def test_printing_the_query_reads_no_data() -> None:
    script = (
        "import sys; from sigmatool.cli import main; "
        f"code = main(['sql', *{LOG!r}]); "
        "print(code, 'sigmatool.load' in sys.modules, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True
    )
    assert "0 False" == done.stderr.strip()


def test_the_help_example_prints_a_spark_query() -> None:
    example = re.search(r"^\s+sigmatool (sql .+)$", sql_command.__doc__ or "", flags=re.MULTILINE)
    assert example is not None
    result = invoke(*shlex.split(example.group(1)))
    assert "FROM `rollouts` AS `r`" in result.stdout


def test_the_help_names_every_dialect() -> None:
    text = " ".join(invoke("sql", "--help").stdout.split())
    assert [] == [d for d in DIALECTS if d not in text]


def test_a_real_process_prints_the_query(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sigmatool", "sql", *LOG],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ},
        check=False,
    )
    assert 0 == done.returncode
    assert histogram_query("rollouts", "prompt_id", "reward") + "\n" == done.stdout

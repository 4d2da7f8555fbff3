"""--engine spark and --engine duckdb on a 96,000-row rollout log with a step and a source column: the same
output, to the byte (stdout and notes), as sigmatool's own reading, through a Spark Connect server this test
starts (the pyspark package's own SparkConnectServer), through $SPARK_REMOTE, and through a local session;
a table of Spark's catalog read with --table; Hive step=N folders; and each kind of bad engine input as one
line."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engines.conftest import JAVA_HINT, free_port, log_files, sigmatool
from tests.log_fixtures import ENGINE_ROLLOUTS, engine_questions, write_engine_log

ROLLOUTS = ENGINE_ROLLOUTS
# The done-when questions, with each command's defaults (the NPMLE prior where it applies).
QUESTIONS = engine_questions()
START_SECONDS = 240


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_engine_log(tmp_path_factory.mktemp("engine") / "rollouts.parquet")


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server on a free loopback port, started from the pyspark package (its bundled
    spark-connect jar), as `sbin/start-connect-server.sh` starts it; stopped at the end."""
    if shutil.which("java") is None:
        pytest.skip(JAVA_HINT)
    import pyspark

    home = Path(pyspark.__file__).parent
    port = free_port()
    folder = tmp_path_factory.mktemp("connect")
    env = {**os.environ, "SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable}
    command = [
        str(home / "bin" / "spark-submit"),
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master",
        "local[2]",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        f"spark.sql.warehouse.dir={folder / 'warehouse'}",
        "--conf",
        "spark.sql.session.timeZone=UTC",
        "spark-internal",
    ]
    with open(folder / "server.log", "wb") as out:
        server = subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    try:
        _wait_for(port, server, folder / "server.log")
        yield f"sc://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=60)


def _wait_for(port: int, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the Spark Connect server exited: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the Spark Connect server did not start in {START_SECONDS} s")


_own: dict[tuple[str, ...], tuple[str, str]] = {}


def _ran(*args: object, env: dict[str, str | None] | None = None) -> tuple[str, str]:
    done = sigmatool(*args, "--format", "csv") if env is None else _with_env(env, *args, "--format", "csv")
    assert 0 == done.returncode, done.stderr
    return done.stdout, done.stderr


def _with_env(env: dict[str, str | None], *args: object) -> subprocess.CompletedProcess[str]:
    from tests.conftest import run_cli

    return run_cli(*args, env=env, timeout=300)


def _polars(command: str, path: Path, *args: str) -> tuple[str, str]:
    key = (command, str(path), *args)
    if key not in _own:
        _own[key] = _ran(command, path, *args)
    return _own[key]


@pytest.mark.parametrize("engine", ["duckdb", "spark-connect"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_engines_print_what_polars_prints(question: str, engine: str, log: Path, connect_server: str) -> None:
    command, *args = QUESTIONS[question]
    via = (
        ["--engine", "duckdb"]
        if engine == "duckdb"
        else ["--engine", "spark", "--spark-remote", connect_server]
    )
    assert _polars(command, log, *args) == _ran(command, log, *args, *via)


def test_spark_remote_comes_from_the_environment(log: Path, connect_server: str) -> None:
    command, *args = QUESTIONS["silent-by-source"]
    via = _ran(command, log, *args, "--engine", "spark", env={"SPARK_REMOTE": connect_server})
    assert _polars(command, log, *args) == via


def test_a_local_spark_when_no_server_is_named(log: Path) -> None:
    if shutil.which("java") is None:
        pytest.skip(JAVA_HINT)
    command, *args = QUESTIONS["silent"]
    assert _polars(command, log, *args) == _ran(
        command, log, *args, "--engine", "spark", env={"SPARK_REMOTE": None}
    )


@pytest.fixture(scope="module")
def catalog_table(log: Path, connect_server: str) -> str:
    """The log as table rl.rollouts in the server's catalog (an external parquet table). Made by another
    process: a Spark Connect client in this one would turn the local sessions of tests/engines into
    Spark Connect ones (pyspark marks the process as in Connect mode)."""
    code = (
        "import sys\n"
        "from pyspark.sql import SparkSession\n"
        "spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()\n"
        "spark.sql('CREATE DATABASE IF NOT EXISTS rl')\n"
        "spark.sql(f\"CREATE TABLE IF NOT EXISTS rl.rollouts USING parquet LOCATION '{sys.argv[2]}'\")\n"
        "spark.stop()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, connect_server, str(log.parent)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert 0 == done.returncode, done.stderr
    return "rl.rollouts"


def test_a_catalog_table_reads_as_the_file_does(log: Path, connect_server: str, catalog_table: str) -> None:
    command, *args = QUESTIONS["silent-by-source"]
    via = _ran(
        command, *args, "--engine", "spark", "--spark-remote", connect_server, "--table", catalog_table
    )
    assert _polars(command, log, *args) == via


def test_track_from_a_catalog_table(log: Path, connect_server: str, catalog_table: str) -> None:
    command, *args = QUESTIONS["track"]
    via = _ran(
        command, *args, "--engine", "spark", "--spark-remote", connect_server, "--table", catalog_table
    )
    assert _polars(command, log, *args) == via


def test_hive_step_folders_are_a_column_in_every_engine(small_log: Path, connect_server: str) -> None:
    files = log_files(small_log)
    args = ("--rollouts", "--prompt-col", "prompt_id", "--reward-col", "reward", "--step-col", "step")
    own = _ran("track", files, *args)
    assert own == _ran("track", files, *args, "--engine", "duckdb")
    assert own == _ran("track", files, *args, "--engine", "spark", "--spark-remote", connect_server)


def _one_line(done: subprocess.CompletedProcess[str], code: int, needle: str) -> None:
    assert code == done.returncode, done.stderr
    lines = done.stderr.strip().splitlines()
    assert 1 == len(lines), done.stderr
    assert lines[0].startswith("error: ")
    assert needle in lines[0]


def test_an_unreachable_server_is_one_line(log: Path) -> None:
    refused = f"sc://127.0.0.1:{free_port()}"
    _one_line(sigmatool("silent", log, *ROLLOUTS, "--engine", "spark", "--spark-remote", refused), 1, refused)


def test_a_url_that_is_not_spark_connect_is_one_line(log: Path) -> None:
    done = sigmatool(
        "silent", log, *ROLLOUTS, "--engine", "spark", "--spark-remote", "http://127.0.0.1:15002"
    )
    _one_line(done, 2, "sc://host:port")


def test_a_missing_table_is_one_line(connect_server: str) -> None:
    done = sigmatool(
        "silent", *ROLLOUTS, "--engine", "spark", "--spark-remote", connect_server, "--table", "rl.gone"
    )
    _one_line(done, 1, "rl.gone")


def test_a_missing_column_is_one_line(log: Path, connect_server: str) -> None:
    args = ("--rollouts", "--prompt-col", "nope", "--reward-col", "reward", "--engine", "spark")
    _one_line(sigmatool("silent", log, *args, "--spark-remote", connect_server), 1, "nope")


def test_report_through_duckdb_writes_the_same_page(log: Path, tmp_path: Path) -> None:
    """The report (every section of a rollout log) from DuckDB's counts: the same Markdown but for the command
    line it quotes, figures named alike in two folders."""
    pages = []
    for engine in ("polars", "duckdb"):
        folder = tmp_path / engine
        folder.mkdir()
        done = sigmatool("report", log, *ROLLOUTS, "--engine", engine, "-o", folder / "report.md")
        assert 0 == done.returncode, done.stderr
        # The page quotes its command line and the time it was made: all that may differ.
        made = [line for line in (folder / "report.md").read_text().splitlines() if "- made: " not in line]
        pages.append("\n".join(made).replace(f"--engine {engine} -o {folder}", "…"))
    assert pages[0] == pages[1]
    assert "Silent groups" in pages[0]

"""--engine duckdb: a rollout log counted inside DuckDB gives what polars' own reading gives, to the byte.

Spark (local and through a Spark Connect server) runs the same comparisons in tests/engines/test_engine_spark.py.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from tests.conftest import invoke, run_cli
from tests.log_fixtures import ENGINE_ROLLOUTS, engine_questions, write_engine_log

ROLLOUTS = ENGINE_ROLLOUTS
# A Beta prior: the engines are compared, not the estimators; the NPMLE's fit would only add time.
BETA = ("--prior", "beta")
# The questions the engines must answer as polars does (text prompt keys for track: hashed after the engine).
QUESTIONS = {
    **engine_questions(*BETA),
    "groupsize": ("groupsize", *ROLLOUTS),
    "plan": ("plan", *ROLLOUTS, "--budget", "8"),
    "preflight": ("preflight", *ROLLOUTS),
    # A key holding two problems each: the key check beside the text column runs in the engine too.
    "pooled-key": ("silent", "--rollouts", "--prompt-col", "pair", "--reward-col", "reward", *BETA),
}


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 4 steps of 300 prompts: 9,600 rows (tests/engines/test_engine_spark.py compares on 96,000), and a key
    # `pair` that holds two prompts.
    path = write_engine_log(tmp_path_factory.mktemp("engine") / "rollouts.parquet", steps=4, per_step=300)
    pl.read_parquet(path).with_columns((pl.col("prompt_id") // 2).alias("pair")).write_parquet(path)
    return path


@pytest.fixture(scope="module")
def database(log: Path) -> Path:
    """The log as table rl.rollouts of a DuckDB database file."""
    path = log.with_name("warehouse.duckdb")
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA rl")
        con.execute(f"CREATE TABLE rl.rollouts AS SELECT * FROM read_parquet('{log}')")
    return path


def _ran(*args: object) -> tuple[str, str]:
    """stdout and stderr of a successful run, in-process (the bad inputs below run as real processes)."""
    done = invoke(*args, "--format", "csv")
    assert 0 == done.exit_code, done.stderr
    return done.stdout, done.stderr


@pytest.mark.parametrize("question", QUESTIONS)
def test_duckdb_prints_what_polars_prints(question: str, log: Path) -> None:
    command, *args = QUESTIONS[question]
    own = _ran(command, log, *args)
    assert own == _ran(command, log, *args, "--engine", "duckdb")
    table = pl.read_csv(own[0].encode())
    assert table.height >= 1  # a real table, not an empty one
    if question == "track":  # prompts recur, so every step is compared with the others
        assert (4, True) == (table.height, bool((table["compared_groups"] > 0).all()))
    if question == "pooled-key":
        assert "hold several different 'prompt' texts (key 0: 2)" in own[1]


def test_a_table_of_a_database_file_reads_as_the_file_does(log: Path, database: Path) -> None:
    command, *args = QUESTIONS["silent-by-source"]
    own = _ran(command, log, *args)
    assert own == _ran(command, database, *args, "--engine", "duckdb", "--table", "rl.rollouts")


def test_the_query_counts_what_the_engine_brings_back(log: Path) -> None:
    """The histogram's prompts and rewards add up to the log's own counts (not only to polars' reading)."""
    from sigmatool.load.engine import histogram
    from sigmatool.load.sources import Source
    from sigmatool.options import InputOptions

    options = InputOptions(
        paths=(str(log),), rollouts=True, prompt_col="prompt_id", reward_col="reward", engine="duckdb"
    )
    hist = histogram(options, [Source(str(log), "parquet", log.name)], pl.Float64)
    rows = pl.read_parquet(log)
    per_prompt = rows.group_by("prompt_id").agg(pl.col("reward").count().alias("n"))
    assert per_prompt.height == hist["prompts"].sum()
    assert rows["reward"].null_count() == hist["null_rewards"].sum()
    assert int(rows["reward"].sum()) == (hist["k"] * hist["prompts"]).sum()


def _one_line(done: object, code: int, *needles: str) -> None:
    assert code == done.returncode, done.stderr  # type: ignore[attr-defined]
    lines = done.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert 1 == len(lines), done.stderr  # type: ignore[attr-defined]
    assert lines[0].startswith("error: ")
    for needle in needles:
        assert needle in lines[0]
    assert "Traceback" not in done.stderr  # type: ignore[attr-defined]


TABLE = ("--engine", "duckdb", "--table")


@pytest.mark.parametrize(
    ("args", "code", "needles"),
    [
        ((*ROLLOUTS, *TABLE, "rl.missing"), 1, ("rl.missing",)),
        (
            ("--rollouts", "--prompt-col", "nope", "--reward-col", "reward", *TABLE, "rl.rollouts"),
            1,
            ("nope",),
        ),
        ((*ROLLOUTS, "--table", "rl.rollouts"), 2, ("--engine duckdb or spark",)),
        ((*ROLLOUTS, "--spark-remote", "sc://localhost:1"), 2, ("--engine spark",)),
    ],
    ids=["missing-table", "missing-column", "table-without-engine", "remote-without-spark"],
)
def test_bad_engine_input_is_one_line(
    args: tuple[str, ...], code: int, needles: tuple[str, ...], database: Path
) -> None:
    _one_line(run_cli("silent", database, *args), code, *needles)


def test_engine_reads_a_rollout_log_only(log: Path) -> None:
    done = run_cli("silent", log, "--col", "reward", "--engine", "duckdb")
    _one_line(done, 2, "--rollouts")


def test_engine_does_not_read_stdin(log: Path) -> None:
    done = run_cli("silent", "-", *ROLLOUTS, "--engine", "duckdb", stdin=log.read_bytes())
    _one_line(done, 2, "standard input")


@pytest.mark.parametrize("command", ["silent", "groupsize", "plan"])
def test_per_prompt_rows_need_the_log_itself(command: str, log: Path) -> None:
    """Refused before the log is read (the one line is the only line)."""
    done = run_cli(command, log, *ROLLOUTS, "--engine", "duckdb", "--per-prompt")
    _one_line(done, 2, "leave --engine out")


def test_a_reward_the_engine_cannot_grade_stops_with_its_count(tmp_path: Path) -> None:
    path = tmp_path / "half.csv"
    path.write_text("prompt_id,reward,step\na,1,1\na,0.5,1\nb,0,2\nb,0.5,2\n")
    done = run_cli("silent", path, *ROLLOUTS, "--engine", "duckdb")
    _one_line(done, 1, "2 reward(s)", "neither 0 nor 1", "--engine duckdb")
    tracked = run_cli("track", path, *ROLLOUTS, "--step-col", "step", "--engine", "duckdb")
    _one_line(tracked, 1, "2 reward(s)", "neither 0 nor 1", "--engine duckdb")
    skipped = run_cli("silent", path, *ROLLOUTS, "--engine", "duckdb", "--skip-invalid", "--format", "csv")
    assert (0, skipped.stdout) == (skipped.returncode, _ran("silent", path, *ROLLOUTS, "--skip-invalid")[0])


@pytest.mark.parametrize("package", ["duckdb", "pyspark"])
def test_a_missing_engine_says_what_to_install(package: str, log: Path, tmp_path: Path) -> None:
    """The engine's package cannot be imported (a stand-in that raises ImportError shadows it)."""
    fake = tmp_path / package
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('not installed')\n")
    engine = "duckdb" if package == "duckdb" else "spark"
    done = run_cli("silent", log, *ROLLOUTS, "--engine", engine, env={"PYTHONPATH": str(tmp_path)})
    _one_line(done, 2, f"pip install 'sigmatool[{engine}]'")

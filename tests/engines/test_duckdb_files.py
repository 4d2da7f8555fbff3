"""The SQL route on DuckDB reading the parquet folder itself (Hive-style step=N folders, several files
each), as a user points it at a log on disk: every command prints exactly what `--rollouts` prints."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from sigmatool.sql import histogram_args
from tests.engines.conftest import BIG_ROWS, COMMANDS, ROLLOUTS, csv_out, log_files, printed_query


def duckdb_histogram(log: Path, out: Path, **query_args: object) -> Path:
    """Run the query `sigmatool sql` prints over the log's files and COPY the result to `out` (CSV or
    parquet)."""
    con = duckdb.connect()
    try:
        glob = log_files(log).replace("'", "''")
        con.execute(f"CREATE VIEW rollouts AS SELECT * FROM read_parquet('{glob}', hive_partitioning = true)")
        query = printed_query("duckdb", **{"reward_col": "reward", **query_args})
        fmt = "(FORMAT parquet)" if out.suffix == ".parquet" else "(HEADER, DELIMITER ',')"
        target = str(out).replace("'", "''")
        con.execute(f"COPY ({query}\n) TO '{target}' {fmt}")
    finally:
        con.close()
    return out


# Copied to CSV here, to parquet for the big log below.
@pytest.mark.parametrize("command", COMMANDS)
def test_duckdb_histogram_of_the_folder_prints_what_rollouts_prints(
    small_log: Path, tmp_path: Path, command: str
) -> None:
    hist = duckdb_histogram(small_log, tmp_path / "hist.csv")
    direct = csv_out(*COMMANDS[command], log_files(small_log), *ROLLOUTS, "--reward-col", "reward")
    assert direct == csv_out(*COMMANDS[command], hist, *histogram_args())


def test_duckdb_per_step_histogram_matches_each_steps_folder(small_log: Path, tmp_path: Path) -> None:
    command = "silent"  # every command is checked per step on Spark; one suffices for a second engine
    hist = pl.read_csv(duckdb_histogram(small_log, tmp_path / "hist.csv", step_col="step", by=["source"]))
    for step in range(3):
        one_step = tmp_path / f"hist_step_{step}.csv"
        hist.filter(pl.col("step") == step).drop("step").write_csv(one_step)
        rollouts = [*ROLLOUTS, "--reward-col", "reward", "--by", "source"]
        direct = csv_out(*COMMANDS[command], log_files(small_log, step), *rollouts)
        assert direct == csv_out(*COMMANDS[command], one_step, *histogram_args(["source"]))


@pytest.fixture(scope="module")
def big_duckdb_histogram(big_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return duckdb_histogram(big_log, tmp_path_factory.mktemp("duckdb") / "hist.parquet")


@pytest.mark.parametrize("command", COMMANDS)
def test_duckdb_histogram_of_a_big_log_prints_what_rollouts_prints(
    big_log: Path, big_duckdb_histogram: Path, command: str
) -> None:
    direct = csv_out(*COMMANDS[command], log_files(big_log), *ROLLOUTS, "--reward-col", "reward")
    assert direct == csv_out(*COMMANDS[command], big_duckdb_histogram, *histogram_args())


def test_duckdb_histogram_of_a_big_log_counts_each_graded_prompt_once(
    big_log: Path, big_duckdb_histogram: Path
) -> None:
    hist = pl.read_parquet(big_duckdb_histogram)
    log = pl.scan_parquet(log_files(big_log))
    graded = log.filter(pl.col("reward").is_not_null()).select(pl.col("prompt_id").n_unique()).collect()
    assert BIG_ROWS == log.select(pl.len()).collect().item()
    assert graded.item() == hist["prompts"].sum()

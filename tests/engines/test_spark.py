"""The SQL route on a real Spark: the query `sigmatool sql --dialect spark` prints, run by a local
SparkSession on a multi-file rollout log in Hive-style step=N folders, gives a histogram on which every
command prints exactly what `--rollouts` prints on the log itself (real processes, CSV output compared as
text)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from sigmatool.sql import histogram_args
from tests.engines.conftest import BIG_ROWS, COMMANDS, ROLLOUTS, csv_out, log_files, printed_query

Histogram = Callable[..., str]


@pytest.fixture(scope="module")
def spark_histogram(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Histogram:
    """Run the generated Spark SQL on a log and write its result (once per log, format and query);
    returns the glob of the result's files."""
    done: dict[str, str] = {}

    def run(log: Path, fmt: str = "csv", **query_args: Any) -> str:
        key = repr((str(log), fmt, sorted(query_args.items())))
        if key not in done:
            spark.read.parquet(str(log)).createOrReplaceTempView("rollouts")
            args = {"reward_col": "reward", **query_args}
            result = spark.sql(printed_query("spark", **args))
            out = tmp_path_factory.mktemp("spark-hist")
            writer = result.write.mode("overwrite")
            if fmt == "csv":
                writer.option("header", True).csv(str(out))
            else:
                writer.parquet(str(out))
            done[key] = str(out / f"*.{fmt}")
        return done[key]

    return run


# Exported as CSV here, as parquet for the big log below.
@pytest.mark.parametrize("command", COMMANDS)
def test_spark_histogram_prints_what_rollouts_prints(
    spark_histogram: Histogram, small_log: Path, command: str
) -> None:
    hist = spark_histogram(small_log, "csv")
    direct = csv_out(*COMMANDS[command], log_files(small_log), *ROLLOUTS, "--reward-col", "reward")
    assert direct == csv_out(*COMMANDS[command], hist, *histogram_args())


@pytest.mark.parametrize("command", COMMANDS)
def test_spark_histogram_by_source_with_threshold(
    spark_histogram: Histogram, small_log: Path, command: str
) -> None:
    hist = spark_histogram(small_log, "csv", reward_col="score", threshold=0.6, by=["source"])
    rollouts = [*ROLLOUTS, "--reward-col", "score", "--threshold", "0.6", "--by", "source"]
    direct = csv_out(*COMMANDS[command], log_files(small_log), *rollouts)
    assert direct == csv_out(*COMMANDS[command], hist, *histogram_args(["source"]))


@pytest.mark.parametrize("command", COMMANDS)
def test_spark_per_step_histogram_matches_each_steps_folder(
    spark_histogram: Histogram, small_log: Path, tmp_path: Path, command: str
) -> None:
    hist = pl.read_csv(spark_histogram(small_log, step_col="step"))
    for step in range(3):
        one_step = tmp_path / f"hist_step_{step}.csv"
        hist.filter(pl.col("step") == step).drop("step").write_csv(one_step)
        rollouts = [*ROLLOUTS, "--reward-col", "reward"]
        direct = csv_out(*COMMANDS[command], log_files(small_log, step), *rollouts)
        assert direct == csv_out(*COMMANDS[command], one_step, *histogram_args())


@pytest.mark.parametrize("command", COMMANDS)
def test_spark_per_step_histogram_equals_rollouts_by_the_step_folders(
    spark_histogram: Histogram, small_log: Path, command: str
) -> None:
    hist = spark_histogram(small_log, step_col="step")
    rollouts = [*ROLLOUTS, "--reward-col", "reward", "--by", "step"]
    direct = csv_out(*COMMANDS[command], log_files(small_log), *rollouts)
    assert direct == csv_out(*COMMANDS[command], hist, *histogram_args(step_col="step"))


def test_spark_histogram_counts_every_graded_row_of_a_big_log(
    spark_histogram: Histogram, big_log: Path
) -> None:
    hist = pl.read_parquet(spark_histogram(big_log, "parquet"))
    rows = pl.scan_parquet(log_files(big_log)).select(pl.len(), pl.col("reward").count()).collect()
    assert BIG_ROWS == rows.item(0, 0)
    assert rows.item(0, 1) == (hist["n"] * hist["prompts"]).sum()


@pytest.mark.parametrize("command", COMMANDS)
def test_spark_histogram_of_a_big_log_prints_what_rollouts_prints(
    spark_histogram: Histogram, big_log: Path, command: str
) -> None:
    hist = spark_histogram(big_log, "parquet")
    direct = csv_out(*COMMANDS[command], log_files(big_log), *ROLLOUTS, "--reward-col", "reward")
    assert direct == csv_out(*COMMANDS[command], hist, *histogram_args())

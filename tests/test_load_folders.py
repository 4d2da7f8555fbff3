"""Reading a log as engines write it: ``name=value`` partition folders as columns, a threshold compared in
double precision as SQL compares it, and a file that disappears between opening and reading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from sigmatool.errors import DataError
from sigmatool.load import dataset, histogram, read_histogram
from sigmatool.load.sources import Source, data_error
from sigmatool.options import InputOptions
from tests.conftest import csv_of, invoke

ROLLOUTS = {"rollouts": True, "prompt_col": "prompt_id", "reward_col": "reward"}


def partitioned_log(root: Path, steps: int = 3, seed: int = 5) -> pl.DataFrame:
    """A rollout log written as ``root/step=N/part-i.parquet`` (no step column in the files); returns the
    same rows as one frame with the step as a column."""
    rng = np.random.default_rng(seed)
    frames = []
    for step in range(steps):
        rows = 60
        frame = pl.DataFrame(
            {"prompt_id": rng.integers(0, 12, rows), "reward": rng.integers(0, 2, rows).astype(float)}
        )
        folder = root / f"step={step}"
        folder.mkdir(parents=True)
        frame.head(30).write_parquet(folder / "part-0.parquet")
        frame.tail(30).write_parquet(folder / "part-1.parquet")
        frames.append(frame.with_columns(pl.lit(step, pl.Int64).alias("step")))
    return pl.concat(frames)


def test_a_partition_folder_is_a_by_column(tmp_path: Path) -> None:
    whole = partitioned_log(tmp_path / "log")
    whole.write_parquet(tmp_path / "whole.parquet")
    expected = read_histogram(
        InputOptions(paths=(str(tmp_path / "whole.parquet"),), by=("step",), **ROLLOUTS)
    )
    glob = str(tmp_path / "log" / "step=*" / "*.parquet")
    from_folders = read_histogram(InputOptions(paths=(glob,), by=("step",), **ROLLOUTS))
    assert_frame_equal(expected.frame, from_folders.frame)


def test_the_commands_print_the_same_from_folders_and_from_a_column(tmp_path: Path) -> None:
    partitioned_log(tmp_path / "log").write_parquet(tmp_path / "whole.parquet")
    args = ["--rollouts", "--prompt-col", "prompt_id", "--reward-col", "reward", "--by", "step"]
    expected = csv_of(invoke("budget", tmp_path / "whole.parquet", *args, "--format", "csv"))
    glob = tmp_path / "log" / "step=*" / "*.parquet"
    assert_frame_equal(expected, csv_of(invoke("budget", glob, *args, "--format", "csv")))


def test_a_column_of_the_file_wins_over_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "step=9"
    folder.mkdir()
    pl.DataFrame({"prompt_id": [1, 2], "reward": [1.0, 0.0], "step": [4, 4]}).write_parquet(
        folder / "a.parquet"
    )
    frame = read_histogram(InputOptions(paths=(str(folder / "a.parquet"),), by=("step",), **ROLLOUTS)).frame
    assert [4] == frame["step"].unique().to_list()


def test_folders_are_read_only_for_the_columns_asked_for(tmp_path: Path) -> None:
    folder = tmp_path / "run=a" / "step=1"
    folder.mkdir(parents=True)
    pl.DataFrame({"prompt_id": [1, 2], "reward": [1.0, 0.0]}).write_parquet(folder / "a.parquet")
    frame = read_histogram(InputOptions(paths=(str(folder / "a.parquet"),), by=("run",), **ROLLOUTS)).frame
    assert ["run", "k", "n", "p", "prompts", "rows"] == frame.columns


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        ("step=12", {"step": 12}),
        ("lr=0.5", {"lr": 0.5}),
        ("source=gsm%208k", {"source": "gsm 8k"}),
        ("source=__HIVE_DEFAULT_PARTITION__", {"source": None}),
        ("plain", {}),
        ("=x", {}),
    ],
)
def test_partition_values_are_typed_as_spark_writes_them(folder: str, expected: dict[str, object]) -> None:
    assert expected == Source(f"log/{folder}/part-0.parquet", "parquet", "x").partitions


def test_partitions_of_an_object_leave_out_the_bucket() -> None:
    source = Source("s3://step=1/logs/step=2/part-0.parquet", "parquet", "x")
    assert {"step": 2} == source.partitions


# --------------------------------------------------------------------------------------------- threshold


THRESHOLDS = [0.1, 0.3, 0.7, 0.9]
# The float32 values nearest each threshold, and their neighbours: where 32- and 64-bit comparisons differ.
NEAR = sorted(
    float(x)
    for t in THRESHOLDS
    for x in (
        np.float32(t),
        np.nextafter(np.float32(t), np.float32(0)),
        np.nextafter(np.float32(t), np.float32(1)),
    )
)


@settings(max_examples=25, deadline=None)
@given(
    rewards=st.lists(st.sampled_from(NEAR) | st.floats(0, 1, width=32), min_size=1, max_size=30),
    threshold=st.sampled_from(THRESHOLDS) | st.floats(0, 1, width=32),
)
def test_a_float32_reward_is_compared_with_the_threshold_in_double_precision(
    rewards: list[float], threshold: float, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("f32") / "log.parquet"
    frame = pl.DataFrame({"prompt_id": [0] * len(rewards), "reward": pl.Series(rewards, dtype=pl.Float32)})
    frame.write_parquet(path)
    # Python floats are doubles: the float32 values widen exactly, as an engine widens them for a double.
    right = sum(float(r) >= threshold for r in rewards)
    hist = read_histogram(InputOptions(paths=(str(path),), threshold=threshold, **ROLLOUTS)).frame
    assert right == hist["k"].item()


# --------------------------------------------------------------------------------------------- gone


def test_a_file_removed_after_opening_is_a_data_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "log.parquet"
    pl.DataFrame({"prompt_id": [1, 2], "reward": [1.0, 0.0]}).write_parquet(path)
    with dataset(InputOptions(paths=(str(path),), **ROLLOUTS)) as ds:
        path.unlink()
        with pytest.raises(DataError, match=r"log\.parquet: no such file \(removed while it was read\?\)"):
            histogram(ds)


def test_an_os_error_without_a_file_says_what_failed() -> None:
    sources = [Source("a.csv", "csv", "a.csv"), Source("b.csv", "csv", "b.csv")]
    error = data_error(sources, PermissionError(13, "Permission denied"))
    assert "the input: Permission denied" == str(error)


def test_an_error_naming_one_of_several_files_names_it() -> None:
    sources = [Source("a.csv", "csv", "a.csv"), Source("b.csv", "csv", "b.csv")]
    error = data_error(sources, FileNotFoundError(2, "No such file", "b.csv"))
    assert str(error).startswith("b.csv: no such file")


def test_an_object_store_error_during_the_pass_is_one_line() -> None:
    sources = [Source("s3://bucket/a.parquet", "parquet", "s3://bucket/a.parquet")]
    error = data_error(sources, FileNotFoundError("object-store error: Object at a.parquet not found: <?xml"))
    assert "s3://bucket/a.parquet: no such object" == str(error)

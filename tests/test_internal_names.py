"""A user's columns may be called anything, sigmatool's own helper names included, in every format.

Reading a column named ``__row`` or ``__id`` (the names sigmatool renames the user's columns to) gives the
same answer as the same data under plain names; a reward that is not 0/1 gives the same one-line error in
CSV, parquet and JSON lines.
"""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import invoke

FORMATS = ("csv", "parquet", "jsonl")
# sigmatool's helper names, its output columns, and near misses.
ODD_NAMES = (
    "__row",
    "__id",
    "__reward",
    "__rate",
    "__k",
    "__n",
    "__w",
    "__right",
    "__usable",
    "__bad",
    "___row",
    "prompts",
    "rows",
    "p",
    "k",
    "n",
    "id",
)


def _write(frame: pl.DataFrame, fmt: str, folder: Path, stem: str) -> Path:
    path = folder / f"{stem}.{fmt}"
    if fmt == "csv":
        frame.write_csv(path)
    elif fmt == "parquet":
        frame.write_parquet(path)
    else:
        frame.write_ndjson(path)
    return path


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("reward", [-1, 0.5])
def test_non_binary_reward_is_one_line_in_every_format(tmp_path: Path, fmt: str, reward: float) -> None:
    frame = pl.DataFrame({"q": ["a", "a"], "r": [1.0, float(reward)]})
    path = _write(frame, fmt, tmp_path, "x")
    result = invoke("silent", path, "--rollouts", "--prompt-col", "q", "--reward-col", "r")
    assert 1 == result.exit_code
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "reward is not 0/1" in result.stderr
    assert "--threshold" in result.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_reward_column_named_like_the_row_number(tmp_path: Path, fmt: str) -> None:
    frame = pl.DataFrame({"__id": ["a", "a", "b"], "__row": [1, 0, 1], "__reward": [7, 8, 9]})
    path = _write(frame, fmt, tmp_path, "x")
    result = invoke(
        "silent", path, "--rollouts", "--prompt-col", "__id", "--reward-col", "__row", "--G", "2", "--estimator", "plugin",
        "--format", "csv",
    )  # fmt: skip
    expected = (0.5**2 + 0.5**2 + 1.0) / 2  # prompt a: p = 1/2; prompt b: p = 1
    assert expected == pytest.approx(pl.read_csv(io.StringIO(result.stdout))["silent_rate"][0], rel=1e-15)


def test_by_column_named_like_a_helper_is_refused(tmp_path: Path) -> None:
    path = _write(pl.DataFrame({"q": ["a"], "r": [1], "__null": [0]}), "csv", tmp_path, "x")
    result = invoke("silent", path, "--rollouts", "--prompt-col", "q", "--reward-col", "r", "--by", "__null")
    assert 2 == result.exit_code
    assert "__null" in result.stderr


# --------------------------------------------------------------------------------------------- fuzz


@st.composite
def logs(draw: st.DrawFn) -> tuple[dict[str, list[object]], list[str]]:
    """A rollout log under plain names (prompt, reward, extra0, ...) and the odd names to give them."""
    rows = draw(st.integers(1, 10))
    prompts = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=rows, max_size=rows))
    rewards = draw(st.lists(st.sampled_from([0, 1, 1, 0, None, 0.5, -1]), min_size=rows, max_size=rows))
    extras = draw(st.integers(0, 3))
    names = draw(st.lists(st.sampled_from(ODD_NAMES), min_size=2 + extras, max_size=2 + extras, unique=True))
    columns: dict[str, list[object]] = {"prompt": prompts, "reward": rewards}
    for i in range(extras):
        columns[f"extra{i}"] = draw(st.lists(st.integers(0, 3), min_size=rows, max_size=rows))
    return columns, names


def _run(
    columns: dict[str, list[object]], fmt: str, folder: Path, stem: str, names: list[str]
) -> tuple[int, str]:
    frame = pl.DataFrame(columns, schema_overrides={"reward": pl.Float64}, strict=False)
    renamed = frame.rename(dict(zip(frame.columns, names, strict=True)))
    path = _write(renamed, fmt, folder, stem)
    result = invoke(
        "silent", path, "--rollouts", "--prompt-col", names[0], "--reward-col", names[1], "--G", "2,4",
        "--format", "csv", "--skip-invalid",
    )  # fmt: skip
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(log=logs())
def test_odd_column_names_read_as_plain_ones(
    tmp_path: Path, fmt: str, log: tuple[dict[str, list[object]], list[str]]
) -> None:
    columns, odd = log
    plain = list(columns)
    assert _run(columns, fmt, tmp_path, "plain", plain) == _run(columns, fmt, tmp_path, "odd", odd)


@st.composite
def rate_tables(draw: st.DrawFn) -> tuple[dict[str, list[object]], list[str]]:
    """A table of pass rates and ids under plain names, and the odd names to give them."""
    rows = draw(st.integers(1, 10))
    rates = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, None, 1.5]), min_size=rows, max_size=rows))
    ids = draw(st.lists(st.integers(0, 5), min_size=rows, max_size=rows))
    names = draw(st.lists(st.sampled_from(ODD_NAMES), min_size=3, max_size=3, unique=True))
    columns: dict[str, list[object]] = {"rate": rates, "qid": ids, "extra": [1] * rows}
    return columns, names


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=rate_tables())
def test_odd_names_of_rate_and_id_columns_read_as_plain_ones(
    tmp_path: Path, fmt: str, table: tuple[dict[str, list[object]], list[str]]
) -> None:
    columns, odd = table

    def run(names: list[str], stem: str) -> tuple[int, str]:
        frame = pl.DataFrame(columns, schema_overrides={"rate": pl.Float64}, strict=False)
        path = _write(frame.rename(dict(zip(frame.columns, names, strict=True))), fmt, tmp_path, stem)
        result = invoke(
            "silent", path, "--col", names[0], "--id-col", names[1], "--G", "2,4", "--format", "csv",
            "--skip-invalid",
        )  # fmt: skip
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        return result.exit_code, result.stdout

    assert run(list(columns), "plain") == run(odd, "odd")

"""Several pass-rate columns (or --by groups) at a glance: the table views of silent, budget,
groupsize and plan fit 80 columns and 60 lines with two columns; budget and groupsize show each column's (or
group's) overall rows, and --full every row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import invoke


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("two") / "two.csv"
    columns = {
        name: rng.binomial(8, rng.beta(a, b, 2000)) / 8 for name, a, b in (("a", 0.5, 0.7), ("b", 0.7, 0.5))
    }
    pl.DataFrame(columns).write_csv(path)
    return path


@pytest.fixture(autouse=True)
def eighty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


def _table(two: Path, command: str, *args: str) -> list[str]:
    result = invoke(command, two, "--col", "b", "--col", "a", "--samples", "8", "--format", "table", *args)
    assert result.exit_code == 0, result.stderr
    return result.stdout.splitlines()


@pytest.mark.parametrize("command", ["silent", "budget", "groupsize", "plan"])
def test_two_columns_fit_80_columns_and_60_lines(two: Path, command: str) -> None:
    lines = _table(two, command)
    assert len(lines) <= 60
    assert max(len(line) for line in lines) <= 80


def test_budget_compares_each_column_s_overall_segments(two: Path) -> None:
    shown = "\n".join(_table(two, "budget"))
    assert "0.1–0.2" not in shown  # no bin rows
    assert shown.count("extreme") >= 2
    assert "--full" in shown
    assert "0.1–0.2" in "\n".join(_table(two, "budget", "--full"))


def test_groupsize_compares_each_column_s_row_over_all_prompts(two: Path) -> None:
    compact, full = _table(two, "groupsize"), _table(two, "groupsize", "--full")
    assert len(full) > len(compact) + 15  # ten bins per column


def test_the_data_formats_hold_every_row(two: Path) -> None:
    result = invoke("budget", two, "--col", "a", "--col", "b", "--samples", "8", "--format", "csv")
    assert "bin" in set(pl.read_csv(result.stdout.encode())["segment"].to_list())


@pytest.mark.parametrize("command", ["silent", "budget", "groupsize", "plan", "preflight"])
def test_the_columns_keep_the_order_given(two: Path, command: str) -> None:
    result = invoke(command, two, "--col", "b", "--col", "a", "--samples", "8", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert ["b", "a"] == pl.read_csv(result.stdout.encode())["column"].unique(maintain_order=True).to_list()
    lines = _table(two, command)
    assert [line[:2] for line in lines if line.startswith(("a: ", "b: "))][:2] == ["b:", "a:"]


@pytest.fixture(scope="module")
def grouped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(1)
    path = tmp_path_factory.mktemp("grouped") / "grouped.csv"
    topics = np.repeat(["geometry", "algebra", "counting"], 700)
    pl.DataFrame(
        {"topic": topics, "pass_rate": rng.binomial(8, rng.beta(0.6, 0.6, topics.size)) / 8}
    ).write_csv(path)
    return path


@pytest.mark.parametrize(("command", "rows"), [("budget", 3), ("groupsize", 1)])
def test_by_groups_are_compared_as_columns_are(grouped: Path, command: str, rows: int) -> None:
    args = (command, grouped, "--by", "topic", "--samples", "8", "--format", "table")
    compact = invoke(*args).stdout.splitlines()
    full = invoke(*args, "--full").stdout.splitlines()
    assert len(compact) <= 60
    assert max(len(line) for line in compact) <= 80
    assert sum(line.startswith(("geometry ", "algebra ", "counting ")) for line in compact) == 3 * rows
    assert "each group's bins of p: --full, or the data formats" in compact
    assert sum(line.startswith("algebra ") for line in full) > 10  # its ten bins and more

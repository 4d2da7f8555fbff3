"""The table view at 80 columns: headers of at most two lines, yes/no for booleans, one precision per
column, and columns that are the same in every row moved above the table."""

from __future__ import annotations

import io

import polars as pl
import pytest

from sigmatool.render.table import View, decimals_of, print_table
from tests.conftest import BIGMATH, ROOT, invoke

COMMANDS = {
    "silent": ("silent", BIGMATH, "--G", "4,8,16,32"),
    "budget": ("budget", BIGMATH),
    "groupsize": ("groupsize", BIGMATH),
    "plan": ("plan", BIGMATH, "--budget", "8"),
    "track": ("track", ROOT / "sample_data" / "example_run", "--from", "verl"),
    "simulate": ("simulate", "--prompts", "200", "--steps", "4"),
}
ONE_BLOCK = ("silent", "track")


def _table(name: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke(*COMMANDS[name], "--format", "table")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _header_heights(text: str) -> list[int]:
    """The lines of each table's header: the lines with ┃ just above each ━ rule."""
    lines = text.splitlines()
    heights = []
    for i, line in enumerate(lines):
        if line.startswith("━") or "╇" in line:
            height = 0
            while i - height - 1 >= 0 and "┃" in lines[i - height - 1]:
                height += 1
            heights.append(height)
    return heights


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_header_is_taller_than_two_lines(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert max(_header_heights(_table(name, monkeypatch))) <= 2


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_cell_shows_true_or_false(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cells = [cell.strip() for line in _table(name, monkeypatch).splitlines() for cell in line.split("│")]
    assert [] == [cell for cell in cells if cell in ("True", "False")]


@pytest.mark.parametrize("name", ONE_BLOCK)
def test_the_table_is_one_block(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert 1 == len(_header_heights(_table(name, monkeypatch)))


def test_budget_moves_its_one_group_size_above_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "in every row: G 8" in _table("budget", monkeypatch).splitlines()


def _printed(frame: pl.DataFrame, view: View | None = None) -> str:
    handle = io.StringIO()
    print_table(frame, view or View(), handle, 80)
    return handle.getvalue()


def test_booleans_print_as_yes_and_no() -> None:
    text = _printed(pl.DataFrame({"step": [1, 2], "drift": [True, False]}))
    rows = [line.split("│")[1].strip() for line in text.splitlines() if "│" in line]
    assert ["yes", "no"] == rows


def test_a_constant_column_moves_above_the_table() -> None:
    text = _printed(pl.DataFrame({"G": [8, 8], "p": [0.25, 0.5]}))
    assert "in every row: G 8" == text.splitlines()[0]


def test_a_one_row_table_keeps_every_column() -> None:
    text = _printed(pl.DataFrame({"G": [8], "p": [0.25]}))
    assert "in every row" not in text


def test_a_column_has_one_precision() -> None:
    text = _printed(pl.DataFrame({"step": [1, 2, 3, 4], "ratio": [1.19, 1.074, 0.93, 0.9056]}))
    cells = [line.split("│")[1].strip() for line in text.splitlines() if "│" in line]
    assert {3} == {len(cell.split(".")[1]) for cell in cells}


@pytest.mark.parametrize(
    ("values", "expected"),
    [([0.0, 0.25, 0.5], 2), ([1.0, 2.0], 0), ([123.456, 1.0], 1), ([0.123456], 3), ([float("nan"), 0.5], 1)],
)
def test_decimals_show_each_value_up_to_four_digits(values: list[float], expected: int) -> None:
    assert expected == decimals_of(values)

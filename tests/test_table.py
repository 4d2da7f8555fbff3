"""The table view reads at any width: nothing cut, identifying columns kept, long tables shortened."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import BIGMATH, invoke

WIDTHS = [60, 80, 120, 200]
COMMANDS = {
    "silent": ("silent", BIGMATH, "--G", "4,8,16,32,64"),
    "silent bins": ("silent", BIGMATH, "--G", "8", "--by-bins", "4", "--dapo-cap", "4"),
    "budget": ("budget", BIGMATH, "--G", "8,inf"),
    "groupsize": ("groupsize", BIGMATH, "--law"),
    "simulate": ("simulate", "--prompts", "300", "--steps", "5"),
}
# The widest number of each table (budget leaves the prompts' count to the data formats).
WIDEST = {"silent": "215,608", "budget": "100.00%", "groupsize": "215,608"}


def _table(width: int, *args: object) -> list[str]:
    # In-process: the width comes from $COLUMNS as in a real process (tests/test_table_share.py runs the
    # commands as processes at 80 columns).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", str(width))
        done = invoke(*args, "--format", "table")
    assert 0 == done.exit_code, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_table_fits_the_width_and_cuts_no_number(command: str, width: int) -> None:
    lines = _table(width, *COMMANDS[command])
    text = "\n".join(lines)
    assert width >= max(len(line) for line in lines)
    assert "215,…" not in text
    if command in WIDEST:
        assert WIDEST[command] in text


@pytest.mark.parametrize("width", WIDTHS)
def test_every_block_keeps_the_identifying_columns(width: int) -> None:
    lines = _table(width, *COMMANDS["budget"])
    rows = [line for line in lines if line.startswith(("8 ", "inf "))]
    assert 26 * max(1, sum("━" in line for line in lines)) == len(rows)
    assert all(line.split("│")[1].strip() in ("bin", "extreme", "medium", "all") for line in rows)


def test_bars_show_when_there_is_room_and_go_first_when_there_is_not() -> None:
    assert any("█" in line for line in _table(200, *COMMANDS["budget"]))
    assert not any("█" in line for line in _table(80, *COMMANDS["budget"]))


def test_the_silent_table_keeps_its_g_column_at_80() -> None:
    lines = _table(80, *COMMANDS["silent"])
    rows = [line for line in lines if "│" in line]
    assert ["4", "8", "16", "32", "64"] == [line.split("│")[0].strip() for line in rows]


def test_a_long_table_shows_its_first_rows_and_says_how_to_get_all(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    path = tmp_path / "groups.parquet"
    groups = np.concatenate([np.arange(50_000), rng.integers(0, 50_000, 150_000)])
    pl.DataFrame({"g": groups, "pass_rate": rng.integers(0, 9, groups.size) / 8}).write_parquet(path)
    lines = _table(120, "silent", path, "--by", "g")
    assert 40 == sum(1 for line in lines if "│" in line)
    assert any("first 40 of 50,000 rows shown" in line and "--format csv" in line for line in lines)


def test_a_number_that_is_not_zero_never_shows_as_zero() -> None:
    from sigmatool.render import View
    from sigmatool.render.table import _number

    view = View()
    assert ["0", "<0.001", ">-0.001", "<0.0001", "0.500"] == [
        _number(0.0, "x", view, 0),
        _number(1e-188, "x", view, 0),
        _number(-1e-188, "x", view, 3),
        _number(1e-9, "x", view, 4),
        _number(0.5, "x", view, 3),
    ]

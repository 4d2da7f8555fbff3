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


LONG_NAMES = ("Qwen2.5-Math-7B-Instruct-step-1200-pass-rate", "DeepSeek-R1-Distill-Qwen-1.5B-pass-rate")


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two models' pass rates of 16 samples on 500 prompts, under the long names checkpoints have."""
    rng = np.random.default_rng(3)
    path = tmp_path_factory.mktemp("models") / "two.csv"
    rates = {name: rng.binomial(16, rng.beta(0.6, 0.6, 500)) / 16 for name in LONG_NAMES}
    pl.DataFrame({"prompt_id": [f"p{i}" for i in range(500)], **rates}).write_csv(path)
    return path


@pytest.mark.parametrize("command", ["silent", "budget", "groupsize", "plan", "preflight"])
def test_two_long_model_names_fit_80_columns_and_60_lines(command: str, two_models: Path) -> None:
    lines = _table(80, command, two_models, "--col", LONG_NAMES[0], "--col", LONG_NAMES[1])
    assert 80 >= max(len(line) for line in lines)
    assert 60 >= len(lines)


@pytest.mark.parametrize("command", ["budget", "plan"])
def test_a_shortened_model_name_is_written_out_under_the_table(command: str, two_models: Path) -> None:
    lines = _table(80, command, two_models, "--col", LONG_NAMES[0], "--col", LONG_NAMES[1])
    text = " ".join(" ".join(lines).split())
    assert "column: Qwen2.5-Math-7B… = Qwen2.5-Math-7B-Instruct-step-1200-pass-rate;" in text
    assert "DeepSeek-R1-Dis… = DeepSeek-R1-Distill-Qwen-1.5B-pass-rate" in text


def test_the_data_formats_keep_the_full_names(two_models: Path) -> None:
    done = invoke("budget", two_models, "--col", LONG_NAMES[0], "--col", LONG_NAMES[1], "--format", "csv")
    assert set(LONG_NAMES) == set(pl.read_csv(done.stdout.encode())["column"].to_list())

"""Notes said once: alike but for their column, merged into one naming the columns; repeats dropped; on a
terminal, wrapped under their own text."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool.cli import run
from sigmatool.render.notes import merged, wrapped
from tests.conftest import invoke

READ = "the pass rates in '{}' are all multiples of 1/{n}: read as k right of n = {n} samples"


def test_notes_alike_but_for_their_column_become_one_in_the_order_they_came() -> None:
    lines = [READ.format(c, n=n) for c, n in [("m2", 8), ("m1", 5), ("m0", 8), ("m3", 8)]]
    assert merged(lines) == [
        READ.format("m2', 'm0' and 'm3", n=8),
        READ.format("m1", n=5),
    ]


def test_a_repeated_note_is_said_once_and_different_ones_all_stay() -> None:
    lines = [
        "no --seed: seed 7",
        "--col a: beyond n: prior beta",
        "no --seed: seed 7",
        "--col b: beyond n: x",
    ]
    assert merged(lines) == ["no --seed: seed 7", "--col a: beyond n: prior beta", "--col b: beyond n: x"]


def test_col_prefixed_notes_with_the_same_text_merge() -> None:
    assert merged(["--col a: 3 rows skipped", "--col b: 3 rows skipped"]) == ["--col a and b: 3 rows skipped"]


def test_a_note_naming_two_columns_is_left_whole() -> None:
    lines = [
        "reading counts k of n from columns 'k' and 'n'",
        "reading counts k of n from columns 'j' and 'm'",
    ]
    assert merged(lines) == lines


@pytest.mark.parametrize("width", [40, 60, 80])
def test_a_wrapped_note_fits_the_width_and_keeps_every_word(width: int) -> None:
    line = "note: " + READ.format("a_rather_long_column_name", n=50) + " (--samples 50 confirms it)"
    out = wrapped(line, width, 6).splitlines()
    assert all(len(x) <= width for x in out)
    assert all(x.startswith(" " * 6) and not x.startswith(" " * 7) for x in out[1:])
    assert " ".join(x.strip() for x in out) == line


def test_on_a_terminal_each_note_wraps_and_in_a_pipe_it_stays_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    long = READ.format("model_with_a_long_name", n=50) + " (--samples 50 confirms it)"
    screen = Terminal()
    monkeypatch.setattr("sys.stderr", screen)
    monkeypatch.setenv("COLUMNS", "60")
    run.note([long])
    shown = re.sub(r"\x1b\[[0-9;]*m", "", screen.getvalue()).splitlines()  # rich's dim style
    assert len(shown) > 1
    assert all(len(x) <= 60 for x in shown)
    pipe = io.StringIO()
    monkeypatch.setattr("sys.stderr", pipe)
    run.note([long])
    assert pipe.getvalue() == f"note: {long}\n"


def test_several_columns_read_alike_get_one_reading_note(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    path = tmp_path / "models.parquet"
    pl.DataFrame({c: rng.binomial(8, 0.4, 300) / 8 for c in ("m2", "m0", "m1")}).write_parquet(path)
    result = invoke("silent", path, "--col", "m2", "--col", "m0", "--col", "m1", "--format", "csv")
    reading = [x for x in result.stderr.splitlines() if "multiples of 1/8" in x]
    said = READ.format("m2', 'm0' and 'm1", n=8)
    assert reading == [f"note: {said} (--samples 8 confirms it)"]

"""The table view at 80 columns: every command's default table, and its common variants (--summary, several
G, --by, --law, --bounds, --ci, a prior, another objective), is one block, with headers of at most two lines,
yes/no for booleans, one precision per column, shares that round to zero but are not zero said so, and
columns that are the same in every row (or that restate the request) moved above the table.

Each command runs once, through the CLI with COLUMNS=80; the tests read its output. ``sql`` prints SQL and
``report`` writes a page (its format follows -o), so neither has a table view to test here.
"""

from __future__ import annotations

import io
import re
from functools import cache

import polars as pl
import pytest
from click.testing import CliRunner

from sigmatool.options.plan import sizes_words
from sigmatool.render.table import View, decimals_of, print_table, ranges
from tests.conftest import BIGMATH, ENTRY, ROOT, SAMPLE, TOY

WIDTH = 80
# Big-Math thinned to 8 samples per prompt.
EIGHT = ("silent", SAMPLE / "bigmath_8_samples.csv", "--k-col", "k", "--n-col", "n", "--weight-col", "count")
COMMANDS = {
    "silent": ("silent", BIGMATH),
    "silent several G": ("silent", BIGMATH, "--G", "4,8,16,32"),
    "silent --bounds": (*EIGHT, "--bounds"),
    "silent --ci": ("silent", BIGMATH, "--ci", "0.95", "--replicates", "100"),
    "silent --prior npmle --bounds": (*EIGHT, "--G", "8,16,32", "--prior", "npmle", "--bounds"),
    "budget": ("budget", BIGMATH),
    "budget several G": ("budget", BIGMATH, "--G", "8,inf"),
    "budget --by": ("budget", TOY, "--by", "source"),
    "groupsize": ("groupsize", BIGMATH),
    "groupsize --law": ("groupsize", BIGMATH, "--law"),
    "plan": ("plan", BIGMATH, "--budget", "8"),
    "plan --objective fidelity": ("plan", BIGMATH, "--budget", "8", "--objective", "fidelity"),
    "simulate": ("simulate", "--prompts", "200", "--steps", "4"),
    "track": ("track", ROOT / "sample_data" / "example_run", "--from", "verl"),
    "track --summary": ("track", ROOT / "sample_data" / "example_run", "--from", "verl", "--summary"),
    "preflight": ("preflight", BIGMATH),
    "preflight without the filter": ("preflight", BIGMATH, "--no-filter"),
}


@cache
def _run(*args: object) -> str:
    """The command's stdout at COLUMNS=80 (each command runs once for the whole module)."""
    result = CliRunner().invoke(ENTRY, [str(a) for a in args], env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _table(name: str) -> str:
    return _run(*COMMANDS[name], "--format", "table")


def _rules(text: str) -> list[int]:
    """The line number of each table's header rule (the ━ line under the header)."""
    return [i for i, line in enumerate(text.splitlines()) if line.startswith("━") or "╇" in line]


def _header_heights(text: str) -> list[int]:
    """The lines of each table's header: the lines with ┃ just above each ━ rule."""
    lines = text.splitlines()
    heights = []
    for i in _rules(text):
        height = 0
        while i - height - 1 >= 0 and "┃" in lines[i - height - 1]:
            height += 1
        heights.append(height)
    return heights


def _rows(text: str) -> list[list[str]]:
    """The table's body rows, cell by cell."""
    return [[cell.strip() for cell in line.split("│")] for line in text.splitlines() if "│" in line]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_table_is_one_block(name: str) -> None:
    assert 1 == len(_rules(_table(name)))


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_line_fits_80_columns(name: str) -> None:
    assert WIDTH >= max(len(line) for line in _table(name).splitlines())


@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_header_is_taller_than_two_lines(name: str) -> None:
    assert 2 >= max(_header_heights(_table(name)))


@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_cell_shows_true_or_false(name: str) -> None:
    cells = [cell for row in _rows(_table(name)) for cell in row]
    assert [] == [cell for cell in cells if cell in ("True", "False")]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_share_that_rounds_to_zero_shows_as_zero(name: str) -> None:
    cells = [cell for row in _rows(_table(name)) for cell in row]
    assert [] == [cell for cell in cells if re.search(r"(^|\s)-?0\.00%", cell)]


def _footer(name: str) -> str:
    """The lines under the table, as one text (a footnote may wrap)."""
    lines = _table(name).splitlines()
    last_row = max(i for i, line in enumerate(lines) if "│" in line)
    return " ".join(lines[last_row + 1 :])


@pytest.mark.parametrize(
    ("name", "label"),
    [("silent --bounds", "allowed (--bounds)"), ("silent --ci", "CI (--ci 0.95)")],
)
def test_the_range_column_is_explained_under_the_table(name: str, label: str) -> None:
    assert label in _footer(name)


@pytest.mark.parametrize(
    ("name", "left"),
    [
        ("silent --bounds", "dapo_draws_per_group_learnable"),
        ("budget several G", "prompts"),
        ("groupsize --law", "share_at_target_uniform"),
        ("plan --objective fidelity", "extreme_gradient_share"),
        ("track --summary", "plugin_groups"),
    ],
)
def test_a_column_left_to_the_data_formats_is_named(name: str, left: str) -> None:
    footer = _footer(name)
    named = footer[footer.rindex("more columns in") :].split(":", 1)[1]
    assert left in [n.split()[0] for n in named.split(",")]


def test_track_summary_gives_the_counts_it_leaves_out_with_their_values() -> None:
    run = pl.read_json(io.StringIO(_run(*COMMANDS["track --summary"], "--format", "json")))
    counts = ("uncompared_groups", "unusable_groups", "single_step_prompts", "plugin_groups")
    expected = ", ".join(f"{c} {run[c][0]:,}" for c in counts)
    assert _footer("track --summary").endswith(expected)


def test_track_summary_puts_how_it_judged_above_the_table() -> None:
    from sigmatool.track import MIN_GAP, Z_THRESHOLD

    given = (
        f"given: expected from leave-one-step-out; z threshold {Z_THRESHOLD:g}; min gap {100 * MIN_GAP:.2f}%"
    )
    assert given in _table("track --summary").splitlines()


def test_budget_moves_its_one_group_size_above_the_table() -> None:
    assert "in every row: G 8" in _table("budget").splitlines()


def test_plan_lists_each_distinct_comparison_once() -> None:
    summary = pl.read_csv(io.StringIO(_run(*COMMANDS["plan"], "--format", "csv")))
    assert summary.drop("strategy").unique().height == len(_rows(_table("plan")))


def test_plan_keeps_every_strategy_that_differs_from_the_others() -> None:
    summary = pl.read_csv(io.StringIO(_run(*COMMANDS["plan"], "--format", "csv")))
    shown = {row[0] for row in _rows(_table("plan"))}
    firsts = summary.unique(subset=[c for c in summary.columns if c != "strategy"], keep="first")
    assert set(firsts["strategy"]) == shown


def test_plan_headline_is_at_most_three_lines() -> None:
    lines = [line for line in _table("plan").splitlines() if not line.startswith("Rates read as")]
    assert 3 >= next(i for i, line in enumerate(lines) if "┃" in line)


def test_preflight_puts_its_settings_above_the_table() -> None:
    given = [line for line in _table("preflight").splitlines() if line.startswith("given:")]
    assert ["given: train batch size 512; gen batch size 512; n 16; max gen batches 10;"] == given


def test_a_hidden_column_is_named_in_the_footnote() -> None:
    assert "samples_drawn" in _table("simulate").splitlines()[-1]


def _printed(frame: pl.DataFrame, view: View | None = None) -> str:
    handle = io.StringIO()
    print_table(frame, view or View(), handle, WIDTH)
    return handle.getvalue()


def test_booleans_print_as_yes_and_no() -> None:
    rows = _rows(_printed(pl.DataFrame({"step": [1, 2], "drift": [True, False]})))
    assert ["yes", "no"] == [row[1] for row in rows]


def test_a_constant_column_moves_above_the_table() -> None:
    text = _printed(pl.DataFrame({"G": [8, 8], "p": [0.25, 0.5]}))
    assert "in every row: G 8" == text.splitlines()[0]


def test_a_one_row_table_keeps_every_column() -> None:
    text = _printed(pl.DataFrame({"G": [8], "p": [0.25]}))
    assert "in every row" not in text


def test_a_given_column_leaves_a_one_row_table() -> None:
    text = _printed(pl.DataFrame({"n": [16], "p": [0.25]}), View(given=("n",)))
    assert "given: n 16" == text.splitlines()[0]


def test_an_unset_given_column_leaves_the_table_unsaid() -> None:
    frame = pl.DataFrame({"epochs": [None], "p": [0.25]}, schema={"epochs": pl.Int64, "p": pl.Float64})
    assert "epochs" not in _printed(frame, View(given=("epochs",)))


def test_a_rate_and_its_bounds_read_as_one_range_column() -> None:
    frame = pl.DataFrame(
        {"G": [8], "silent_rate": [0.43], "silent_rate_lo": [0.4287], "silent_rate_hi": [0.4352]}
    )
    view = ranges(View(percent=("silent_rate",)), frame.columns, show=("silent_rate",))
    assert f"{100 * 0.4287:.1f}–{100 * 0.4352:.1f}%" == _rows(_printed(frame, view))[0][-1]


def test_the_ranges_of_rates_not_shown_leave_the_table() -> None:
    frame = pl.DataFrame(
        {"G": [8], "all_right_rate": [0.2], "all_right_rate_ci_lo": [0.1], "all_right_rate_ci_hi": [0.3]}
    )
    view = ranges(View(percent=("all_right_rate",)), frame.columns, show=())
    assert 2 == len(_rows(_printed(frame, view))[0])


@pytest.mark.parametrize(
    ("share", "expected"), [(0.0, "0%"), (3e-17, "<0.01%"), (-3e-17, ">-0.01%"), (0.00005001, "0.01%")]
)
def test_a_share_that_rounds_to_zero_says_whether_it_is_zero(share: float, expected: str) -> None:
    rows = _rows(_printed(pl.DataFrame({"step": [1], "share": [share]}), View(percent=("share",))))
    assert expected == rows[0][1]


def test_a_range_reads_as_one_column() -> None:
    text = _printed(pl.DataFrame({"p_lo": [0.0, 0.5], "p_hi": [0.5, 1.0], "prompts": [3, 4]}))
    assert ["0.0–0.5", "0.5–1.0"] == [row[0] for row in _rows(text)]


def test_the_view_shows_its_own_rows() -> None:
    frame = pl.DataFrame({"step": [1, 2, 3], "x": [0.5, 0.25, 0.125]})
    assert 2 == len(_rows(_printed(frame, View(rows=frame.head(2)))))


def test_a_column_has_one_precision() -> None:
    rows = _rows(_printed(pl.DataFrame({"step": [1, 2, 3, 4], "ratio": [1.19, 1.074, 0.93, 0.9056]})))
    assert {3} == {len(row[1].split(".")[1]) for row in rows}


def test_thousands_are_separated_in_a_column_of_floats() -> None:
    rows = _rows(_printed(pl.DataFrame({"step": [1, 2], "rollouts": [5282.6, 16384.0]})))
    assert ["5,283", "16,384"] == [row[1] for row in rows]


@pytest.mark.parametrize(
    ("values", "expected"),
    [([0.0, 0.25, 0.5], 2), ([1.0, 2.0], 0), ([123.456, 1.0], 1), ([0.123456], 3), ([float("nan"), 0.5], 1)],
)
def test_decimals_show_each_value_up_to_four_digits(values: list[float], expected: int) -> None:
    assert expected == decimals_of(values)


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [
        ((4, 8, 16, 32), "4,8,16,32"),
        ((2, 3, 4, 5, 6), "2..6"),
        ((8, 16, 24, 32), "8..32:8"),
        ((4, 6, 8), "4,6,8"),
    ],
)
def test_plan_sizes_read_as_the_range_they_are(sizes: tuple[int, ...], expected: str) -> None:
    assert expected == sizes_words(sizes)

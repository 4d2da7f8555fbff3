"""A JSON file holding one object: each shape read as the table it stands for, or refused in one line.

Each reading is compared with the same data written as CSV records by hand, read through the usual route.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from sigmatool.errors import DataError
from sigmatool.load import InputOptions, read_histogram
from sigmatool.load.objects import object_table

RATES = {"p1": 0.5, "p2": 0.25, "p3": 0.125, "p4": 1.0}
HISTORY = {"p1": [0.125, 0.5, 0.75], "p2": [0.25, 0.5], "p3": [0.0, 1.0, 0.375]}
GRADES = {"p1": [1, 0, 1, 1], "p2": [0, 0, 1], "p3": [True, False]}


def _hist(path: Path, **options: Any) -> pl.DataFrame:
    return read_histogram(InputOptions(paths=(str(path),), **options)).frame


def _json(tmp_path: Path, obj: object, indent: int | None = None) -> Path:
    path = tmp_path / "object.json"
    path.write_text(json.dumps(obj, indent=indent))
    return path


def _csv(tmp_path: Path, frame: pl.DataFrame) -> Path:
    path = tmp_path / "records.csv"
    frame.write_csv(path)
    return path


@pytest.mark.parametrize("indent", [None, 2])
def test_ids_to_values_read_as_an_id_and_a_value_column(tmp_path: Path, indent: int | None) -> None:
    records = _csv(tmp_path, pl.DataFrame({"id": list(RATES), "pass_rate": list(RATES.values())}))
    assert_frame_equal(_hist(records), _hist(_json(tmp_path, RATES, indent)))


def test_ids_to_rate_lists_read_as_one_row_per_id_and_step(tmp_path: Path) -> None:
    rows = [(key, step, p) for key, ps in HISTORY.items() for step, p in enumerate(ps)]
    records = _csv(tmp_path, pl.DataFrame(rows, schema=["id", "step", "pass_rate"], orient="row"))
    assert_frame_equal(_hist(records, by=("step",)), _hist(_json(tmp_path, HISTORY), by=("step",)))


def test_ids_to_grade_lists_read_as_k_of_n(tmp_path: Path) -> None:
    lines = "\n".join(json.dumps({"id": key, "correct": [int(g) for g in gs]}) for key, gs in GRADES.items())
    (tmp_path / "records.jsonl").write_text(lines)
    expected = _hist(tmp_path / "records.jsonl", col="correct")
    assert_frame_equal(expected, _hist(_json(tmp_path, GRADES)))


def test_a_dict_of_columns_reads_as_that_table(tmp_path: Path) -> None:
    columns = {"prompt": ["a", "b", "c"], "pass_rate": [0.5, 0.25, 1.0]}
    records = _csv(tmp_path, pl.DataFrame(columns))
    assert_frame_equal(_hist(records), _hist(_json(tmp_path, columns)))


def test_ids_to_records_read_as_the_records(tmp_path: Path) -> None:
    obj = {key: {"pass_rate": p} for key, p in RATES.items()}
    records = _csv(tmp_path, pl.DataFrame({"id": list(RATES), "pass_rate": list(RATES.values())}))
    assert_frame_equal(_hist(records), _hist(_json(tmp_path, obj)))


def test_one_record_in_a_json_file_is_one_row(tmp_path: Path) -> None:
    path = _json(tmp_path, {"id": 1, "pass_rate": 0.5}, indent=2)
    assert 1 == _hist(path)["prompts"].sum()


def test_json_lines_in_a_json_file_are_still_records(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    path.write_text('{"pass_rate": 0.5}\n{"pass_rate": 0.25}\n')
    assert 2 == _hist(path)["prompts"].sum()


def test_the_reading_of_ids_to_values_is_noted(tmp_path: Path) -> None:
    notes = read_histogram(InputOptions(paths=(str(_json(tmp_path, RATES)),))).notes
    assert any("mapping 4 ids to values: read as columns 'id' and 'value'" in note for note in notes)


@pytest.mark.parametrize(
    ("obj", "form"),
    [
        ({"a": [[1, 0], [1]], "b": [[0]]}, "lists holding lists"),
        ({"a": [{"x": 1}], "b": [{"x": 0}]}, "lists holding records"),
        ({"a": [3, 7], "b": [9, 1]}, "lists of numbers reaching 9"),
    ],
)
def test_an_object_that_is_no_table_is_refused_naming_what_it_holds(obj: dict[str, Any], form: str) -> None:
    with pytest.raises(DataError, match=form):
        object_table(obj, "f.json")


def test_the_refusal_says_how_to_make_rows() -> None:
    with pytest.raises(DataError, match="jq -c"):
        object_table({"a": [[1, 0]], "b": [[0]]}, "f.json")


def test_an_empty_object_is_refused() -> None:
    with pytest.raises(DataError, match="empty JSON object"):
        object_table({}, "f.json")


def test_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(DataError, match=r"columns of different lengths \(2, 3\)"):
        object_table({"prompt": ["a", "b", "c"], "pass_rate": [0.5, 0.25]}, "f.json")

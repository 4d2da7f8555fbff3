"""A JSON file that holds one object instead of records: what the object stands for, as a table.

Difficulty files are not always lists of records. A ``.json`` file (or stdin) whose whole text is one object
is read by what its values are (docs/input.md, "One JSON object"):

- ids to single values (``{"a": 0.5, "b": 0.25}``): columns ``id`` and ``value``, one row per id;
- ids to lists of grades, true/false or 0/1 (``{"a": [1, 0, 1]}``): columns ``id`` and ``grades``, k of n;
- ids to lists of rates in [0, 1] with a fraction among them, a per-step accuracy history
  (``{"a": [0.125, 0.5]}``): columns ``id``, ``step`` (from 0) and ``value``, one row per id and step;
- ids to records (``{"a": {"pass_rate": 0.5}}``): the records, with the id in a column ``id``;
- a dict of columns (``{"prompt": [...], "pass_rate": [...]}``: lists, one of them named as a column is,
  ``pass_rate``, ``k``, ``prompt``…, or all of one length with text in one): that table, if the lengths agree;
- anything else with a column name among its keys: one record, one row (a JSON-lines file of one line).

An object that none of these fits (ids to lists of lists, or to numbers outside [0, 1]) is refused in one
line saying what it holds and how to make rows of it. The object is parsed once per file
(:func:`object_in`) and handed to polars as JSON lines, so its columns are typed as any JSON input's.
"""

from __future__ import annotations

import functools
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sigmatool.errors import DataError
from sigmatool.load.names import RATE_NAMES, RATE_SUFFIXES

# Keys that name a column of a record rather than a prompt: an object with one of them is a record.
COLUMN_KEYS = ("k", "n", "id", "prompt", "prompt_id", "problem", "question", "difficulty", "reward", "step")
JQ_ROWS = "jq -c 'to_entries[] | {id: .key, value: .value}' FILE.json > rows.jsonl"


@dataclass(frozen=True)
class ObjectTable:
    """The rows one JSON object stands for, what it was read as (a note for people), and the column that
    holds its values where the object's shape names it (``value``, ``grades``), else None."""

    rows: tuple[dict[str, Any], ...]
    note: str
    value: str | None = None

    def ndjson(self) -> bytes:
        """The rows as JSON lines, for polars to type them as it types any JSON input."""
        return "\n".join(json.dumps(row) for row in self.rows).encode()


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    return "list" if isinstance(value, list) else "object"


def _column_name(key: str) -> bool:
    low = key.lower()
    return low in RATE_NAMES or low in COLUMN_KEYS or low.endswith(RATE_SUFFIXES)


def _elements(lists: list[list[Any]]) -> Iterator[Any]:
    for values in lists:
        yield from values


def _lists(obj: dict[str, list[Any]], label: str) -> ObjectTable:
    """Ids to lists: grades (true/false or 0/1), else per-step rates in [0, 1]; anything else is refused."""
    kinds = {_kind(v) for v in _elements(list(obj.values()))} - {"null"}
    numbers = [v for v in _elements(list(obj.values())) if _kind(v) == "number"]
    what = f"{label}: one JSON object mapping {len(obj):,} ids to lists"
    if kinds - {"bool", "number"}:
        inner = ", ".join(sorted(kinds - {"bool", "number"}))
        raise DataError(
            f"{what} holding {inner.replace('list', 'lists').replace('object', 'records')}, not pass rates or "
            f"grades; make one row per prompt with a pass rate, e.g. {JQ_ROWS}"
        )
    if all(isinstance(v, int) for v in numbers) and all(v in (0, 1) for v in numbers):
        # true/false and 0/1 may mix: as 0/1, one type for polars
        grades = tuple(
            {"id": key, "grades": [int(v) if isinstance(v, bool) else v for v in values]}
            for key, values in obj.items()
        )
        return ObjectTable(
            grades, f"{what} of grades: read as columns 'id' and 'grades' (k right of n)", "grades"
        )
    if numbers and not all(0 <= v <= 1 for v in numbers):
        top = max(numbers, key=lambda v: abs(v))
        raise DataError(
            f"{what} of numbers reaching {top:g}, neither pass rates in [0, 1] nor grades; if each list is a "
            "value per step, one row per id and step: jq -c 'to_entries[] | .key as $id | .value | "
            "to_entries[] | {id: $id, step: .key, value: .value}' FILE.json > rows.jsonl"
        )
    rows: tuple[dict[str, Any], ...] = tuple(
        {"id": key, "step": step, "value": value}
        for key, values in obj.items()
        for step, value in enumerate(values)
    )
    steps = max((len(values) for values in obj.values()), default=0)
    return ObjectTable(
        rows,
        f"{what} of pass rates, read as a per-step history: one row per id and step (columns 'id', 'step' "
        f"from 0 to {max(steps - 1, 0)}, 'value'); --by step gives each step, else the steps are pooled",
        "value",
    )


def _columns_of(obj: dict[str, list[Any]], label: str) -> ObjectTable:
    """A dict of columns of one length: that table."""
    lengths = sorted({len(v) for v in obj.values()})
    if len(lengths) > 1:
        raise DataError(
            f"{label}: one JSON object of {len(obj)} columns of different lengths ({', '.join(map(str, lengths))}), "
            "not a table; give every column one value per prompt"
        )
    keys = list(obj)
    rows = tuple(dict(zip(keys, values, strict=True)) for values in zip(*obj.values(), strict=True))
    note = f"{label}: one JSON object of {len(keys)} columns: read as a table of {len(rows):,} rows"
    return ObjectTable(rows, note)


def object_table(obj: dict[str, Any], label: str) -> ObjectTable:
    """The table one JSON object stands for (see the module's docstring), or DataError."""
    if not obj:
        raise DataError(f"{label}: the file holds one empty JSON object: no prompts")
    if {"columns", "data"} <= set(obj) and isinstance(obj["columns"], list) and isinstance(obj["data"], list):
        # A W&B table (a run's media file holds just these two keys; an artifact's adds _type, ncols, nrows).
        raise DataError(
            f"{label}: a W&B table (keys columns, data): read it with --from wandb-table (and --prompt-col, "
            "--reward-col unless it is TRL's completions table)"
        )
    kinds = {_kind(v) for v in obj.values()}
    named = any(_column_name(key) for key in obj)
    if kinds == {"list"}:
        lengths = {len(v) for v in obj.values()}
        text = any(_kind(v) == "text" for v in _elements(list(obj.values())))
        if named or (text and len(lengths) == 1):
            return _columns_of(obj, label)
        return _lists(obj, label)
    if kinds == {"object"} and not named:
        key = "id" if not any("id" in v for v in obj.values()) else "key"
        rows = tuple({key: name, **record} for name, record in obj.items())
        return ObjectTable(
            rows, f"{label}: one JSON object mapping {len(obj):,} ids to records: column {key!r}"
        )
    if not named and kinds - {"null"} in ({"number"}, {"text"}, {"number", "bool"}):
        rows = tuple({"id": key, "value": value} for key, value in obj.items())
        note = (
            f"{label}: one JSON object mapping {len(obj):,} ids to values: read as columns 'id' and 'value'"
        )
        return ObjectTable(rows, note, "value")
    return ObjectTable((obj,), "")


def _one_object(handle: io.BufferedReader) -> dict[str, Any] | None:
    """The object a JSON file holds when its whole text is one object; None for JSON lines or anything else
    (their reader names what is wrong). A first line that is a whole object followed by more is JSON lines,
    found without reading further."""
    first = handle.readline()
    try:
        obj = json.loads(first)
    except ValueError:
        try:
            obj = json.loads(first + handle.read())
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None
    rest = handle.read(1 << 16).strip()
    return obj if isinstance(obj, dict) and not rest else None


@functools.lru_cache(maxsize=8)
def _cached(path: str, size: int, mtime: int, label: str) -> ObjectTable | None:
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip()
        if not head.startswith(b"{"):
            return None
        handle.seek(0)
        obj = _one_object(handle)
    return None if obj is None else object_table(obj, label)


def object_in(path: str, label: str) -> ObjectTable | None:
    """The table of a local JSON file whose whole text is one object (parsed once per file and change);
    None when it holds records (JSON lines, an array)."""
    info = os.stat(path)
    return _cached(path, info.st_size, info.st_mtime_ns, label)


def object_in_text(text: bytes, label: str) -> ObjectTable | None:
    """:func:`object_in` for a JSON text already read (a remote file)."""
    if not text.lstrip().startswith(b"{"):
        return None
    obj = _one_object(io.BufferedReader(io.BytesIO(text)))
    return None if obj is None else object_table(obj, label)

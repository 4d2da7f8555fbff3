"""Random small files of every text format through every command: no traceback, a documented exit code,
and when the run succeeds, the answer the reference maths gives.

Each file has a pass-rate column (valid rates, out-of-range numbers, NaN, text, empty cells, nested values)
beside random columns with odd names (unicode, spaces, punctuation) and mixed values.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import invoke

# Random files by the hundred: `make test-slow` runs them.
pytestmark = pytest.mark.slow

G = 8
# Characters that may appear in names and text: letters of several scripts, digits, spaces, punctuation.
ALPHABET = st.characters(
    codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp"), exclude_characters="\"'\t,;|"
)
NAMES = st.text(ALPHABET, min_size=1, max_size=8).filter(lambda s: s.strip() == s and s != "")


def _valid_rate() -> st.SearchStrategy[object]:
    return st.one_of(
        st.floats(0.0, 1.0, allow_nan=False),
        st.sampled_from([0, 1, 0.0, 1.0, -0.0, 1e-300, 5e-324]),
    )


def _bad_rate() -> st.SearchStrategy[object]:
    return st.one_of(
        st.floats(1.0, 1e300, exclude_min=True),
        st.floats(-1e300, 0.0, exclude_max=True).filter(lambda x: x != 0.0),
        st.just(math.nan),
        st.text(st.characters(categories=("L",)), min_size=1, max_size=5),
    )


def _other_value() -> st.SearchStrategy[object]:
    return st.one_of(
        st.none(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=False),
        st.text(ALPHABET, max_size=6),
        st.booleans(),
    )


@st.composite
def tables(draw: st.DrawFn, nested: bool) -> dict[str, list[object]]:
    rows = draw(st.integers(1, 12))
    rate = st.one_of(_valid_rate(), st.none()) | _bad_rate()
    if nested:
        rate = (
            rate | st.lists(st.floats(0, 1), max_size=2) | st.dictionaries(NAMES, st.integers(), max_size=1)
        )
    columns: dict[str, list[object]] = {"pass_rate": draw(st.lists(rate, min_size=rows, max_size=rows))}
    others = draw(
        st.lists(NAMES, max_size=3, unique=True).map(lambda ns: [n for n in ns if n != "pass_rate"])
    )
    value = _other_value() | (st.lists(st.integers(), max_size=2) if nested else st.nothing())
    for name in others:
        columns[name] = draw(st.lists(value, min_size=rows, max_size=rows))
    return columns


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    return str(value)


def _write(columns: dict[str, list[object]], fmt: str, folder: Path) -> Path:
    path = folder / f"data.{fmt}"
    names = list(columns)
    rows = list(zip(*columns.values(), strict=True))
    if fmt in ("csv", "tsv"):
        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        writer.writerow(names)
        writer.writerows([[_text(v) for v in row] for row in rows])
        path.write_text(buffer.getvalue())
    else:
        records = [dict(zip(names, row, strict=True)) for row in rows]
        if fmt == "json":
            path.write_text(json.dumps(records))
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _expected(rates: list[object], fmt: str) -> float | None:
    """The silent rate the maths gives, or None when the input must be refused."""
    if any(isinstance(rate, list) for rate in rates):
        return _expected_from_grades(rates)
    values = []
    for rate in rates:
        if rate is None or (isinstance(rate, str) and not rate.strip()):
            continue  # a missing value: skipped and counted
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            return None
        if math.isnan(rate) or not 0.0 <= rate <= 1.0:
            return None
        values.append(float(rate))
    if not values:
        return None
    return math.fsum(p**G + (1.0 - p) ** G for p in values) / len(values)


def _expected_from_grades(rates: list[object]) -> float | None:
    """A column of lists is a list of grades per prompt (docs/datasets.md): p = right / graded. Refused: a
    list with no grades or a grade other than 0/1, and lists mixed with anything but missing values."""
    values = []
    for grades in rates:
        if grades is None:
            continue
        if not isinstance(grades, list) or not grades or any(g not in (0.0, 1.0) for g in grades):
            return None
        values.append(sum(grades) / len(grades))
    if not values:
        return None
    return math.fsum(p**G + (1.0 - p) ** G for p in values) / len(values)


def _text_and_lists(values: list[object]) -> bool:
    return any(isinstance(v, str) for v in values) and any(isinstance(v, list) for v in values)


def _non_finite(value: object) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _check(columns: dict[str, list[object]], fmt: str, folder: Path) -> None:
    path = _write(columns, fmt, folder)
    expected = _expected(columns["pass_rate"], fmt)
    if fmt in ("json", "jsonl") and any(_non_finite(v) for values in columns.values() for v in values):
        expected = None  # NaN and Infinity are not JSON: the file is refused, whichever column holds them
    codes = []
    for command in ("silent", "budget", "groupsize"):
        sizes = ("--G", str(G)) if command != "groupsize" else ()
        # The reference is the plug-in: lists of fewer than G grades would otherwise get the default prior.
        result = invoke(command, path, "--col", "pass_rate", *sizes, "--prior", "none", "--format", "csv")
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code in (0, 1, 2)
        codes.append(result.exit_code)
        if command == "silent" and result.exit_code == 0:
            rate = pl.read_csv(io.StringIO(result.stdout))["silent_rate"][0]
            assert expected is not None, result.stdout
            assert pytest.approx(expected, rel=1e-12, abs=1e-300) == rate
    if fmt in ("json", "jsonl") and any(_text_and_lists(v) for k, v in columns.items() if k != "pass_rate"):
        # polars reads JSON rows whole: a column of text and lists is unreadable to it, used or not, and
        # the file is then refused with one line; it may also read it (an empty list can be null text).
        assert codes[0] in {0 if expected is not None else 1, 1}
    else:
        assert (0 if expected is not None else 1) == codes[0]
    assert [codes[0]] * 3 == codes


FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
@FUZZ
@given(columns=tables(nested=False))
def test_random_delimited_files(tmp_path: Path, fmt: str, columns: dict[str, list[object]]) -> None:
    _check(columns, fmt, tmp_path)


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
@FUZZ
@given(columns=tables(nested=True))
def test_random_json_files(tmp_path: Path, fmt: str, columns: dict[str, list[object]]) -> None:
    _check(columns, fmt, tmp_path)

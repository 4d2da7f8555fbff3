"""Shared test helpers: the sample data and a CLI runner that reads CSV output back with polars."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner, Result

from sigmatool.cli import app

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
BIGMATH = SAMPLE / "bigmath_solve_rates.parquet"
BIGMATH_COUNTS = SAMPLE / "bigmath_solve_rate_counts.csv"
TOY = SAMPLE / "toy_pass_rates.csv"


def invoke(*args: object, input: str | bytes | None = None) -> Result:
    """Run the CLI in-process; arguments are stringified."""
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


def csv_of(result: Result) -> pl.DataFrame:
    """The CSV a successful command printed, as a frame."""
    assert result.exit_code == 0, result.stderr
    return pl.read_csv(io.StringIO(result.stdout))


@pytest.fixture
def write_csv(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write text to a CSV file under tmp_path and return its path."""

    def _write(text: str, name: str = "data.csv") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return _write

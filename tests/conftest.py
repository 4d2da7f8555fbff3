"""Shared test helpers: the sample data and a CLI runner that reads CSV output back with polars."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import click
import polars as pl
import pytest
from click.testing import CliRunner, Result

from sigmatool.cli import main

# The trainers' own code, copied with its docstrings: their examples need torch, so pytest does not run them.
collect_ignore = ["trainer_excerpts.py"]

# The table view fits $COLUMNS when it does not go to a terminal: fix it, so outputs do not depend on the
# terminal the tests were started from (xdist workers inherit their parent's).
os.environ["COLUMNS"] = "100"

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
BIGMATH = SAMPLE / "bigmath_solve_rates.parquet"
BIGMATH_COUNTS = SAMPLE / "bigmath_solve_rate_counts.csv"
TOY = SAMPLE / "toy_pass_rates.csv"


def _entry(args: tuple[str, ...]) -> None:
    sys.exit(main(list(args)))


# The console script's path through sigmatool.cli.main (one place for exit codes), inside click's runner,
# which captures stdout and stderr apart.
ENTRY = click.Command(
    "sigmatool",
    callback=_entry,
    params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
    context_settings={
        "ignore_unknown_options": True,
        "allow_interspersed_args": False,
        "help_option_names": [],
    },
)


def invoke(*args: object, input: str | bytes | None = None) -> Result:
    """Run the CLI in-process, as the console script does; arguments are stringified."""
    return CliRunner().invoke(ENTRY, [str(a) for a in args], input=input)


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


def headline(stdout: str) -> str:
    """The table view's leading sentence, however the width wrapped it: the lines above the table (but
    silent's sparkline, the columns that are the same in every row, or given, and the sentence on how the
    input was read, which tests/test_reading.py tests)."""
    lines = []
    for line in stdout.splitlines():
        if "┃" in line or "│" in line or line.startswith(("in every row:", "given:")):
            break
        if line.startswith("silent vs G:"):
            continue
        lines.append(line.strip())
    return READING.sub("", " ".join(lines)).strip()


# The headline's first sentence where the input could have been misread (sigmatool.load.histogram._reading).
READING = re.compile(r"\A(?:Rates read as|Read as) .*?\)\.\s*")


def run_cli(
    *args: object,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m sigmatool`` as a real process; stdin is /dev/null unless bytes are given.

    ``env`` changes this process's environment for it: a value of None removes the variable.
    """
    changed = {**os.environ, **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "sigmatool", *[str(a) for a in args]],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        cwd=cwd,
        env={name: value for name, value in changed.items() if value is not None},
        timeout=timeout,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    )


def run_in(*args: object) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli`'s result from an in-process run (:func:`invoke`): for the many cases of a class of
    input that another test already runs through a real process."""
    result = invoke(*args)
    return subprocess.CompletedProcess([str(a) for a in args], result.exit_code, result.stdout, result.stderr)


def one_error_line(stderr: str) -> str:
    """The single `error: …` line a failed run prints (notes may precede it); fails if there is not one."""
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert 1 == len(errors), stderr
    assert "Traceback" not in stderr
    return errors[0]

"""What reaches a terminal: binary formats are refused there, progress is shown there and nowhere else.

Each test runs a real process whose stdout (or stderr) is a pseudo-terminal, as a person's shell gives it.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from sigmatool.errors import ExitCode
from tests.conftest import TOY, one_error_line


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other end closed (EIO on Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _with_stdout_on_a_terminal(*args: object) -> tuple[int, bytes, str]:
    """Run sigmatool with stdout on a pty: its exit code, what reached the terminal and its stderr."""
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "sigmatool", *map(str, args)],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    ) as process:
        os.close(follower)
        shown = _read_all(leader)
        _, stderr = process.communicate(timeout=120)
    os.close(leader)
    return process.returncode, shown, stderr.decode()


@pytest.fixture(scope="module")
def parquet_to_a_terminal() -> tuple[int, bytes, str]:
    return _with_stdout_on_a_terminal("silent", TOY, "-f", "parquet")


def test_parquet_to_a_terminal_is_a_usage_error(parquet_to_a_terminal: tuple[int, bytes, str]) -> None:
    assert int(ExitCode.USAGE) == parquet_to_a_terminal[0]


def test_parquet_to_a_terminal_writes_nothing_there(parquet_to_a_terminal: tuple[int, bytes, str]) -> None:
    assert b"" == parquet_to_a_terminal[1]


def test_parquet_to_a_terminal_points_to_an_output_file(
    parquet_to_a_terminal: tuple[int, bytes, str],
) -> None:
    assert "-o FILE.parquet" in one_error_line(parquet_to_a_terminal[2])


def test_parquet_in_a_pipe_is_written(tmp_path: Path) -> None:
    import polars as pl

    done = subprocess.run(
        [sys.executable, "-m", "sigmatool", "silent", str(TOY), "-f", "parquet"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    (tmp_path / "out.parquet").write_bytes(done.stdout)
    assert 0 < pl.read_parquet(tmp_path / "out.parquet").height


def test_parquet_to_a_file_from_a_terminal_is_written(tmp_path: Path) -> None:
    code, _, _ = _with_stdout_on_a_terminal("silent", TOY, "-f", "parquet", "-o", tmp_path / "out.parquet")
    assert int(ExitCode.OK) == code

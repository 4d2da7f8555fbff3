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
from sigmatool.progress import shown, steps, working
from tests.conftest import TOY, one_error_line, run_cli


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


# --------------------------------------------------------------------------------------------- progress

# A small bootstrap under a fitted prior: the kind of work that shows its progress.
BOOTSTRAP = ("silent", TOY, "--samples", "16", "--prior", "npmle", "--ci", "0.95", "--replicates", "3")


def _with_stderr_on_a_terminal(*args: object) -> tuple[int, str, str]:
    """Run sigmatool with stderr on a pty: its exit code, its stdout and what reached the terminal."""
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "sigmatool", *map(str, args)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
    ) as process:
        os.close(follower)
        shown = _read_all(leader)
        stdout, _ = process.communicate(timeout=120)
    os.close(leader)
    return process.returncode, stdout.decode(), shown.decode(errors="replace")


@pytest.fixture(scope="module")
def bootstrap_on_a_terminal() -> tuple[int, str, str]:
    return _with_stderr_on_a_terminal(*BOOTSTRAP)


@pytest.mark.slow
def test_the_bootstrap_shows_its_progress_on_a_terminal(
    bootstrap_on_a_terminal: tuple[int, str, str],
) -> None:
    assert "--ci: bootstrap replicates" in bootstrap_on_a_terminal[2]


@pytest.mark.slow
def test_the_progress_leaves_stdout_to_the_data(bootstrap_on_a_terminal: tuple[int, str, str]) -> None:
    assert bootstrap_on_a_terminal[1].startswith("G,prompts,")


@pytest.mark.slow
def test_the_bootstrap_shows_no_progress_in_a_pipe() -> None:
    done = run_cli(*BOOTSTRAP)
    assert [] == [line for line in done.stderr.splitlines() if not line.startswith("note: ")]


def test_steps_give_every_item_in_order() -> None:
    assert [0, 1, 2] == list(steps(range(3), "counting", 3))


def test_steps_print_nothing_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    list(steps(range(3), "counting", 3))
    assert "" == capsys.readouterr().err


def test_progress_inside_progress_shows_only_the_outer_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with working("outer"):
        assert not shown()

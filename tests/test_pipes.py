"""Pipes: a reader that stops early (`| head -1`) ends the run quietly with exit 0, in every format.

The pipe is real: its reading end is closed before sigmatool writes, so every write meets EPIPE, or a real
`head -1` reads the first line of a long output and leaves.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import BIGMATH, TOY

# Real processes in real pipes: `make test-slow` runs them.
pytestmark = pytest.mark.slow

CASES = {
    "csv": ("silent", TOY, "--format", "csv"),
    "tsv": ("silent", TOY, "--format", "tsv"),
    "json": ("budget", TOY, "--format", "json"),
    "jsonl": ("budget", TOY, "--format", "jsonl"),
    "parquet": ("silent", TOY, "--format", "parquet"),
    "table": ("groupsize", TOY, "--format", "table"),
    "per-prompt csv": ("silent", BIGMATH, "--per-prompt", "--format", "csv"),
    "per-prompt parquet": ("silent", BIGMATH, "--per-prompt", "--format", "parquet"),
    "per-prompt json": ("groupsize", TOY, "--per-prompt", "--format", "json"),
    "help": ("silent", "--help"),
    "top-level help": ("--help",),
    "version": ("--version",),
}


def _into_closed_pipe(*args: object) -> subprocess.CompletedProcess[bytes]:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "sigmatool", *[str(a) for a in args]],
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("case", list(CASES))
def test_a_closed_pipe_ends_the_run_quietly(case: str) -> None:
    done = _into_closed_pipe(*CASES[case])
    assert 0 == done.returncode
    assert b"Traceback" not in done.stderr
    assert b"error" not in done.stderr


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "table"])
def test_head_takes_the_first_line_and_the_pipeline_succeeds(fmt: str) -> None:
    command = f"set -o pipefail; {sys.executable} -m sigmatool silent {BIGMATH} --per-prompt --format {fmt} | head -1"
    done = subprocess.run(
        ["bash", "-c", command],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert 0 == done.returncode
    assert 1 == len(done.stdout.splitlines())
    assert "Traceback" not in done.stderr

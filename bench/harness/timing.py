"""Timing whole processes: wall time and peak resident memory from the kernel, and pairs run in turns."""

from __future__ import annotations

import dataclasses
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Run:
    """One process run to its end."""

    wall_s: float
    peak_mib: float
    stdout: str


class CommandError(RuntimeError):
    """A measured process exited with an error."""


# Runs one command and reports its wall time and peak memory. A process's peak memory (ru_maxrss) starts at
# the peak of the process it was forked from, and Python's subprocess shares this benchmark's memory until
# exec (vfork), so each command is started from this small launcher instead.
LAUNCHER = """
import os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as handle:
    handle.write(f"{time.perf_counter() - start} {usage.ru_maxrss}")
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def measure(argv: Sequence[str]) -> Run:
    """Run one process to its end: its wall time, and its peak resident memory from the kernel (wait4)."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as tmp,
    ):
        report = Path(tmp) / "usage"
        launcher = [sys.executable, "-S", "-c", LAUNCHER, str(report), *argv]
        code = subprocess.run(
            launcher, stdout=out, stderr=err, stdin=subprocess.DEVNULL, check=False
        ).returncode
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
        if code != 0 or not report.exists():
            last = stderr.strip().splitlines()[-1:] or ["(no message)"]
            raise CommandError(f"exited with {code}: {last[0]}")
        wall, maxrss_kib = report.read_text().split()
    return Run(float(wall), int(maxrss_kib) / 1024, stdout)  # ru_maxrss is in KiB on Linux


@dataclasses.dataclass(frozen=True)
class Pair:
    """sigmatool, then the reference right after it; ``ref_s`` is the reference's time as reported."""

    sigma: Run
    ref: Run
    ref_s: float  # the measured wall time, or with an extrapolated compute part

    @property
    def ratio(self) -> float:
        return self.sigma.wall_s / self.ref_s


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")

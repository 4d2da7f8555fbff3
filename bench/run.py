#!/usr/bin/env python3
"""sigmatool's benchmark: whole commands against two references, on synthetic data with a fixed seed.

    python bench/run.py --size quick     # under a minute (make bench-quick)
    python bench/run.py --size full      # 10^8-row datasets, about 1 GB of disk (make bench)

The datasets are written into a temporary folder (or ``--data DIR``, kept and reused). Every case then runs
as its own process, and the benchmark records that process's wall time and peak resident memory
(``ru_maxrss`` from ``os.wait4``). Each sigmatool command is timed against two references on the same file:

- the floor: polars reading the one needed column and counting its values (for a rollout log: the two
  columns, grouped to (k, n) per prompt and counted);
- the plain approach: pandas loads the column into memory and numpy computes the same quantity for every
  row (vectorised). For groupsize that is the exact search run per prompt, in Python, on a subsample whose
  compute time is extrapolated to every row; the table marks such figures.

The floor and sigmatool run in turns, so that a busy machine slows both alike. The plain approach prints its
answers, and the benchmark checks that sigmatool printed the same ones. The report goes to stdout and to
``bench/out/results.md``; progress goes to stderr. The exit status is 1 if an answer disagrees.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

HERE = Path(__file__).resolve().parent
SEED = 20260607
SAMPLES = 64  # pass rates are k/64, as Big-Math's: 65 distinct values
GROUP = 8
ROLLOUTS_PER_PROMPT = 32  # a rollout log of 4 epochs, each logging a group of 8 per prompt
CHUNK = 4_000_000  # rows generated at a time, so that the generator stays small
ROW_GROUP = 1_000_000
SILENT_G = (4, 8, 16, 32, 64)
BUDGET_G = (GROUP, "inf")
FIDELITY = 0.95
MAX_G = 4096  # groupsize's default, given explicitly so that the plain search stops at the same G
REPEAT_BUDGET_S = 60.0  # stop repeating a case once its runs have taken this long

# ------------------------------------------------------------------------------------------------ data


@dataclasses.dataclass(frozen=True)
class Data:
    """One generated dataset: k/64 pass rates, continuous distinct pass rates, or a rollout log."""

    kind: str  # "rates", "continuous" or "rollouts"
    rows: int

    @property
    def file(self) -> str:
        return f"{self.kind}_{self.rows}.parquet"


def _true_rates(rng: np.random.Generator, size: int) -> np.ndarray:
    """A U-shaped mix of hard and easy prompts, like Big-Math's."""
    hard = rng.random(size) < 0.5
    return np.where(hard, rng.beta(0.7, 1.6, size), rng.beta(1.6, 0.7, size))


def _rate_tables(data: Data, rng: np.random.Generator) -> Iterator[pa.Table]:
    for start in range(0, data.rows, CHUNK):
        p = _true_rates(rng, min(CHUNK, data.rows - start))
        if data.kind == "rates":
            p = rng.binomial(SAMPLES, p) / SAMPLES
        yield pa.table({"pass_rate": p})


def _rollout_tables(data: Data, rng: np.random.Generator) -> Iterator[pa.Table]:
    """Each epoch visits every prompt once, in a random order, and logs a group of 8 rollouts."""
    prompts = data.rows // ROLLOUTS_PER_PROMPT
    p_true = _true_rates(rng, prompts)
    step = CHUNK // GROUP
    for _ in range(ROLLOUTS_PER_PROMPT // GROUP):
        order = rng.permutation(prompts)
        for start in range(0, prompts, step):
            ids = np.repeat(order[start : start + step], GROUP)
            reward = (rng.random(ids.size) < p_true[ids]).astype(np.int8)
            yield pa.table({"prompt_id": ids.astype(np.int64), "reward": reward})


def generate(data: Data, folder: Path) -> Path:
    """Write one dataset in row groups (kept if a file with as many rows is already there)."""
    path = folder / data.file
    if path.exists() and pq.ParquetFile(path).metadata.num_rows == data.rows:
        return path
    rng = np.random.default_rng([SEED, zlib.crc32(data.file.encode())])
    tables = _rollout_tables(data, rng) if data.kind == "rollouts" else _rate_tables(data, rng)
    partial = path.with_suffix(".partial")
    first = next(tables)
    with pq.ParquetWriter(partial, first.schema) as writer:
        writer.write_table(first, row_group_size=ROW_GROUP)
        for table in tables:
            writer.write_table(table, row_group_size=ROW_GROUP)
    partial.replace(path)
    return path


# ------------------------------------------------------------------------------------------ references

FLOOR_VALUES = """
import sys, polars as pl
path, col = sys.argv[1:3]
counts = pl.scan_parquet(path).group_by(col).len().collect(engine="streaming")
print(counts.height)
"""

FLOOR_ROLLOUTS = """
import sys, polars as pl
path = sys.argv[1]
per_prompt = pl.scan_parquet(path).group_by("prompt_id").agg(k=pl.col("reward").sum(), n=pl.len())
counts = per_prompt.group_by("k", "n").len().collect(engine="streaming")
print(counts.height)
"""

# The plain approach: load the column(s) with pandas, then numpy on every row. Prints its answers as JSON.
PLAIN_HEAD = """
import json, math, sys, time
import numpy as np, pandas as pd
args = json.loads(sys.argv[1])
if args["rollouts"]:
    frame = pd.read_parquet(args["path"], columns=["prompt_id", "reward"])
    per_prompt = frame.groupby("prompt_id")["reward"].agg(["sum", "count"])
    del frame
    p = (per_prompt["sum"] / per_prompt["count"]).to_numpy(dtype=np.float64)
else:
    p = pd.read_parquet(args["path"], columns=["pass_rate"])["pass_rate"].to_numpy(dtype=np.float64)
t_loaded = time.perf_counter()
out = {"rows": int(p.size), "compute_rows": int(p.size)}

def expected_sigma(p, G):
    q = 1.0 - p
    total = np.zeros_like(p)
    for k in range(1, G):
        total += math.comb(G, k) * p**k * q ** (G - k) * math.sqrt(k * (G - k))
    return total / G
"""

PLAIN_TAIL = """
out["compute_s"] = time.perf_counter() - t_loaded
print(json.dumps(out))
"""

PLAIN_SILENT = """
for G in args["G"]:
    right, wrong = p**G, (1.0 - p) ** G
    out[f"silent_rate {G}"] = float(np.mean(right + wrong))
    out[f"all_right_rate {G}"] = float(np.mean(right))
"""

PLAIN_BUDGET = """
bins = np.clip(np.floor(p * 10), 0, 9).astype(np.int64)
extreme = (p < 0.1) | (p > 0.9)
for G in args["G"]:
    if G == "inf":
        grpo, drgrpo = np.sqrt(p * (1.0 - p)), p * (1.0 - p)
    else:
        grpo, drgrpo = expected_sigma(p, G), p * (1.0 - p) * (1.0 - 1.0 / G)
    out[f"grpo extreme {G}"] = float(grpo[extreme].sum() / grpo.sum())
    out[f"drgrpo extreme {G}"] = float(drgrpo[extreme].sum() / drgrpo.sum())
    out[f"grpo bins {G}"] = (np.bincount(bins, weights=grpo, minlength=10) / grpo.sum()).tolist()
"""

# The exact search per prompt: double G until φ(G, p) ≥ φ*, then bisect (φ rises with G).
PLAIN_GROUPSIZE = """
target, max_G = float(args["fidelity"]), int(args["max_G"])

def fidelity(p, G):
    k = np.arange(1, G)
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, G + 1)))))
    log_pmf = log_fact[G] - log_fact[k] - log_fact[G - k] + k * math.log(p) + (G - k) * math.log1p(-p)
    return float(np.exp(log_pmf) @ np.sqrt(k * (G - k))) / G / math.sqrt(p * (1.0 - p))

def group_size(p):
    if p <= 0.0 or p >= 1.0:
        return None
    lo, hi = 1, 2
    while fidelity(p, hi) < target:
        if hi >= max_G:
            return None
        lo, hi = hi, min(2 * hi, max_G)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fidelity(p, mid) >= target else (mid, hi)
    return hi

deadline = t_loaded + float(args["budget_s"])
sizes = []
for value in p[: int(args["subsample"])]:
    sizes.append(group_size(float(value)))
    if time.perf_counter() > deadline:
        break
out["compute_rows"] = len(sizes)
"""

# ---------------------------------------------------------------------------------------------- timing


@dataclasses.dataclass
class Run:
    wall_s: float
    peak_mib: float
    stdout: str
    runs: int = 1


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
            raise RuntimeError(f"{' '.join(argv)}\nexited with {code}:\n{stderr}")
        wall, maxrss_kib = report.read_text().split()
    return Run(float(wall), int(maxrss_kib) / 1024, stdout)  # ru_maxrss is in KiB on Linux


def timed(argvs: Sequence[Sequence[str]], repeat: int) -> list[Run]:
    """Each command ``repeat`` times in turns (fewer once REPEAT_BUDGET_S has passed).

    Per command: the median wall time, the largest peak memory, the last output.
    """
    runs: list[list[Run]] = [[] for _ in argvs]
    start = time.perf_counter()
    for _ in range(repeat):
        for argv, done in zip(argvs, runs, strict=True):
            done.append(measure(argv))
        if time.perf_counter() - start > REPEAT_BUDGET_S:
            break
    return [
        Run(
            statistics.median(r.wall_s for r in done),
            max(r.peak_mib for r in done),
            done[-1].stdout,
            len(done),
        )
        for done in runs
    ]


# ----------------------------------------------------------------------------------------------- cases

Check = Callable[[pl.DataFrame, dict[str, Any]], list[str]]


@dataclasses.dataclass(frozen=True)
class Targets:
    """The performance targets for one case; None where a target does not apply."""

    floor_ratio: float | None = None  # sigmatool's time at most this multiple of the floor's
    speedup: float | None = None  # at least this many times faster than the plain approach
    peak_mib: float | None = None
    wall_s: float | None = None

    def text(self) -> str:
        parts = []
        if self.floor_ratio is not None:
            parts.append(f"≤ {self.floor_ratio:g}× floor")
        if self.speedup is not None:
            parts.append(f"≥ {self.speedup:g}× faster than plain")
        if self.peak_mib is not None:
            parts.append(f"peak < {self.peak_mib / 1024:g} GiB")
        if self.wall_s is not None:
            parts.append(f"< {self.wall_s:g} s")
        return ", ".join(parts)


BIG_TABLE = Targets(floor_ratio=1.5, speedup=10.0, peak_mib=1024.0)


@dataclasses.dataclass(frozen=True)
class Case:
    """One sigmatool command on one dataset, with its plain reference and its targets."""

    label: str
    data: Data
    command: tuple[str, ...]
    plain: str
    plain_args: dict[str, Any]
    check: Check | None
    targets: Targets = Targets()

    def argv(self, path: Path) -> list[str]:
        if self.data.kind == "rollouts":
            cols = ["--rollouts", "--prompt-col", "prompt_id", "--reward-col", "reward"]
        else:
            cols = ["--col", "pass_rate"]
        return [sys.executable, "-m", "sigmatool", *self.command, str(path), *cols, "--format", "csv"]

    def plain_argv(self, path: Path) -> list[str]:
        args = {"path": str(path), "rollouts": self.data.kind == "rollouts", **self.plain_args}
        return [sys.executable, "-c", PLAIN_HEAD + self.plain + PLAIN_TAIL, json.dumps(args)]

    def floor_argv(self, path: Path) -> list[str]:
        if self.data.kind == "rollouts":
            return [sys.executable, "-c", FLOOR_ROLLOUTS, str(path)]
        return [sys.executable, "-c", FLOOR_VALUES, str(path), "pass_rate"]


def _close(name: str, got: float | None, want: float) -> list[str]:
    if got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
        return []
    return [f"{name}: sigmatool {got!r}, plain {want!r}"]


def check_silent(out: pl.DataFrame, plain: dict[str, Any]) -> list[str]:
    problems = []
    for row in out.iter_rows(named=True):
        for col in ("silent_rate", "all_right_rate"):
            problems += _close(f"{col} G={row['G']}", row[col], plain[f"{col} {row['G']}"])
    return problems


def check_budget(out: pl.DataFrame, plain: dict[str, Any]) -> list[str]:
    problems = []
    for G in out["G"].unique(maintain_order=True).to_list():
        at_G = out.filter(pl.col("G") == G)
        extreme = at_G.filter(pl.col("segment") == "extreme").row(0, named=True)
        for method in ("grpo", "drgrpo"):
            problems += _close(
                f"{method}_share extreme G={G}", extreme[f"{method}_share"], plain[f"{method} extreme {G}"]
            )
        bins = at_G.filter(pl.col("segment") == "bin")["grpo_share"].to_list()
        for b, (got, want) in enumerate(zip(bins, plain[f"grpo bins {G}"], strict=True)):
            problems += _close(f"grpo_share bin {b} G={G}", got, want)
    return problems


@dataclasses.dataclass(frozen=True)
class Size:
    rates: tuple[int, ...]  # rows of each k/64 dataset
    continuous: int
    rollouts: int
    repeat: int  # runs of the floor and of sigmatool per case (the median is reported)
    groupsize_subsample: int  # rows of the plain per-prompt group-size search …
    groupsize_budget_s: float  # … or fewer, when this much compute time has passed
    targets: bool


SIZES = {
    "quick": Size(
        (10**6,), 10**6, 10**6, repeat=1, groupsize_subsample=500, groupsize_budget_s=2.0, targets=False
    ),
    "full": Size(
        (10**7, 10**8),
        10**7,
        10**8,
        repeat=5,
        groupsize_subsample=20_000,
        groupsize_budget_s=30.0,
        targets=True,
    ),
}


def _power(n: int) -> str:
    exponent = round(math.log10(n))
    return f"10^{exponent}" if 10**exponent == n else f"{n:,}"


def cases(size: Size) -> list[Case]:
    out: list[Case] = []
    for rows in size.rates:
        targets = BIG_TABLE if size.targets and rows >= 10**8 else Targets()
        out += _commands(Data("rates", rows), f"k/64 pass rates, {_power(rows)} rows", size, targets)
    continuous = Data("continuous", size.continuous)
    for case in _commands(continuous, f"continuous p, {_power(continuous.rows)} rows", size, Targets()):
        if case.command[0] == "groupsize" and size.targets:
            case = dataclasses.replace(case, targets=Targets(wall_s=60.0))
        out.append(case)
    out.append(
        Case(
            f"silent --rollouts, {_power(size.rollouts)} rollout rows",
            Data("rollouts", size.rollouts),
            ("silent", "--G", ",".join(map(str, SILENT_G))),
            PLAIN_SILENT,
            {"G": SILENT_G},
            check_silent,
            Targets(peak_mib=2048.0) if size.targets else Targets(),
        )
    )
    return out


def _commands(data: Data, what: str, size: Size, targets: Targets) -> list[Case]:
    groupsize_args = {
        "fidelity": FIDELITY,
        "max_G": MAX_G,
        "subsample": size.groupsize_subsample,
        "budget_s": size.groupsize_budget_s,
    }
    return [
        Case(f"silent, {what}", data, ("silent", "--G", ",".join(map(str, SILENT_G))), PLAIN_SILENT,
             {"G": SILENT_G}, check_silent, targets),
        Case(f"budget, {what}", data, ("budget", "--G", ",".join(map(str, BUDGET_G))), PLAIN_BUDGET,
             {"G": BUDGET_G}, check_budget, targets),
        Case(f"groupsize --fidelity {FIDELITY:g}, {what}", data, ("groupsize", "--fidelity", f"{FIDELITY:g}", "--max-G", str(MAX_G)),
             PLAIN_GROUPSIZE, groupsize_args, None, targets),
    ]  # fmt: skip


# --------------------------------------------------------------------------------------------- running


@dataclasses.dataclass
class Result:
    case: Case
    sigma: Run
    floor: Run
    plain: Run
    plain_s: float  # measured, or with the compute part extrapolated to every row
    plain_rows: int  # rows (prompts, for a rollout log) that the plain approach had to compute
    computed_rows: int  # of those, how many it computed (fewer when extrapolated)
    problems: list[str]

    @property
    def extrapolated(self) -> bool:
        return self.computed_rows < self.plain_rows

    @property
    def floor_ratio(self) -> float:
        return self.sigma.wall_s / self.floor.wall_s

    @property
    def speedup(self) -> float:
        return self.plain_s / self.sigma.wall_s

    def misses(self) -> list[str]:
        t = self.case.targets
        out = []
        if t.floor_ratio is not None and self.floor_ratio > t.floor_ratio:
            out.append(f"{self.floor_ratio:.2f}× floor")
        if t.speedup is not None and self.speedup < t.speedup:
            out.append(f"only {self.speedup:.1f}× faster than plain")
        if t.peak_mib is not None and self.sigma.peak_mib >= t.peak_mib:
            out.append(f"peak {self.sigma.peak_mib:,.0f} MiB")
        if t.wall_s is not None and self.sigma.wall_s >= t.wall_s:
            out.append(f"{self.sigma.wall_s:.1f} s")
        return out

    def met(self) -> str:
        if not self.case.targets.text():
            return "–"
        misses = self.misses()
        return "yes" if not misses else "**no**: " + "; ".join(misses)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_case(case: Case, path: Path, size: Size) -> Result:
    floor, sigma = timed([case.floor_argv(path), case.argv(path)], size.repeat)
    (plain,) = timed([case.plain_argv(path)], 1)
    answer = json.loads(plain.stdout.strip().splitlines()[-1])
    rows, computed = int(answer["rows"]), int(answer["compute_rows"])
    plain_s = plain.wall_s
    if computed < rows:
        # Loading as measured; the compute time of the subsample scaled to every row.
        plain_s += float(answer["compute_s"]) * (rows / computed - 1)
    problems: list[str] = []
    if case.check is not None:
        output = pl.read_csv(io.StringIO(sigma.stdout), schema_overrides={"G": pl.String})
        problems = case.check(output, answer)
    return Result(case, sigma, floor, plain, plain_s, rows, computed, problems)


def available_commands() -> set[str]:
    from sigmatool.cli import app

    return {command.name or "" for command in app.registered_commands}


def _runs(results: list[Result]) -> str:
    counts = sorted({r.sigma.runs for r in results}, reverse=True)
    if len(counts) == 1:
        return f"{counts[0]} each"
    fewer = [f"{r.case.label}: {r.sigma.runs}" for r in results if r.sigma.runs < counts[0]]
    return f"{counts[0]} each, fewer once a case has taken a minute: " + "; ".join(fewer)


def report(results: list[Result], size_name: str, elapsed_s: float, load: tuple[float, float]) -> str:
    lines = [
        f"# sigmatool benchmark ({size_name})",
        "",
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"polars {pl.__version__}, numpy {np.__version__}. Load average {load[0]:.1f} at the start, "
        f"{load[1]:.1f} at the end; whole benchmark {elapsed_s:.0f} s.",
        "",
        "| case | sigmatool s | floor s | plain s | × floor | faster than plain | peak MiB "
        "| floor / plain peak MiB | target | met? |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        star = "\\*" if r.extrapolated else ""
        lines.append(
            f"| {r.case.label} | {r.sigma.wall_s:.2f} | {r.floor.wall_s:.2f} | {r.plain_s:,.1f}{star} "
            f"| {r.floor_ratio:.2f}× | {r.speedup:,.1f}×{star} | {r.sigma.peak_mib:,.0f} "
            f"| {r.floor.peak_mib:,.0f} / {r.plain.peak_mib:,.0f} | {r.case.targets.text() or '–'} | {r.met()} |"
        )
    lines += [
        "",
        "Times are wall seconds of whole processes, interpreter start included; the floor and sigmatool "
        f"alternate, and each figure is the median of their runs ({_runs(results)}); the plain approach runs "
        "once. Peak is the process's largest resident memory.",
        "**× floor**: sigmatool's time over the floor's (polars reading the needed column(s) and counting "
        "values). **faster than plain**: the plain approach's time over sigmatool's (pandas loads the column, "
        "numpy computes every row).",
    ]
    extrapolated = [r for r in results if r.extrapolated]
    if extrapolated:
        ran = "; ".join(f"{r.computed_rows:,} of {r.case.data.file}" for r in extrapolated)
        lines.append(
            "\\* extrapolated: the plain per-prompt group-size search ran in Python on the first rows of the "
            f"file ({ran}; it stops after {SIZES[size_name].groupsize_budget_s:g} s), and its compute time is "
            "scaled to every row and added to the measured load time."
        )
    checked = [r for r in results if r.case.check is not None]
    bad = [p for r in checked for p in r.problems]
    verdict = "they all agree to 1e-9." if not bad else "**they disagree**: " + "; ".join(bad)
    if checked:
        lines.append(
            f"sigmatool's answers were checked against the plain approach's in {len(checked)} cases: {verdict}"
        )
    with_targets = [r for r in results if r.case.targets.text()]
    missed = [r for r in with_targets if r.misses()]
    if with_targets:
        lines.append(f"Targets met in {len(with_targets) - len(missed)} of {len(with_targets)} cases.")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="quick")
    parser.add_argument(
        "--data", type=Path, help="write the datasets here, keep them, and reuse them next time"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder of datasets")
    parser.add_argument(
        "--out", type=Path, default=HERE / "out", help="folder of results.md (default: bench/out)"
    )
    parser.add_argument("--only", default="", help="run only the cases whose label contains this text")
    opts = parser.parse_args(argv)
    size = SIZES[opts.size]
    start, load_start = time.perf_counter(), os.getloadavg()[0]
    commands = available_commands()
    todo = [c for c in cases(size) if opts.only in c.label]
    for case in todo:
        if case.command[0] not in commands:
            log(f"skipped (sigmatool has no {case.command[0]} command): {case.label}")
    todo = [c for c in todo if c.command[0] in commands]
    folder = opts.data or Path(tempfile.mkdtemp(prefix="sigmatool-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        paths: dict[Data, Path] = {}
        for data in dict.fromkeys(c.data for c in todo):
            log(f"generating {data.file} ({data.rows:,} rows) …")
            paths[data] = generate(data, folder)
        results = []
        for case in todo:
            log(f"{case.label} …")
            results.append(run_case(case, paths[case.data], size))
    finally:
        if opts.data or opts.keep:
            log(f"datasets kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    text = report(results, opts.size, time.perf_counter() - start, (load_start, os.getloadavg()[0]))
    print(text)
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "results.md").write_text(text, encoding="utf-8")
    return 1 if any(r.problems for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

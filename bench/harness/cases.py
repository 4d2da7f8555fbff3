"""The cases: a sigmatool command on a dataset, the references it is paired with, and its targets."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.data import BY, Data
from harness.timing import Run

REFS = Path(__file__).resolve().parent / "refs"
_SCRIPT = Path(sys.executable).with_name("sigmatool")  # the console script, as a user runs it
SIGMATOOL = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "sigmatool"]
SILENT_G = (4, 8, 16, 32, 64)
MAX_G = 4096  # groupsize's default, given explicitly so that the plain search stops at the same G
GiB = 1024.0  # MiB


def last_json(stdout: str) -> dict[str, Any]:
    """The JSON line a reference program prints last."""
    answer: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return answer


@dataclasses.dataclass(frozen=True)
class Reference:
    """A program sigmatool is timed against: one of refs/*.py with a JSON argument, or a ``-c`` program."""

    name: str
    script: str = ""  # refs/<script>.py
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    code: str = ""  # the ``python -c`` program when there is no script
    max_pairs: int | None = None  # fewer pairs for a slow reference

    @property
    def answers(self) -> bool:
        """It prints the numbers sigmatool should print."""
        return self.script in ("numpy_ref", "duckdb_ref", "groupsize_ref")

    def argv(self, data: Data | None, path: Path | None, out: Path) -> list[str]:
        if not self.script:
            return [sys.executable, "-c", self.code]
        assert data is not None
        args = {
            "path": str(path),
            "col": "pass_rate",
            "by": data.by,
            "rollouts": data.rollouts,
            "discrete": data.discrete,
            "out": str(out),
            **self.params,
        }
        return [sys.executable, str(REFS / f"{self.script}.py"), json.dumps(args)]

    def seconds(self, run: Run) -> tuple[float, str]:
        """Its time, with a search that stopped early extrapolated to every value; a note if so."""
        if self.script != "groupsize_ref":
            return run.wall_s, ""
        answer = last_json(run.stdout)
        units, computed = int(answer["units"]), int(answer["computed"])
        if computed >= units:
            return run.wall_s, ""
        # The load and numpy.unique as measured; the compute time of the searched values scaled to all.
        extra = float(answer["compute_s"]) * (units / computed - 1)
        what = "rows" if self.params.get("mode") == "rows" else "distinct values"
        return run.wall_s + extra, f"searched {computed:,} of {units:,} {what}"


@dataclasses.dataclass(frozen=True)
class Target:
    """A performance target: sigmatool's median ratio to a reference, its median time, or its peak."""

    kind: str  # "ratio", "wall" or "peak"
    bound: float  # a ratio, seconds, or MiB
    ref: str = ""  # the reference of a ratio
    strict: bool = False  # < instead of ≤

    def text(self) -> str:
        op = "<" if self.strict else "≤"
        if self.kind == "ratio" and self.bound < 1:
            return f"≥ {1 / self.bound:g}× faster than {self.ref}"
        if self.kind == "ratio":
            return f"{op} {self.bound:g}× {self.ref}"
        if self.kind == "wall":
            return f"{op} {self.bound:g} s"
        return f"peak {op} {self.bound / GiB:g} GiB"

    def met(self, value: float) -> bool:
        return value < self.bound if self.strict else value <= self.bound


@dataclasses.dataclass(frozen=True)
class Case:
    """One sigmatool command: its arguments (DATA and OUT stand for the data and an output file)."""

    section: str
    label: str
    data: Data | None
    args: tuple[str, ...]
    refs: tuple[Reference, ...]
    check: str = ""  # "silent", "budget", "groupsize", "per-prompt", or "" when nothing is checked
    targets: tuple[Target, ...] = ()
    rounds: int | None = None  # pairs per reference, if not the size's

    def argv(self, path: Path | None, out: Path) -> list[str]:
        named = {"DATA": str(path), "OUT": str(out)}
        return [*SIGMATOOL, *(named.get(a, a) for a in self.args)]


@dataclasses.dataclass(frozen=True)
class Size:
    name: str
    rates: tuple[int, ...]  # rows of each k/64 dataset
    continuous: int
    rollouts: int  # rows of the 32-rollouts-a-prompt log
    rollouts4: int  # rows of the 4-rollouts-a-prompt log
    topic_rows: int
    topics: int
    rounds: int  # pairs of sigmatool and each reference, per case …
    startup_rounds: int  # … and for the start-up cases (whatever the time)
    min_rounds: int  # at least this many …
    case_budget_s: float  # … then no new round once a case has taken this long
    slow_pairs: int  # pairs with a slow reference (the Python search; numpy at 10^8 rows)
    search_rows: int  # the plain group-size search stops after this many values …
    search_s: float  # … or this many seconds, and its time is extrapolated
    targets: bool
    table_refs: bool  # the table-view --by cases against every reference (else only the floor)


SIZES = {
    "quick": Size(
        "quick",
        rates=(10**5,),
        continuous=10**2,  # groupsize takes seconds on 10^4 distinct values; here the search covers all
        rollouts=10**5,
        rollouts4=10**5,
        topic_rows=10**5,
        topics=2_000,
        rounds=1,
        startup_rounds=3,
        min_rounds=1,
        case_budget_s=0.0,
        slow_pairs=1,
        search_rows=100,
        search_s=0.5,
        targets=False,
        table_refs=False,  # to stay under a minute
    ),
    "full": Size(
        "full",
        rates=(10**7, 10**8),
        continuous=10**7,
        rollouts=10**8,
        rollouts4=10**8,
        topic_rows=10**7,
        topics=200_000,
        rounds=5,
        startup_rounds=20,
        min_rounds=2,
        case_budget_s=60.0,
        slow_pairs=2,
        search_rows=20_000,
        search_s=15.0,
        targets=True,
        table_refs=True,
    ),
}
PEAK_1G = Target("peak", GiB, strict=True)


def _columns(data: Data) -> tuple[str, ...]:
    if data.rollouts:
        return ("--rollouts", "--prompt-col", "prompt_id", "--reward-col", "reward")
    return ("--col", "pass_rate", *(("--by", BY) if data.by else ()))


def _command(data: Data, command: str, *options: str, view: str = "csv") -> tuple[str, ...]:
    return (command, "DATA", *_columns(data), *options, "--format", view)


def _gs(G: tuple[int | str, ...]) -> str:
    return ",".join(map(str, G))


def floor() -> Reference:
    return Reference("floor", "floor")


def numpy(task: str, G: tuple[int | str, ...], slow: int | None = None) -> Reference:
    return Reference("numpy", "numpy_ref", {"task": task, "G": list(G)}, max_pairs=slow)


def duckdb(task: str, G: tuple[int | str, ...]) -> Reference:
    return Reference("duckdb", "duckdb_ref", {"task": task, "G": list(G)})


def search(size: Size, mode: str, fidelity: float, per_prompt: bool = False) -> Reference:
    params = {
        "mode": mode,
        "fidelity": fidelity,
        "max_G": MAX_G,
        "subsample": size.search_rows,
        "budget_s": size.search_s,
        "per_prompt": per_prompt,
    }
    name = "per-row search" if mode == "rows" else "unique, then search"
    return Reference(name, "groupsize_ref", params, max_pairs=size.slow_pairs)


def continuous_cases(size: Size) -> list[Case]:
    """1. Every pass rate distinct: nothing for a histogram to compress."""
    data, on = Data("continuous", size.continuous), "1. Continuous pass rates"
    t = size.targets
    gs = ("--fidelity", "0.9", "--max-G", str(MAX_G))
    return [
        Case(on, f"silent --G 8, {data.describe()}", data, _command(data, "silent", "--G", "8"),
             (numpy("silent", (8,)), duckdb("silent", (8,)), floor()), "silent",
             (Target("ratio", 1.5, "numpy"), Target("ratio", 3.0, "duckdb"), PEAK_1G) if t else ()),
        Case(on, f"budget --G 8, {data.describe()}", data, _command(data, "budget", "--G", "8"),
             (numpy("budget", (8,)), duckdb("budget", (8,)), floor()), "budget",
             (Target("ratio", 2.0, "numpy"), PEAK_1G) if t else ()),
        Case(on, f"groupsize --fidelity 0.9, {data.describe()}", data, _command(data, "groupsize", *gs),
             (search(size, "rows", 0.9), search(size, "unique", 0.9), floor()), "groupsize",
             (Target("wall", 2.5, strict=True), PEAK_1G) if t else ()),
        Case(on, f"groupsize --fidelity 0.9 --per-prompt -o x.parquet, {data.describe()}", data,
             ("groupsize", "DATA", *_columns(data), *gs, "--per-prompt", "-o", "OUT"),
             (search(size, "rows", 0.9, True), search(size, "unique", 0.9, True), floor()), "per-prompt",
             (Target("wall", 8.0, strict=True), PEAK_1G) if t else ()),
    ]  # fmt: skip


def rollout_cases(size: Size) -> list[Case]:
    """2. Rollout logs: one row per answer, aggregated to (k, n) per prompt."""
    out, on = [], "2. Rollout logs"
    for data, G in ((Data("rollouts4", size.rollouts4), (8,)), (Data("rollouts", size.rollouts), SILENT_G)):
        slow = size.slow_pairs if data.rows >= 10**8 else None
        targets = [Target("peak", 2 * GiB, strict=True)]
        if data.kind == "rollouts4":
            targets.append(Target("ratio", 1.3, "floor"))
        out.append(
            Case(on, f"silent --rollouts --G {_gs(G)}, {data.describe()}", data,
                 _command(data, "silent", "--G", _gs(G)), (floor(), duckdb("silent", G), numpy("silent", G, slow)),
                 "silent", tuple(targets) if size.targets else ())
        )  # fmt: skip
    return out


def by_cases(size: Size) -> list[Case]:
    """3. Many --by groups, each summarised, as CSV and as the table view."""
    out, on = [], f"3. --by {BY}: {size.topics:,} groups"
    for kind in ("topics_rates", "topics_continuous"):
        data = Data(kind, size.topic_rows, size.topics)
        for command in ("silent", "budget"):
            for view in ("csv", "table"):
                refs = (numpy(command, (8,)), duckdb(command, (8,)), floor())
                out.append(
                    Case(on, f"{command} --by {BY} --G 8 ({view}), {data.describe()}", data,
                         _command(data, command, "--G", "8", view=view),
                         refs if view == "csv" or size.table_refs else refs[-1:], command if view == "csv" else "",
                         (Target("wall", 5.0, strict=True), PEAK_1G) if size.targets else ())
                )  # fmt: skip
    return out


def startup_cases(size: Size) -> list[Case]:
    """4. Start-up: short runs, so many pairs."""
    on, n = "4. Start-up", size.startup_rounds
    bare, imports = (
        Reference("python -c pass", code="pass"),
        Reference("import polars, numpy", code="import polars, numpy"),
    )
    tiny = Data("ten_rows", 10)
    return [
        Case(on, "sigmatool --version", None, ("--version",), (bare,), "",
             (Target("ratio", 3.0, bare.name, strict=True),), rounds=n),
        Case(on, f"sigmatool silent ten_rows.csv --G 8 ({tiny.describe()})", tiny, ("silent", "DATA", "--G", "8"),
             (imports,), "", (Target("ratio", 1.2, imports.name, strict=True),), rounds=n),
    ]  # fmt: skip


def rates_cases(size: Size) -> list[Case]:
    """5. k/64 pass rates: 65 distinct values, whatever the rows."""
    out, on = [], "5. k/64 pass rates"
    for rows in size.rates:
        data = Data("rates", rows)
        big, slow = size.targets and rows >= 10**8, size.slow_pairs if rows >= 10**8 else None
        targets = (Target("ratio", 1.3, "floor"), PEAK_1G)
        gs = ("--fidelity", "0.95", "--max-G", str(MAX_G))
        for G, command in (((8,), "silent"), (SILENT_G, "silent"), ((8, "inf"), "budget")):
            out.append(
                Case(on, f"{command} --G {_gs(G)}, {data.describe()}", data, _command(data, command, "--G", _gs(G)),
                     (floor(), numpy(command, G, slow), duckdb(command, G)), command,
                     (*targets, Target("ratio", 0.1, "numpy")) if big else ())
            )  # fmt: skip
        out.append(
            Case(on, f"groupsize --fidelity 0.95, {data.describe()}", data, _command(data, "groupsize", *gs),
                 (floor(), search(size, "rows", 0.95), search(size, "unique", 0.95)), "groupsize",
                 (*targets, Target("ratio", 0.1, "per-row search")) if big else ())
        )  # fmt: skip
    return out


def cases(size: Size) -> list[Case]:
    return [
        *continuous_cases(size),
        *rollout_cases(size),
        *by_cases(size),
        *startup_cases(size),
        *rates_cases(size),
    ]

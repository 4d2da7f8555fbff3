"""Running a case: sigmatool and each reference in pairs, in turns; then the answers are checked."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from harness import checks
from harness.cases import Case, Reference, Size, Target, last_json
from harness.timing import CommandError, Pair, Run, measure, median


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclasses.dataclass
class Versus:
    """sigmatool against one reference: the pairs, the extrapolation note, the answer check."""

    ref: Reference
    pairs: list[Pair] = dataclasses.field(default_factory=list)
    note: str = ""  # how the reference's time was extrapolated, if it was
    problems: list[str] | None = None  # None: not checked

    @property
    def ratios(self) -> list[float]:
        return [pair.ratio for pair in self.pairs]

    @property
    def ratio(self) -> float:
        """The median over pairs of sigmatool's time ÷ the reference's."""
        return median(self.ratios)

    @property
    def seconds(self) -> float:
        return median([pair.ref_s for pair in self.pairs])

    @property
    def peak_mib(self) -> float:
        return max((pair.ref.peak_mib for pair in self.pairs), default=float("nan"))


@dataclasses.dataclass
class Result:
    case: Case
    versus: list[Versus]
    error: str = ""

    @property
    def sigma_runs(self) -> list[Run]:
        return [pair.sigma for v in self.versus for pair in v.pairs]

    @property
    def seconds(self) -> float:
        return median([run.wall_s for run in self.sigma_runs])

    @property
    def peak_mib(self) -> float:
        return max((run.peak_mib for run in self.sigma_runs), default=float("nan"))

    @property
    def problems(self) -> list[str]:
        return [p for v in self.versus for p in v.problems or []]

    def value(self, target: Target) -> float | None:
        """What the target bounds: the median ratio to its reference, the median time, or the peak."""
        if self.error or not self.sigma_runs:
            return None
        if target.kind == "wall":
            return self.seconds
        if target.kind == "peak":
            return self.peak_mib
        return next((v.ratio for v in self.versus if v.ref.name == target.ref), None)


def _pair(sigma_argv: list[str], sigma_out: Path, ref: Reference, argv: list[str], out: Path) -> Pair:
    sigma_out.unlink(missing_ok=True)
    try:
        sigma = measure(sigma_argv)
    except CommandError as error:
        raise CommandError(f"sigmatool {error}") from None
    out.unlink(missing_ok=True)
    try:
        run = measure(argv)
    except CommandError as error:
        raise CommandError(f"{ref.name} {error}") from None
    return Pair(sigma, run, ref.seconds(run)[0])


def run_case(case: Case, path: Path | None, size: Size, tmp: Path) -> Result:
    """Rounds of (sigmatool, reference) pairs for every reference, then the answer checks."""
    sigma_out = tmp / "sigmatool.parquet"
    sigma_argv = case.argv(path, sigma_out)
    plans = [(ref, tmp / f"reference{i}.parquet") for i, ref in enumerate(case.refs)]
    versus = [Versus(ref) for ref in case.refs]
    start = time.perf_counter()
    try:
        for done in range(1, (case.rounds or size.rounds) + 1):
            for (ref, out), v in zip(plans, versus, strict=True):
                if ref.max_pairs is None or len(v.pairs) < ref.max_pairs:
                    v.pairs.append(_pair(sigma_argv, sigma_out, ref, ref.argv(case.data, path, out), out))
            over = time.perf_counter() - start > size.case_budget_s
            if case.rounds is None and done >= size.min_rounds and over:
                break
        stdout = versus[0].pairs[-1].sigma.stdout  # every run prints the same; -o wrote the last run's file
        for v in versus:
            v.note = v.ref.seconds(v.pairs[-1].ref)[1]
            if case.check and v.ref.answers:
                v.problems = checks.check(case.check, stdout, sigma_out, last_json(v.pairs[-1].ref.stdout))
    except CommandError as error:
        log(f"  failed: {error}")
        return Result(case, versus, error=str(error))
    return Result(case, versus)

"""The options of ``curriculum``: a schedule over pass rate, the run it is predicted for, and its exports.

A schedule gives each prompt a sampling weight at each step from its pass rate p (docs/curriculum.md):

- ``gaussian``: ``exp(−(p − μ(t))² / (2 S²))``, μ moving linearly from START to END over the run
  (``--mean START:END``, ``--width S``); the Nemotron 3 Nano recipe (arXiv:2512.20848, §3.2.2);
- ``pools``: pass-rate pools ``LO-HI:W`` with relative weights, uniform within a pool (prime-rl's
  ``DifficultyPools``);
- ``band``: uniform over ``LO ≤ p ≤ HI``;
- ``buckets``: K quantile buckets of equal share, weight ``4p(1 − p)`` (``variance``) or ``1 − p``
  (``hardness``) within each (open-instruct's difficulty map);
- ``easy-first``: every prompt once per epoch, highest pass rate first.

Every value is checked here, once, with one line (exit 2). Nothing here imports polars or numpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from sigmatool.errors import UsageError
from sigmatool.options.analyses import check_estimator
from sigmatool.options.common import (
    DEFAULT_SEED,
    Estimator,
    check_count,
    check_seed,
    parse_group_sizes,
    parse_number,
)

DEFAULT_BATCH = 512
DEFAULT_WIDTH = 0.15
DEFAULT_MEAN = (0.8, 0.3)
DEFAULT_BUCKETS = 5
MAX_STEPS = 1_000_000


class Schedule(str, Enum):
    gaussian = "gaussian"
    pools = "pools"
    band = "band"
    buckets = "buckets"
    easy_first = "easy-first"


class BucketWeight(str, Enum):
    variance = "variance"  # 4 p (1 − p)
    hardness = "hardness"  # 1 − p


@dataclass(frozen=True)
class Pool:
    """Prompts with ``lo ≤ p ≤ hi``, drawn with relative weight ``weight`` (uniform within the pool)."""

    lo: float
    hi: float
    weight: float

    @property
    def name(self) -> str:
        return f"{self.lo:g}-{self.hi:g}"


def _rate(option: str, text: str, what: str) -> float:
    value = parse_number(option, text, what)
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"{option}: {what} is a pass rate in [0, 1], not {value:g}")
    return value


def parse_mean(text: str) -> tuple[float, float]:
    """``--mean START:END`` (or one value: a fixed mean), both pass rates in [0, 1]."""
    start, _, end = text.partition(":")
    first = _rate("--mean", start.strip(), "START")
    return first, _rate("--mean", end.strip(), "END") if end.strip() else first


def parse_pools(text: str) -> tuple[Pool, ...]:
    """``--pools 0-0.2:1,0.2-0.8:3`` → pools of pass rate with relative weights (> 0), LO ≤ HI."""
    pools = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        span, colon, weight = part.partition(":")
        lo, dash, hi = span.partition("-")
        if not dash:
            raise UsageError(f"--pools: write each pool as LO-HI:W (e.g. 0.2-0.8:3), not {part!r}")
        pool = Pool(
            _rate("--pools", lo.strip(), "LO"),
            _rate("--pools", hi.strip(), "HI"),
            parse_number("--pools", weight.strip(), "W") if colon else 1.0,
        )
        if pool.lo > pool.hi:
            raise UsageError(f"--pools: {part!r} has LO > HI")
        if pool.weight <= 0:
            raise UsageError(f"--pools: {part!r} has a weight ≤ 0; weights are relative and positive")
        pools.append(pool)
    if not pools:
        raise UsageError("--pools: give at least one pool LO-HI:W, e.g. --pools 0-0.2:1,0.2-0.8:3")
    return tuple(pools)


def parse_band(text: str) -> tuple[float, float]:
    """``--band LO,HI``: pass rates, LO ≤ HI."""
    lo, comma, hi = text.partition(",")
    if not comma:
        raise UsageError(f"--band: give LO,HI (e.g. 0.2,0.8), not {text!r}")
    band = _rate("--band", lo.strip(), "LO"), _rate("--band", hi.strip(), "HI")
    if band[0] > band[1]:
        raise UsageError(f"--band: LO {band[0]:g} is above HI {band[1]:g}")
    return band


def parse_blend(text: str | None) -> dict[str, float]:
    """``--blend math=3,code=1``: each --by group's share of a step, relative, positive."""
    if not text:
        return {}
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, eq, weight = part.rpartition("=")
        if not eq or not name:
            raise UsageError(f"--blend: write each group as NAME=W (e.g. math=3), not {part!r}")
        value = parse_number("--blend", weight, f"the weight of {name!r}")
        if value <= 0:
            raise UsageError(f"--blend: {name!r} has a weight ≤ 0; weights are relative and positive")
        out[name] = value
    return out


def parse_grader_error(text: str | None) -> tuple[float, float] | None:
    """``--grader-error FP,FN``: the grader marks a wrong answer right with probability FP, a right one
    wrong with probability FN; both in [0, 1) and FP + FN < 1 (else the reward carries no signal)."""
    from sigmatool.options.verifier import parse_rates

    return None if text is None else parse_rates("--grader-error", text)


def parse_pass_at(texts: Sequence[str] | None) -> tuple[int, ...]:
    """``--pass-at K[,K…]``: the credit the trainer trains on, pass@K, K whole and ≥ 1 (docs/passk.md);
    () when absent."""
    if not texts:
        return ()
    out: list[int] = []
    for text in texts:
        for part in str(text).split(","):
            word = part.strip()
            try:
                value = float(word)
            except ValueError:
                value = math.nan
            if not (math.isfinite(value) and value == int(value) and value >= 1):
                raise UsageError(f"--pass-at: K is a whole number ≥ 1 (pass@K), not {word!r}")
            if int(value) not in out:
                out.append(int(value))
    return tuple(out)


def check_pass_at(pass_at: Sequence[int], sizes: Sequence[float], name: str = "--G") -> None:
    """Every K at most every finite G asked: a group of G < K answers has no pass@K."""
    finite = [G for G in sizes if math.isfinite(G)]
    if pass_at and finite and max(pass_at) > min(finite):
        raise UsageError(
            f"--pass-at {max(pass_at)} > {name} {min(finite):g}: a group of fewer than K answers has no pass@K"
        )


@dataclass(frozen=True)
class CurriculumOptions:
    """What ``curriculum`` predicts: ``schedule`` with its parameters, ``batch`` prompts per step for
    ``steps`` steps (or ``epochs`` of the scheduled prompts), groups of ``G``, rows every ``every`` steps."""

    schedule: Schedule = Schedule.gaussian
    batch: int = DEFAULT_BATCH
    steps: int = 150
    epochs: float | None = None
    G: int = 8
    mean: tuple[float, float] = DEFAULT_MEAN
    width: float = DEFAULT_WIDTH
    pools: tuple[Pool, ...] = ()
    band: tuple[float, float] = (0.2, 0.8)
    buckets: int = DEFAULT_BUCKETS
    bucket_weight: BucketWeight = BucketWeight.variance
    drop_solved: bool = False
    drop_unsolved: bool = False
    blend: Mapping[str, float] = field(default_factory=dict)
    every: int = 1
    estimator: str = "auto"
    seed: int = 0
    grader: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        check_estimator(self.estimator)
        check_count("--batch-size", self.batch, 1)
        check_count("--steps", self.steps, 1, MAX_STEPS)
        check_count("--G", self.G, 1)
        check_count("--every", self.every, 1)
        check_count("--buckets", self.buckets, 1, 1000)
        check_seed(self.seed)
        if self.epochs is not None and not (math.isfinite(self.epochs) and self.epochs > 0):
            raise UsageError(f"--epochs: give a number of epochs > 0, not {self.epochs:g}")
        if not (math.isfinite(self.width) and self.width > 0):
            raise UsageError(f"--width: the Gaussian's width S is a number > 0, not {self.width:g}")
        if self.schedule is Schedule.pools and not self.pools:
            raise UsageError("--schedule pools needs --pools LO-HI:W,… (e.g. --pools 0-0.2:1,0.2-0.8:3)")
        if self.pools and self.schedule is not Schedule.pools:
            raise UsageError("--pools sets the pools of --schedule pools: add it, or drop --pools")
        if self.blend and self.schedule is Schedule.easy_first:
            raise UsageError("--blend weighs --by groups of a sampled schedule; easy-first draws in order")

    @property
    def static(self) -> bool:
        """Whether every step has the same weights (a weighted sampler can take them)."""
        moving = self.schedule is Schedule.gaussian and self.mean[0] != self.mean[1]
        return not moving and self.schedule is not Schedule.easy_first

    def parameters(self) -> Sequence[str]:
        """The schedule in words, for the headline and the figure."""
        if self.schedule is Schedule.gaussian:
            start, end = self.mean
            mean = f"μ {start:g}" if start == end else f"μ {start:g} → {end:g}"
            return [f"gaussian ({mean}, width {self.width:g})"]
        if self.schedule is Schedule.pools:
            return ["pools " + ", ".join(f"{p.name}:{p.weight:g}" for p in self.pools)]
        if self.schedule is Schedule.band:
            return [f"band {self.band[0]:g}–{self.band[1]:g}"]
        if self.schedule is Schedule.buckets:
            return [f"{self.buckets} buckets, {self.bucket_weight.value} within each"]
        return ["easy-first"]


def parsed_curriculum_options(
    *,
    group_sizes: Sequence[str] | None,
    mean: str,
    pools: str | None,
    band: str,
    blend: str | None,
    estimator: Estimator,
    seed: int | None,
    **fields: Any,
) -> CurriculumOptions:
    """The schedule and the run it is predicted for from the flags as given (each by its field's name; the
    texts of --G, --mean, --pools, --band and --blend parsed), checked: a run at one G."""
    sizes = parse_group_sizes(group_sizes or ["8"])
    if len(sizes) != 1:
        raise UsageError("curriculum predicts a run at one G: give one --G")
    return CurriculumOptions(
        G=int(sizes[0]),
        mean=parse_mean(mean),
        pools=parse_pools(pools) if pools is not None else (),
        band=parse_band(band),
        blend=parse_blend(blend),
        estimator=estimator.value,
        seed=DEFAULT_SEED if seed is None else seed,
        **fields,
    )


def check_blend(blend: Mapping[str, float], by: Sequence[str]) -> None:
    """``--blend`` names the groups of one --by column."""
    if blend and len(by) != 1:
        raise UsageError("--blend weighs the groups of one --by column: give --by COL")


def checked_for(
    options: CurriculumOptions,
    by: Sequence[str],
    cols: Sequence[str],
    grader: tuple[float, float] | None,
    per_prompt: bool,
) -> CurriculumOptions:
    """The options with the grader, for an input grouped ``by`` with the pass-rate columns ``cols``; what one
    schedule over one column cannot take, refused."""
    check_blend(options.blend, by)
    if cols:
        raise UsageError("curriculum schedules one pass-rate column: give one --col")
    if per_prompt and not options.static:
        raise UsageError(
            f"--per-prompt writes one weight per prompt, and a {options.schedule.value} schedule's weights "
            "change with the step: use --export-order FILE (the prompts each step draws)"
        )
    return replace(options, grader=grader)

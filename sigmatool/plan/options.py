"""What a plan is asked for: the allowed group sizes, the rollout budget and the objective, checked at once."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from sigmatool.errors import UsageError

OBJECTIVES = ("signal", "fidelity", "learnable", "knapsack-rl")
METHODS = ("grpo", "drgrpo")
STD_CONVENTIONS = ("population", "bessel")
DEFAULT_SIZES = (4, 8, 16, 32)
DEFAULT_TARGET = 0.95
MAX_SIZE = 100_000
MAX_SIZES = 1024  # allowed sizes per plan: each one is a column of the per-value curves

_RANGE = re.compile(r"^\s*(\d+)\s*\.\.\s*(\d+)\s*(?::\s*(\d+)\s*)?$")


def parse_sizes(spec: str | int | Sequence[int]) -> tuple[int, ...]:
    """``"4,8,16,32"``, ``"2..64"`` or ``"8..64:8"`` (a step), or integers → the sorted distinct sizes."""
    if isinstance(spec, int):
        sizes = [spec]
    elif isinstance(spec, str):
        sizes = []
        for part in spec.split(","):
            if not part.strip():
                continue
            ranged = _RANGE.match(part)
            if ranged:
                lo, hi, step = int(ranged[1]), int(ranged[2]), int(ranged[3] or 1)
                if step < 1 or hi < lo:
                    raise UsageError(
                        f"--sizes: {part.strip()!r} is an empty range; write lo..hi or lo..hi:step"
                    )
                sizes.extend(range(lo, hi + 1, step))
            elif part.strip().isdigit():
                sizes.append(int(part))
            else:
                raise UsageError(
                    f"--sizes: {part.strip()!r} is not a group size; write 4,8,16,32 or 2..64 or 8..64:8"
                )
    else:
        sizes = [int(s) for s in spec]
    return _check_sizes(sizes)


def _check_sizes(sizes: Sequence[int]) -> tuple[int, ...]:
    if not sizes:
        raise UsageError("--sizes: give at least one group size, such as 4,8,16,32")
    bad = sorted({s for s in sizes if not 2 <= s <= MAX_SIZE})
    if bad:
        raise UsageError(
            f"--sizes: group sizes must be between 2 and {MAX_SIZE:,} (a group of one has σ = 0), "
            f"not {', '.join(map(str, bad[:5]))}"
        )
    distinct = tuple(sorted(set(sizes)))
    if len(distinct) > MAX_SIZES:
        raise UsageError(f"--sizes: at most {MAX_SIZES} distinct sizes, not {len(distinct):,}")
    return distinct


@dataclass(frozen=True)
class PlanOptions:
    """A checked request: sizes after ``min_G``/``max_G``, the objective, and how the budget was given."""

    sizes: tuple[int, ...] = DEFAULT_SIZES
    objective: str = "signal"
    method: str = "grpo"
    std: str = "population"
    target: float = DEFAULT_TARGET
    keep_all: bool = False
    budget: float | None = 8.0  # mean rollouts per prompt
    total: int | None = None  # or a total number of rollouts

    def total_rollouts(self, prompts: int) -> int:
        """The rollout budget for this many prompts: ``total``, else ⌊budget × prompts⌋ computed exactly."""
        if self.total is not None:
            return self.total
        assert self.budget is not None
        return math.floor(Fraction(repr(float(self.budget))) * prompts)


def plan_options(
    *,
    sizes: str | int | Sequence[int] = DEFAULT_SIZES,
    objective: str = "signal",
    method: str = "grpo",
    std: str = "population",
    target: float = DEFAULT_TARGET,
    keep_all: bool = False,
    budget: float | None = None,
    total: int | None = None,
    min_G: int | None = None,
    max_G: int | None = None,
) -> PlanOptions:
    """Check every option and name every problem at once; ``budget`` defaults to 8 rollouts per prompt."""
    problems: list[str] = []
    try:
        allowed = parse_sizes(sizes)
    except UsageError as exc:
        problems.append(str(exc))
        allowed = DEFAULT_SIZES
    lo = min_G if min_G is not None else 0
    hi = max_G if max_G is not None else MAX_SIZE
    kept = tuple(s for s in allowed if lo <= s <= hi)
    if not kept and not problems:
        problems.append(f"--min-G/--max-G: no allowed size lies in [{lo}, {hi}] (sizes {allowed})")
    if objective not in OBJECTIVES:
        problems.append(f"--objective: choose from {', '.join(OBJECTIVES)}, not {objective!r}")
    if method not in METHODS:
        problems.append(f"--method: choose from {', '.join(METHODS)}, not {method!r}")
    if std not in STD_CONVENTIONS:
        problems.append(f"--std: choose from {', '.join(STD_CONVENTIONS)}, not {std!r}")
    if not (isinstance(target, float | int) and 0.0 < target < 1.0):
        problems.append(f"--fidelity: give a target φ* with 0 < φ* < 1, not {target!r}")
    if budget is not None and total is not None:
        problems.append("--budget and --total: give one of them (rollouts per prompt, or rollouts in all)")
    if budget is not None and not (math.isfinite(budget) and budget >= 0):
        problems.append(f"--budget: give a number of rollouts per prompt ≥ 0, not {budget!r}")
    if total is not None and (isinstance(total, bool) or int(total) != total or total < 0):
        problems.append(f"--total: give a whole number of rollouts ≥ 0, not {total!r}")
    if problems:
        raise UsageError("; ".join(problems))
    if budget is None and total is None:
        budget = 8.0
    return PlanOptions(
        sizes=kept,
        objective=objective,
        method=method,
        std=std,
        target=float(target),
        keep_all=keep_all,
        budget=None if budget is None else float(budget),
        total=None if total is None else int(total),
    )

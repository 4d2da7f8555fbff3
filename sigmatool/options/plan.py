"""``plan``: the allowed group sizes, the rollout budget and the objective, every problem named at once.

Nothing here imports polars or numpy: the command line checks these before anything heavy is loaded, and
the library (:func:`sigmatool.plan.plan`) checks the same object, with the same messages.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from sigmatool.errors import UsageError
from sigmatool.options.analyses import rule_problems
from sigmatool.options.common import (
    DEFAULT_FIDELITY,
    DEFAULT_MAX_G,
    DEFAULT_MIN_G,
    MAX_G,
    Method,
    Std,
    check_fraction,
)
from sigmatool.options.inputs import InputOptions

OBJECTIVES = ("signal", "fidelity", "learnable", "knapsack-rl", "hit")
PLAN_METHODS = tuple(m.value for m in Method)
STD_CONVENTIONS = tuple(s.value for s in Std)
DEFAULT_SIZES = (4, 8, 16, 32)
DEFAULT_BUDGET = 8.0
DEFAULT_TARGET = DEFAULT_FIDELITY
MAX_SIZE = 100_000
MAX_SIZES = 1024  # allowed sizes per plan: each one is a column of the per-value curves
MAX_TOTAL = 2**62  # rollouts in all: sums of prompts × sizes stay exact in int64

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
                if (hi - lo) // step >= MAX_SIZES:
                    raise UsageError(f"--sizes: {part.strip()!r} has more than {MAX_SIZES} sizes")
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
    bad = sorted({s for s in sizes if not 1 <= s <= MAX_SIZE})
    if bad:
        raise UsageError(
            f"--sizes: group sizes must be between 1 and {MAX_SIZE:,}, not {', '.join(map(str, bad[:5]))}"
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
    budget: float | None = DEFAULT_BUDGET  # mean rollouts per prompt
    total: int | None = None  # or a total number of rollouts
    std_given: bool = True  # false: --std was left to its default, which --from may set to the trainer's

    def total_rollouts(self, prompts: int) -> int:
        """The rollout budget for this many prompts: ``total``, else ⌊budget × prompts⌋ computed exactly."""
        if self.total is not None:
            return self.total
        assert self.budget is not None
        return math.floor(Fraction(repr(float(self.budget))) * prompts)

    def describe(self) -> str:
        """The request in words, for headlines: ``budget 8 per prompt, sizes 4,8,16,32, signal (GRPO)``."""
        given = f"{self.budget:g} per prompt" if self.total is None else f"{self.total:,} rollouts"
        what = f"fidelity φ* = {self.target:g}" if self.objective == "fidelity" else self.objective
        rule = "Dr. GRPO" if self.method == "drgrpo" else "GRPO"
        rule += ", Bessel's std" if self.std == "bessel" else ""
        return f"budget {given}, sizes {sizes_words(self.sizes)}, {what} ({rule})"


def sizes_words(sizes: tuple[int, ...]) -> str:
    """Sizes as ``--sizes`` takes them, a range where they are one: ``4,8,16,32``, ``2..64``, ``8..64:8``.

    >>> sizes_words((2, 3, 4, 5)), sizes_words((8, 16, 24, 32)), sizes_words((4, 8, 16))
    ('2..5', '8..32:8', '4,8,16')
    """
    steps = {b - a for a, b in itertools.pairwise(sizes)}
    if len(sizes) < 4 or len(steps) != 1:
        return ",".join(map(str, sizes))
    step = steps.pop()
    return f"{sizes[0]}..{sizes[-1]}" + (f":{step}" if step != 1 else "")


def _choice_problems(objective: str, method: str, std: str, target: float | None) -> list[str]:
    problems: list[str] = []
    if objective not in OBJECTIVES:
        problems.append(f"--objective: choose from {', '.join(OBJECTIVES)}, not {objective!r}")
    problems += rule_problems(method, std)
    if target is not None:
        try:
            check_fraction("--fidelity", target)
        except (UsageError, TypeError):
            problems.append(f"--fidelity: give a number in (0, 1), not {target!r}")
        else:
            if objective in OBJECTIVES and objective != "fidelity":
                problems.append(
                    f"--fidelity sets the target of --objective fidelity; it does not apply to {objective}"
                )
    return problems


def _budget_problems(budget: float | None, total: int | None) -> list[str]:
    problems = []
    if budget is not None and total is not None:
        problems.append(
            "--budget and --total-rollouts: give one of them (rollouts per prompt, or rollouts in all)"
        )
    if budget is not None and not (math.isfinite(budget) and 0 < budget <= MAX_SIZE):
        problems.append(
            f"--budget: give the mean rollouts per prompt, above 0 and at most {MAX_SIZE:,}; not {budget!r}"
        )
    if total is not None and (isinstance(total, bool) or int(total) != total or not 1 <= total <= MAX_TOTAL):
        problems.append(f"--total-rollouts: give a whole number of rollouts ≥ 1, not {total!r}")
    return problems


def plan_options(
    *,
    sizes: str | int | Sequence[int] = DEFAULT_SIZES,
    objective: str = "signal",
    method: str = "grpo",
    std: str = "population",
    target: float | None = None,
    keep_all: bool = False,
    budget: float | None = None,
    total: int | None = None,
    min_G: int | None = None,
    max_G: int | None = None,
) -> PlanOptions:
    """Check every option and name every problem at once; ``budget`` defaults to 8 rollouts per prompt.

    ``target`` (φ*, default 0.9) belongs to the ``fidelity`` objective and is refused with any other.
    ``min_G`` and ``max_G`` (default 2 and 4096, as ``groupsize``'s) leave out the sizes outside them.
    """
    problems: list[str] = []
    try:
        allowed = parse_sizes(sizes)
    except UsageError as exc:
        problems.append(str(exc))
        allowed = DEFAULT_SIZES
    # A group of one answer has σ = 0 and trains nothing; it can still hold a hit (HORA's allocation).
    lo = min_G if min_G is not None else (1 if objective == "hit" else DEFAULT_MIN_G)
    if 1 in allowed and objective != "hit":
        problems.append("--sizes: a group of one has σ = 0 and trains nothing; size 1 is for --objective hit")
    hi = max_G if max_G is not None else DEFAULT_MAX_G
    if not 1 <= lo <= MAX_G or not 1 <= hi <= MAX_G:
        problems.append(
            f"--min-G and --max-G: give whole numbers between 1 and {MAX_G:,}, not {lo:,} and {hi:,}"
        )
    elif lo > hi:
        problems.append(f"--min-G {lo} is larger than --max-G {hi}")
    kept = tuple(s for s in allowed if lo <= s <= hi)
    if not kept and not problems:
        problems.append(
            f"--min-G/--max-G: no allowed size lies in [{lo}, {hi}] (sizes {','.join(map(str, allowed))})"
        )
    problems += _choice_problems(objective, method, std, target)
    problems += _budget_problems(budget, total)
    if problems:
        raise UsageError("; ".join(problems))
    if budget is None and total is None:
        budget = DEFAULT_BUDGET
    return PlanOptions(
        sizes=kept,
        objective=objective,
        method=method,
        std=std,
        target=DEFAULT_TARGET if target is None else float(target),
        keep_all=keep_all,
        budget=None if budget is None else float(budget),
        total=None if total is None else int(total),
    )


@dataclass(frozen=True)
class PlanBudget:
    """The budget half of a plan request as typed (checked by :func:`plan_options` with the rest)."""

    budget: float | None = None
    total: int | None = None
    sizes: str = ",".join(map(str, DEFAULT_SIZES))
    min_size: int | None = None
    max_size: int | None = None
    keep_all: bool = False


def check_plan_output(
    options: PlanOptions,
    inputs: InputOptions,
    *,
    per_prompt: bool,
    distribution: bool,
    plot: bool = False,
    pass_at: Sequence[int] = (),
) -> None:
    """What the plan command can write for this input: one row per prompt needs one prompt per row; the hit
    objective counts prompts with a right rollout, under no pass@K credit."""
    if options.objective == "hit" and pass_at:
        raise UsageError("--objective hit counts prompts with a right rollout: it takes no --pass-at")
    by, weighted = inputs.groups, bool(inputs.weight_col)
    if plot and by:
        raise UsageError(
            "--plot draws one plan; with --by or several --col there is one per group: leave out one of them"
        )
    if per_prompt and distribution:
        raise UsageError("--per-prompt and --distribution: give one (rows per prompt, or sizes per strategy)")
    if per_prompt and weighted:
        raise UsageError(
            "--per-prompt gives each input row a group size, but with --weight-col a row stands for many "
            "prompts; give one row per prompt, or drop --per-prompt"
        )
    if by and options.total is not None:
        raise UsageError(
            "--total-rollouts with --by: each group is planned with its own budget; give --budget "
            "(rollouts per prompt, the same in every group)"
        )


@dataclass(frozen=True)
class SimulatePlan:
    """``simulate`` with a plan: a per-prompt plan file, or a plan made on the start for a budget."""

    file: str | None = None
    plan: PlanOptions | None = None
    replan_every: int | None = None


def simulate_plan_request(
    file: str | None, budget: float | None, sizes: str | None, objective: str | None, replan_every: int
) -> SimulatePlan | None:
    """The checked request (None: the plain run); --sizes and --objective belong to --plan-budget."""
    if file is not None and budget is not None:
        raise UsageError("--plan and --plan-budget: give one (a plan file, or a budget to plan for)")
    if budget is None and (sizes is not None or objective is not None):
        raise UsageError("--sizes and --objective describe the plan of --plan-budget; give --plan-budget B")
    if replan_every < 0:
        raise UsageError(f"--replan-every: give a number of steps ≥ 0 (0: never), not {replan_every:,}")
    if file is not None:
        return SimulatePlan(file=file)
    if budget is None:
        return None
    options = plan_options(
        sizes=sizes if sizes is not None else DEFAULT_SIZES, objective=objective or "signal", budget=budget
    )
    return SimulatePlan(plan=options, replan_every=replan_every or None)

"""``plan``: choose a group size for every prompt, from the allowed sizes or 0, to maximise an objective.

Works on the distinct pass rates and how many prompts share each; see docs/plan.md for the objectives, the
guarantees and the columns of the frames returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from sigmatool.errors import DataError, UsageError
from sigmatool.options.plan import PlanOptions, plan_options
from sigmatool.plan import compare, curves, reach
from sigmatool.plan.allocate import BLOCK, Assignment, build_hulls, greedy

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

VALUE_COLUMNS = (
    "p",
    "group_size",
    "prompts",
    "first_rank",
    "keep",
    "p_silent_at_G",
    "expected_sigma",
    "fidelity_at_G",
    "hit_utility",
    "value",
)


@dataclass
class Plan:
    """A plan over distinct values ``rows`` (ascending p̂) with ``counts`` prompts each; see docs/plan.md."""

    options: PlanOptions
    rows: curves.Rows
    counts: IntArray
    assignment: Assignment
    budget: int
    summary: pl.DataFrame
    distribution: pl.DataFrame
    exact: bool
    guarantee: str

    @property
    def p(self) -> FloatArray:
        """p̂ of each planned value."""
        return self.rows.p

    @property
    def cells(self) -> bool:
        """Whether the planned values are counts (k, n) rather than pass rates (a prior, or unbiased)."""
        return "k" in self.rows.frame.columns

    @property
    def gap(self) -> float:
        """LP bound minus the plan's objective: an upper bound on how far the plan is from the optimum."""
        return self.assignment.gap

    @property
    def objective(self) -> float:
        return float(self.summary["objective"][0])

    def group_sizes(self) -> tuple[IntArray, IntArray, IntArray]:
        """(size, split size, prompts at the split size) per distinct value; sizes are 0 when left out."""
        sizes = np.concatenate(([0], self.options.sizes)).astype(np.int64)
        lo, hi, n_hi = self.assignment.dense()
        return sizes[lo + 1], np.where(n_hi > 0, sizes[hi + 1], 0), n_hi

    @cached_property
    def values(self) -> pl.DataFrame:
        """One row per (distinct p, group size): the first ``first_rank`` … prompts in id order get it."""
        lo, hi, n_hi = self.group_sizes()
        split = np.flatnonzero(n_hi > 0)
        index = np.concatenate((split, np.arange(self.counts.size)))
        G = np.concatenate((hi[split], lo))
        prompts = np.concatenate((n_hi[split], self.counts - n_hi))
        first = np.concatenate((np.zeros(split.size, dtype=np.int64), n_hi))
        order = np.lexsort((first, index))
        index, G, prompts, first = index[order], G[order], prompts[order], first[order]
        keep = prompts > 0
        index, G, prompts, first = index[keep], G[keep], prompts[keep], first[keep]
        rows = self.rows[index]
        metrics = _metrics(rows, G, self.options)
        frame = pl.DataFrame(
            {"p": rows.p, "group_size": G, "prompts": prompts, "first_rank": first, "keep": G > 0, **metrics}
        )
        return frame.with_columns([pl.when(pl.col("keep")).then(pl.col(c)).alias(c) for c in METRICS]).select(
            VALUE_COLUMNS
        )

    def tables(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The plan as two lean tables (what the per-prompt export joins with).

        First, one row per distinct p: ``p``, ``group_size`` (of its prompts, or of those after the split
        ones), ``p_silent_at_G``, ``expected_sigma``, ``fidelity_at_G`` (null when left out). Second, for the
        few values split between two sizes: the same columns at the size that the first ``prompts`` of the
        value's prompts in id order get instead, and ``prompts``.
        """
        lo, hi, n_hi = self.group_sizes()
        split = np.flatnonzero(n_hi > 0)
        every = _metric_frame(self.rows, lo, self.options)
        extra = _metric_frame(self.rows[split], hi[split], self.options)
        return every, extra.with_columns(pl.Series("prompts", n_hi[split], dtype=pl.Int64))


METRICS = ("p_silent_at_G", "expected_sigma", "fidelity_at_G", "hit_utility")


def _metrics(
    values: curves.Rows, G: IntArray, options: PlanOptions, value: bool = True
) -> dict[str, FloatArray]:
    names = (*METRICS, "value") if value else METRICS
    out = {name: np.zeros(values.size) for name in names}
    for g in np.unique(G).tolist():
        if g == 0:
            continue
        rows = np.flatnonzero(G == g)
        q = values[rows]
        out["p_silent_at_G"][rows] = curves.silent(q, g)
        out["expected_sigma"][rows] = sigma = curves.expected_sigma(q, g, options.std)
        out["fidelity_at_G"][rows] = curves.fidelity(
            q, g, options, sigma if options.method == "grpo" else None
        )
        out["hit_utility"][rows] = curves.hit(q, g)
        if value:
            out["value"][rows] = curves.value(q, g, options)
    return out


def _metric_frame(values: curves.Rows, G: IntArray, options: PlanOptions) -> pl.DataFrame:
    """``p``, ``group_size`` and the metrics at it (null when G = 0, and where undefined).

    Evaluated block by block, so that the curves' temporaries stay small for 10⁷ values.
    """
    blocks = []
    counts = [c for c in ("k", "n") if c in values.frame.columns]
    for start in range(0, max(values.size, 1), BLOCK):
        q, g = values[start : start + BLOCK], G[start : start + BLOCK]
        metrics = _metrics(q, g, options, value=False)
        blocks.append(
            pl.DataFrame(
                [
                    *[q.frame[c].cast(pl.Int64) for c in counts],
                    pl.Series("p", q.p, dtype=pl.Float64),
                    pl.Series("group_size", g, dtype=pl.Int64),
                    *[
                        pl.Series(name, np.where(g > 0, metrics[name], np.nan), nan_to_null=True)
                        for name in METRICS
                    ],
                ]
            )
        )
    return pl.concat(blocks)


@dataclass(frozen=True)
class PlanFrames:
    """What ``plan --plot`` and the report's plan section draw: the plan's size per distinct value
    (``allocation``: ``p``, ``group_size``, ``prompts``) and the same request planned at each allowed size as
    the budget, and at its own (``comparison``: ``rollouts_per_prompt``, ``plan_objective``,
    ``uniform_objective``, per prompt)."""

    allocation: pl.DataFrame
    comparison: pl.DataFrame
    objective: str = "objective"
    estimator: str = "plug-in"


def plan_frames(plan: Plan) -> PlanFrames:
    """:class:`PlanFrames` of a plan: its request planned again at each allowed size as the budget, on the
    same values (the same estimator), against the best uniform G of each."""
    prompts = int(plan.counts.sum())
    own = plan.budget / prompts
    rows = []
    for budget in sorted({own, *(float(G) for G in plan.options.sizes)}):
        try:
            other = (
                plan
                if budget == own
                else plan_values(plan.rows, plan.counts, replace(plan.options, budget=budget, total=None))
            )
        except UsageError:  # --keep-all: a budget below the smallest size for every prompt
            continue
        best = other.summary.filter(pl.col("strategy") == "uniform_best")["objective"]
        uniform = float(best[0]) / prompts if best.len() else None
        rows.append((budget, other.objective / prompts, uniform))
    comparison = pl.DataFrame(
        rows, schema=["rollouts_per_prompt", "plan_objective", "uniform_objective"], orient="row"
    )
    allocation = plan.values.select("p", "group_size", "prompts")
    return PlanFrames(allocation, comparison, plan.options.objective, plan.rows.valuation.label)


def distinct_values(data: pl.DataFrame | ArrayLike) -> tuple[FloatArray, IntArray]:
    """Distinct pass rates (ascending) and their prompt counts, from a histogram or per-prompt rates."""
    if isinstance(data, pl.DataFrame):
        if "p" not in data.columns:
            raise UsageError(
                f"plan needs a column 'p' (a histogram from sigmatool.histogram); got {data.columns}"
            )
        if "prompts" not in data.columns:
            data = data.select("p").with_columns(pl.lit(1, pl.Int64).alias("prompts"))
        if data["p"].null_count() or data["prompts"].null_count():
            raise DataError("plan: the pass rates and prompt counts must not be null")
        p = data["p"].cast(pl.Float64).to_numpy()
        weights = data["prompts"].cast(pl.Float64).to_numpy()
    else:
        p, counts = np.unique(np.asarray(data, dtype=np.float64).ravel(), return_counts=True)
        weights = counts.astype(np.float64)
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise DataError("plan: pass rates must be numbers in [0, 1]")
    if not np.all((weights >= 0) & (weights == np.round(weights))):
        raise DataError(
            "plan: prompt counts must be whole numbers ≥ 0 (a plan gives each prompt a whole group)"
        )
    counts = weights.astype(np.int64)
    if p.size > 1 and not np.all(p[1:] > p[:-1]):
        p, inverse = np.unique(p, return_inverse=True)
        counts = np.bincount(inverse, weights=counts).astype(np.int64)
    keep = counts > 0
    if not keep.any():
        raise DataError("plan: no prompts to plan for")
    return np.ascontiguousarray(p[keep]), counts[keep]


def plan(
    data: pl.DataFrame | ArrayLike,
    *,
    budget: float | None = None,
    total: int | None = None,
    sizes: str | int | Sequence[int] = (4, 8, 16, 32),
    objective: str = "signal",
    method: str = "grpo",
    std: str = "population",
    target: float | None = None,
    keep_all: bool = False,
    min_G: int | None = None,
    max_G: int | None = None,
) -> Plan:
    """Plan group sizes for a histogram (``p``, ``prompts``) or an array of per-prompt pass rates."""
    options = plan_options(
        sizes=sizes,
        objective=objective,
        method=method,
        std=std,
        target=target,
        keep_all=keep_all,
        budget=budget,
        total=total,
        min_G=min_G,
        max_G=max_G,
    )
    p, counts = distinct_values(data)
    return plan_values(p, counts, options)


def plan_values(values: curves.Rows | FloatArray, counts: IntArray, options: PlanOptions) -> Plan:
    """The plan for distinct values (ascending p̂; an array: plug-in pass rates) with ``counts`` prompts each."""
    p = values if isinstance(values, curves.Rows) else curves.Rows.plugin(values)
    p.expect(options.sizes)
    sizes = np.asarray(options.sizes, dtype=np.int64)
    prompts = int(counts.sum())
    total = options.total_rollouts(prompts)
    base = np.full(p.size, 0 if options.keep_all else -1, dtype=np.int16)
    floor = prompts * int(sizes[0]) if options.keep_all else 0
    if total < floor:
        raise UsageError(
            f"--keep-all: every prompt needs at least G = {sizes[0]}, so {floor:,} rollouts for "
            f"{prompts:,} prompts; the budget is {total:,}"
        )
    uniform = compare.Uniform(sizes, options)
    if options.objective == "fidelity":
        assignment = reach.allocate(p, counts, base, sizes, options, total - floor, uniform)
    else:
        hulls = build_hulls(
            p,
            counts,
            base,
            sizes,
            lambda q: curves.value_matrix(q, options.sizes, options),
            lambda block, q, values: uniform.add(q, counts[block], values),
        )
        assignment = greedy(hulls, counts, sizes, total - floor)
        del hulls
    plan_sums = _plan_sums(p, counts, assignment, sizes, options)
    summary = compare.summary(plan_sums, uniform, total, prompts)
    exact, guarantee = _guarantee(assignment, options, float(summary["objective"][0]))
    return Plan(
        options=options,
        rows=p,
        counts=counts,
        assignment=assignment,
        budget=total,
        summary=summary,
        distribution=compare.distribution(plan_sums, summary, prompts),
        exact=exact,
        guarantee=guarantee,
    )


def _plan_sums(
    p: curves.Rows, counts: IntArray, a: Assignment, sizes: IntArray, options: PlanOptions
) -> compare.Sums:
    """Objective, update weights and silent probabilities of the plan, summed per size (index 0: left out)."""
    sums = compare.Sums(np.concatenate(([0], sizes)).astype(np.int64))
    rest = counts.copy()
    rest[a.split_rows] -= a.split_prompts
    for start in range(0, p.size, BLOCK):
        block = slice(start, start + BLOCK)
        lo = a.lo[block].astype(np.int64) + 1
        for j in np.unique(lo).tolist():
            rows = np.flatnonzero(lo == j)
            sums.add(j, p[block][rows], rest[block][rows], options, None)
    for j in np.unique(a.split_size).tolist():
        at = a.split_size == j
        sums.add(j + 1, p[a.split_rows[at]], a.split_prompts[at], options, None)
    return sums


def _guarantee(a: Assignment, options: PlanOptions, objective: float) -> tuple[bool, str]:
    if options.objective == "fidelity":
        return True, (
            f"optimal count of prompts reaching φ* = {options.target:g} (prompts taken in order of the "
            "rollouts that reach φ*); the signal among them is the greedy's tie-break"
        )
    one_choice = len(options.sizes) == (2 if options.keep_all else 1)
    if not a.binding:
        return True, "optimal: the budget covers every rollout that adds value"
    if a.gap <= 1e-12 * max(1.0, abs(objective)):
        return True, "optimal: the plan meets the LP bound"
    if one_choice:
        return True, "optimal: one size to choose, so every prompt costs the same and the greedy is exact"
    return False, (
        f"within {a.gap:.6g} of the optimum (LP bound {objective + a.gap:.9g}): at most one prompt's gain "
        "on the fractional segment"
    )

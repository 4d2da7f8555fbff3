"""The plan against uniform group sizes at the same budget: the summary and the group-size distribution.

Strategies (rows of the summary, in this order):

- ``plan``: the allocation;
- ``uniform``: one G for every prompt, the largest allowed size ≤ budget / prompts (the usual set-up);
- ``uniform_best``: the allowed G whose uniform plan scores best on the objective;
- ``uniform_dropped``: prompts with p ∈ {0, 1} dropped (the common practice), the rest at the largest allowed
  size ≤ budget / kept prompts;
- ``uniform_dropped_best``: the same, at the allowed G that scores best.

A uniform G the budget cannot afford for all its prompts goes to ⌊budget / G⌋ of them, a uniformly random
subset (a trainer sampling fewer prompts per step): its figures are expectations over that subset.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.options.plan import PlanOptions
from sigmatool.plan import curves

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

EXTREME = 0.1  # extreme prompts: p < 0.1 or p > 0.9, as in docs/theory.md §5
STRATEGIES = ("plan", "uniform", "uniform_best", "uniform_dropped", "uniform_dropped_best")
SUMMARY_COLUMNS = (
    "strategy",
    "uniform_G",
    "objective",
    "objective_vs_plan",
    "plan_gain",
    "signal",
    "expected_silent_rate",
    "silent_rollout_share",
    "extreme_gradient_share",
    "budget",
    "rollouts_used",
    "prompts",
    "prompts_kept",
    "prompts_left_out",
    "mean_G",
    "min_G",
    "median_G",
    "max_G",
)
DISTRIBUTION_COLUMNS = ("strategy", "group_size", "prompts", "prompt_share", "rollouts")


def _dot(a: FloatArray, b: FloatArray) -> float:
    # Not np.dot: a threaded BLAS call per block costs milliseconds of thread wake-up on a busy machine.
    return float(np.einsum("i,i->", a, b))


def extreme(p: FloatArray) -> NDArray[np.bool_]:
    """The extreme prompts of the gradient share: p̂ < 0.1 or p̂ > 0.9 (docs/theory.md §5)."""
    return np.asarray((p < EXTREME) | (p > 1.0 - EXTREME), dtype=np.bool_)


@dataclass
class Sums:
    """Prompt-weighted sums per group size: objective, update weight (all and extreme), P_silent, prompts."""

    sizes: IntArray
    objective: FloatArray = field(init=False)
    weight: FloatArray = field(init=False)
    extreme: FloatArray = field(init=False)
    silent: FloatArray = field(init=False)
    prompts: IntArray = field(init=False)

    def __post_init__(self) -> None:
        width = self.sizes.size
        self.objective, self.weight = np.zeros(width), np.zeros(width)
        self.extreme, self.silent = np.zeros(width), np.zeros(width)
        self.prompts = np.zeros(width, dtype=np.int64)

    def add(
        self, j: int, rows: curves.Rows, counts: IntArray, options: PlanOptions, values: FloatArray | None
    ) -> None:
        """Add prompts of these values (``counts`` of each) at size index j."""
        G = int(self.sizes[j])
        c = counts.astype(np.float64)
        if rows.size == 0 or G == 0:
            self.prompts[j] += int(counts.sum())
            return
        weight = curves.update_weight(rows, G, options)
        values = curves.value(rows, G, options, weight) if values is None else values
        self.add_terms(j, c, values, weight, curves.silent(rows, G), extreme(rows.p))

    def add_terms(
        self,
        j: int,
        c: FloatArray,
        values: FloatArray,
        weight: FloatArray,
        silent: FloatArray,
        extreme: NDArray[np.bool_],
    ) -> None:
        """Add prompt-weighted sums at size index j from the terms already evaluated."""
        self.objective[j] += _dot(c, values)
        self.weight[j] += _dot(c, weight)
        self.extreme[j] += _dot(np.where(extreme, c, 0.0), weight)
        self.silent[j] += _dot(c, silent)
        self.prompts[j] += int(c.sum())


class Uniform:
    """Sums for every uniform size, over all prompts and over interior ones, accumulated block by block."""

    def __init__(self, sizes: IntArray, options: PlanOptions) -> None:
        self.options = options
        self.all = Sums(sizes)
        self.interior = Sums(sizes)

    def add(
        self,
        rows: curves.Rows,
        counts: IntArray,
        values: FloatArray | None,
        weights: FloatArray | None = None,
    ) -> None:
        """Add a block of distinct values; ``values``, ``weights``: objective and update at every size, if known.

        ``uniform_dropped`` drops the prompts observed at p̂ ∈ {0, 1}, as the common practice does.
        """
        c = counts.astype(np.float64)
        p = rows.p
        inner = np.where((p > 0.0) & (p < 1.0), c, 0.0)
        outer = extreme(p)
        signal = self.options.objective == "signal"
        for j, G in enumerate(self.all.sizes.tolist()):
            column = None if values is None else np.ascontiguousarray(values[:, j])
            if weights is not None:
                weight = np.ascontiguousarray(weights[:, j])
            else:
                weight = (
                    column if signal and column is not None else curves.update_weight(rows, G, self.options)
                )
            value = column if column is not None else curves.value(rows, G, self.options, weight)
            silent = curves.silent(rows, G)
            self.all.add_terms(j, c, value, weight, silent, outer)
            self.interior.add_terms(j, inner, value, weight, silent, outer)


def _uniform_row(name: str, sums: Sums, j: int, total: int, prompts: int) -> dict[str, object]:
    pool = int(sums.prompts[j])
    G = int(sums.sizes[j])
    kept = min(pool, total // G)
    share = kept / pool if pool else 0.0
    return {
        "strategy": name,
        "uniform_G": G,
        "objective": share * float(sums.objective[j]),
        "signal": share * float(sums.weight[j]),
        "expected_silent_rate": float(sums.silent[j]) / pool if kept else None,
        "silent_rollout_share": float(sums.silent[j]) / pool if kept else None,
        "extreme_gradient_share": float(sums.extreme[j] / sums.weight[j])
        if kept and sums.weight[j] > 0
        else None,
        "budget": total,
        "rollouts_used": kept * G,
        "prompts": prompts,
        "prompts_kept": kept,
        "prompts_left_out": prompts - kept,
        "mean_G": float(G) if kept else None,
        "min_G": G if kept else None,
        "median_G": float(G) if kept else None,
        "max_G": G if kept else None,
    }


def _largest_affordable(sums: Sums, total: int) -> int:
    """Index of the largest size ≤ budget per pooled prompt (the smallest size when none is)."""
    pool = max(int(sums.prompts[0]), 1)
    fits = np.flatnonzero(sums.sizes * pool <= total)
    return int(fits[-1]) if fits.size else 0


def _best(sums: Sums, total: int) -> int:
    scores = [_uniform_row("", sums, j, total, 0)["objective"] for j in range(sums.sizes.size)]
    return int(np.argmax(np.asarray(scores, dtype=np.float64)))


def _plan_row(sums: Sums, total: int, prompts: int) -> dict[str, object]:
    kept_sizes = sums.sizes > 0
    kept = int(sums.prompts[kept_sizes].sum())
    rollouts = int((sums.sizes * sums.prompts).sum())
    weight = float(sums.weight.sum())
    present = sums.sizes[kept_sizes & (sums.prompts > 0)]
    return {
        "strategy": "plan",
        "uniform_G": None,
        "objective": float(sums.objective.sum()),
        "signal": weight,
        "expected_silent_rate": float(sums.silent[kept_sizes].sum()) / kept if kept else None,
        "silent_rollout_share": float(sums.sizes @ sums.silent) / rollouts if rollouts else None,
        "extreme_gradient_share": float(sums.extreme.sum()) / weight if weight > 0 else None,
        "budget": total,
        "rollouts_used": rollouts,
        "prompts": prompts,
        "prompts_kept": kept,
        "prompts_left_out": prompts - kept,
        "mean_G": rollouts / kept if kept else None,
        "min_G": int(present.min()) if kept else None,
        "median_G": _median(sums.sizes[kept_sizes], sums.prompts[kept_sizes]) if kept else None,
        "max_G": int(present.max()) if kept else None,
    }


def _median(sizes: IntArray, prompts: IntArray) -> float:
    """Median of a size distribution given as counts (mean of the two middle prompts when even)."""
    order = np.argsort(sizes)
    s, c = sizes[order], np.cumsum(prompts[order])
    n = int(c[-1])
    low = s[np.searchsorted(c, (n + 1) // 2)]
    high = s[np.searchsorted(c, n // 2 + 1)]
    return (float(low) + float(high)) / 2.0


def summary(plan_sums: Sums, uniform: Uniform, total: int, prompts: int) -> pl.DataFrame:
    """The summary frame (columns as in the module docstring of sigmatool.plan)."""
    rows = [_plan_row(plan_sums, total, prompts)]
    every, inner = uniform.all, uniform.interior
    rows.append(_uniform_row("uniform", every, _largest_affordable(every, total), total, prompts))
    rows.append(_uniform_row("uniform_best", every, _best(every, total), total, prompts))
    if inner.prompts[0] > 0:
        rows.append(_uniform_row("uniform_dropped", inner, _largest_affordable(inner, total), total, prompts))
        rows.append(_uniform_row("uniform_dropped_best", inner, _best(inner, total), total, prompts))
    plan_objective = float(plan_sums.objective.sum())
    for row in rows:
        value = float(row["objective"])  # type: ignore[arg-type]
        row["objective_vs_plan"] = value / plan_objective if plan_objective > 0 else None
        planned = row["strategy"] == "plan"
        row["plan_gain"] = plan_objective / value - 1.0 if value > 0 and not planned else None
    schema = {
        "strategy": pl.String,
        "uniform_G": pl.Int64,
        "budget": pl.Int64,
        "rollouts_used": pl.Int64,
        "prompts": pl.Int64,
        "prompts_kept": pl.Int64,
        "prompts_left_out": pl.Int64,
        "min_G": pl.Int64,
        "max_G": pl.Int64,
    }
    floats = {c: pl.Float64 for c in SUMMARY_COLUMNS if c not in schema}
    return pl.DataFrame(rows, schema={c: (schema | floats)[c] for c in SUMMARY_COLUMNS})


def distribution(plan_sums: Sums, summary_frame: pl.DataFrame, prompts: int) -> pl.DataFrame:
    """Prompts and rollouts per group size for every strategy (G = 0: left out)."""
    rows: list[tuple[str, int, int]] = []
    for G, n in zip(plan_sums.sizes.tolist(), plan_sums.prompts.tolist(), strict=True):
        if n:
            rows.append(("plan", G, n))
    for r in summary_frame.filter(pl.col("strategy") != "plan").iter_rows(named=True):
        if r["prompts_kept"]:
            rows.append((r["strategy"], r["uniform_G"], r["prompts_kept"]))
        if r["prompts_left_out"]:
            rows.append((r["strategy"], 0, r["prompts_left_out"]))
    frame = pl.DataFrame(
        rows, schema={"strategy": pl.String, "group_size": pl.Int64, "prompts": pl.Int64}, orient="row"
    )
    order = {s: i for i, s in enumerate(STRATEGIES)}
    return (
        frame.with_columns(
            (pl.col("prompts") / prompts).alias("prompt_share"),
            (pl.col("group_size") * pl.col("prompts")).alias("rollouts"),
            pl.col("strategy").replace_strict(order, return_dtype=pl.Int64).alias("__order"),
        )
        .sort("__order", "group_size")
        .select(DISTRIBUTION_COLUMNS)
    )

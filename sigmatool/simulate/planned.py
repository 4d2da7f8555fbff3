"""The controlled run of docs/theory.md §6 with a plan: training at planned group sizes against uniform G.

Every strategy draws the same start population (the same seed) and spends the same rollouts per step, up
to rounding (the summary says how many):

- :func:`simulate_plan` makes the plan itself: ``uniform`` spends ⌊budget × prompts⌋ rollouts a step with
  one G for every prompt (see below); ``plan`` is made once, on the start pass rates, for ``budget`` rollouts per prompt and kept for the whole
  run; ``plan_replanned`` makes the plan again on the current pass rates every ``replan_every`` steps (as a
  trainer re-estimating p̂ would, with the exact p standing in for the estimate).
- :func:`simulate_planned` takes the sizes from the start: a histogram of a plan's per-prompt export
  (``p``, ``group_size``, ``prompts``), so each drawn prompt keeps its planned G; ``uniform`` spends the
  rollouts the plan spends on the drawn prompts.

``uniform`` with R rollouts for M prompts gives every prompt G = ⌊R/M⌋ (``uniform_G``, at least 2), and one
more to R mod M of them, spread evenly over the start population (which is in order of p̂), so that both
strategies sample the same answers a step.

Summary columns (one row per strategy, in that order): ``strategy``, ``uniform_G`` (null for a plan),
``rollouts_per_step`` (mean answers sampled per step), ``prompts_trained`` (prompts with G > 0 at step 1),
``mean_observed_silent`` (mean over steps of the share of the step's groups that were silent),
``final_observed_silent``, ``silent_r2``, ``start_mean_p``, ``final_mean_p``,
``start_hardest_quartile_mean_p``, ``final_hardest_quartile_mean_p``, ``samples_drawn``,
``samples_vs_uniform``, ``extreme_share_measured``, ``extreme_share_predicted`` (at step 1's sizes). The
trace is ``sigmatool.simulate``'s, with ``strategy`` in front.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.columns import labels, percent
from sigmatool.errors import DataError
from sigmatool.options import SimulateOptions
from sigmatool.options.plan import plan_options
from sigmatool.plan.core import distinct_values, plan_values
from sigmatool.plan.export import group_sizes_for
from sigmatool.render import View, also_in_data
from sigmatool.simulate.dynamics import TRACE_COLUMNS
from sigmatool.simulate.result import LABELS
from sigmatool.simulate.run import FROM_START, planned_sizes, simulate
from sigmatool.simulate.start import Start

STRATEGIES = ("uniform", "plan", "plan_replanned")
SUMMARY_COLUMNS = (
    "strategy",
    "uniform_G",
    "rollouts_per_step",
    "prompts_trained",
    "mean_observed_silent",
    "final_observed_silent",
    "silent_r2",
    "start_mean_p",
    "final_mean_p",
    "start_hardest_quartile_mean_p",
    "final_hardest_quartile_mean_p",
    "samples_drawn",
    "samples_vs_uniform",
    "extreme_share_measured",
    "extreme_share_predicted",
)
Run = tuple[pl.DataFrame, pl.DataFrame]


def _shared(prompts: int, steps: int, lr: float, seed: int, method: str, dapo_cap: int) -> dict[str, Any]:
    """The settings the uniform run and the planned run share."""
    return {
        "prompts": prompts,
        "steps": steps,
        "lr": lr,
        "seed": seed,
        "methods": method,
        "dapo_cap": dapo_cap,
    }


def simulate_plan(
    start: Start,
    *,
    prompts: int = 6000,
    budget: float = 8.0,
    sizes: str | Sequence[int] = (4, 8, 16, 32),
    objective: str = "signal",
    target: float | None = None,
    method: str = "grpo",
    steps: int = 150,
    lr: float = 0.5,
    seed: int = 7,
    replan_every: int | None = 10,
    dapo_cap: int = 4,
    notes: list[str] | None = None,
    on_step: Callable[[], None] | None = None,
) -> Run:
    """``method`` at a plan (made once, and re-made every ``replan_every`` steps) against uniform G; (trace,
    summary). The plan's signal is the method's (Dr. GRPO: E[σ²]; GRPO and DAPO: E[σ])."""
    rule = "drgrpo" if method == "drgrpo" else "grpo"
    options = plan_options(sizes=sizes, objective=objective, target=target, budget=budget, method=rule)
    uniform = even_sizes(options.total_rollouts(prompts), prompts)
    first: list[NDArray[np.int64]] = []

    def plan_for(p: NDArray[np.float64]) -> NDArray[np.int64]:
        sizes_now = group_sizes_for(plan_values(*distinct_values(p), options), p)
        if not first:
            first.append(sizes_now)
        return sizes_now

    common = _shared(prompts, steps, lr, seed, method, dapo_cap)
    runs = {"uniform": simulate(start, group_size=uniform, notes=notes, on_step=on_step, **common)}
    runs["plan"] = simulate(start, group_size=plan_for, on_step=on_step, **common)
    if replan_every is not None:
        runs["plan_replanned"] = simulate(
            start, group_size=plan_for, replan_every=replan_every, on_step=on_step, **common
        )
    trained = int((first[0] > 0).sum())  # the same start, so the same first plan for both plan runs
    trained_by = {"uniform": prompts, "plan": trained, "plan_replanned": trained}
    return _frames(runs, int(uniform.min()), trained_by, steps)


def simulate_planned(
    start: pl.DataFrame,
    *,
    prompts: int = 6000,
    method: str = "grpo",
    steps: int = 150,
    lr: float = 0.5,
    seed: int = 7,
    dapo_cap: int = 4,
    notes: list[str] | None = None,
    on_step: Callable[[], None] | None = None,
) -> Run:
    """``method`` at the planned sizes of ``start`` (``p``, ``group_size``, ``prompts``) against uniform G at
    the same rollouts per step; (trace, summary)."""
    sizes = planned_sizes(start, prompts, seed)
    if sizes is None:
        raise DataError("the plan has no group_size column")
    uniform = even_sizes(int(sizes.sum()), prompts)
    common = _shared(prompts, steps, lr, seed, method, dapo_cap)
    runs = {"uniform": simulate(start, group_size=uniform, notes=notes, on_step=on_step, **common)}
    runs["plan"] = simulate(start, group_size=FROM_START, on_step=on_step, **common)
    trained_by = {"uniform": prompts, "plan": int((sizes > 0).sum())}
    return _frames(runs, int(uniform.min()), trained_by, steps)


def even_sizes(rollouts: int, prompts: int) -> NDArray[np.int64]:
    """One G for every prompt, ⌊rollouts / prompts⌋ (at least 2), and one more for rollouts mod prompts of
    them, evenly spaced by position, so that the sizes sum to ``rollouts`` when G ≥ 2 allows it.

    >>> even_sizes(20, 4).tolist(), even_sizes(22, 4).tolist()
    ([5, 5, 5, 5], [5, 6, 5, 6])
    """
    base, extra = divmod(rollouts, prompts)
    if base < 2:
        return np.full(prompts, 2, dtype=np.int64)
    i = np.arange(prompts, dtype=np.int64)
    return base + ((i + 1) * extra // prompts - i * extra // prompts)


def _frames(runs: dict[str, Run], uniform_G: int, trained: dict[str, int], steps: int) -> Run:
    """The strategies' traces stacked, and their summary rows."""
    rows = [_row(name, uniform_G, trained[name], steps, *run) for name, run in runs.items()]
    samples = rows[0]["samples_drawn"]
    for row in rows:
        row["samples_vs_uniform"] = row["samples_drawn"] / samples  # type: ignore[operator]
    trace = pl.concat([t.select(pl.lit(name).alias("strategy"), pl.all()) for name, (t, _) in runs.items()])
    schema = {
        "strategy": pl.String,
        "uniform_G": pl.Int64,
        "prompts_trained": pl.Int64,
        "samples_drawn": pl.Int64,
    }
    summary = pl.DataFrame(rows, schema_overrides=schema, infer_schema_length=None).select(SUMMARY_COLUMNS)
    return trace, summary


def _row(
    name: str, G: int, trained: int, steps: int, trace: pl.DataFrame, summary: pl.DataFrame
) -> dict[str, object]:
    s = summary.row(0, named=True)
    return {
        "strategy": name,
        "uniform_G": G if name == "uniform" else None,
        "rollouts_per_step": s["samples_drawn"] / steps,
        "prompts_trained": trained,
        "mean_observed_silent": float(trace["observed_silent"].mean()),  # type: ignore[arg-type]
        "final_observed_silent": float(trace["observed_silent"][-1]),
        "silent_r2": s["silent_r2"],
        "start_mean_p": s["start_mean_p"],
        "final_mean_p": s["final_mean_p"],
        "start_hardest_quartile_mean_p": s["start_hardest_quartile_mean_p"],
        "final_hardest_quartile_mean_p": s["final_hardest_quartile_mean_p"],
        "samples_drawn": s["samples_drawn"],
        "extreme_share_measured": s["extreme_share_measured"],
        "extreme_share_predicted": s["extreme_share_predicted"],
    }


def _sizes(uniform: dict[str, Any]) -> str:
    G = uniform["uniform_G"]
    return str(G) if uniform["rollouts_per_step"] <= G * uniform["prompts_trained"] else f"{G} or {G + 1}"


def headline(summary: pl.DataFrame, what: str, steps: int, method: str) -> str:
    """Which strategy is which, and where each ends."""
    rows = {r["strategy"]: r for r in summary.iter_rows(named=True)}
    uniform = rows["uniform"]
    planned = rows.get("plan")
    lead = (
        f"{LABELS[method]} for {steps:,} steps from one start: 'uniform' is G = {_sizes(uniform)} for every "
        f"prompt ({uniform['rollouts_per_step']:,.0f} rollouts a step), 'plan' {what}"
    )
    if planned is not None:
        lead += f" ({planned['rollouts_per_step']:,.0f} a step)"
    ends = ", ".join(f"{r['final_hardest_quartile_mean_p']:.2f} ({n})" for n, r in rows.items())
    silent = ", ".join(f"{100 * r['mean_observed_silent']:.1f}% ({n})" for n, r in rows.items())
    return f"{lead}. The hardest start quartile ends at mean p {ends}; mean silent share {silent}."


# Left to the data formats, so that the table fits 80 columns: the headline gives uniform G.
TABLE_HIDES = ("uniform_G", "final_observed_silent")


def view(summary: pl.DataFrame, what: str, options: SimulateOptions) -> View:
    """The table view of a run with a plan."""
    return View(
        headline=headline(summary, what, options.steps, options.methods[0]),
        percent=percent((*summary.columns, *TRACE_COLUMNS)),
        labels=labels((*summary.columns, *TRACE_COLUMNS)),
        keys=("strategy",),
        hide=TABLE_HIDES,
        footer=[also_in_data([c for c in TABLE_HIDES if c in summary.columns])],
    )

"""The controlled run of docs/theory.md §6 with a plan: GRPO at planned group sizes against uniform G.

Every strategy draws the same start population (the same seed) and spends at most the same rollouts per
step: ``uniform`` gives every prompt the largest allowed size ≤ ``budget``; ``plan`` is made once, on the
start pass rates, for ``budget`` rollouts per prompt, and kept for the whole run; ``plan_replanned`` makes
the plan again on the current pass rates every ``replan_every`` steps (as a trainer re-estimating p̂ would,
with the exact p standing in for the estimate).

Summary columns (one row per strategy, in that order): ``strategy``, ``uniform_G`` (null for a plan),
``rollouts_per_step`` (mean answers sampled per step), ``prompts_trained`` (prompts with G > 0 at step 1),
``mean_observed_silent`` (mean over steps of the share of the step's groups that were silent),
``final_observed_silent``, ``silent_r2``, ``start_mean_p``, ``final_mean_p``,
``start_hardest_quartile_mean_p``, ``final_hardest_quartile_mean_p``, ``samples_drawn``,
``samples_vs_uniform``, ``extreme_share_measured``, ``extreme_share_predicted`` (at step 1's sizes). The
trace is ``sigmatool.simulate``'s, with ``strategy`` in front.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.options.plan import plan_options
from sigmatool.plan.core import distinct_values, plan_values
from sigmatool.plan.export import group_sizes_for
from sigmatool.simulate import Start, simulate

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


def simulate_plan(
    start: Start,
    *,
    prompts: int = 6000,
    budget: float = 8.0,
    sizes: str | Sequence[int] = (4, 8, 16, 32),
    objective: str = "signal",
    steps: int = 150,
    lr: float = 0.5,
    seed: int = 7,
    replan_every: int | None = 10,
    notes: list[str] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """GRPO with the plan (static, and re-made every ``replan_every`` steps) against uniform G; (trace, summary)."""
    options = plan_options(sizes=sizes, objective=objective, budget=budget)
    fits = [G for G in options.sizes if G <= budget]
    uniform_G = fits[-1] if fits else options.sizes[0]

    first_sizes: list[NDArray[np.int64]] = []

    def plan_for(p: NDArray[np.float64]) -> NDArray[np.int64]:
        sizes_now = group_sizes_for(plan_values(*distinct_values(p), options), p)
        if len(first_sizes) < 2 and p.size == prompts:
            first_sizes.append(sizes_now)
        return sizes_now

    common = {"prompts": prompts, "steps": steps, "lr": lr, "seed": seed, "methods": "grpo"}
    runs = {"uniform": simulate(start, group_size=uniform_G, notes=notes, **common)}  # type: ignore[arg-type]
    runs["plan"] = simulate(start, group_size=plan_for, **common)  # type: ignore[arg-type]
    if replan_every is not None:
        runs["plan_replanned"] = simulate(start, group_size=plan_for, replan_every=replan_every, **common)  # type: ignore[arg-type]
    trained = {"uniform": prompts, "plan": int((first_sizes[0] > 0).sum())}
    trained["plan_replanned"] = trained["plan"]  # the same start, so the same first plan
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

"""The table view of a plan's summary: a headline in words, short headers, the plan's sizes and guarantee."""

from __future__ import annotations

import polars as pl

from sigmatool.options.plan import PlanOptions
from sigmatool.plan.groups import Plans
from sigmatool.render import View

LABELS = {
    "uniform_G": "uniform G",
    "objective_vs_plan": "÷ plan",
    "plan_gain": "plan gain",
    "expected_silent_rate": "silent groups",
    "silent_rollout_share": "silent rollouts",
    "extreme_gradient_share": "extreme share",
    "rollouts_used": "rollouts used",
    "prompts_kept": "kept",
    "prompts_left_out": "left out",
    "group_size": "G",
    "prompt_share": "share",
}
PERCENT = (
    "plan_gain",
    "expected_silent_rate",
    "silent_rollout_share",
    "extreme_gradient_share",
    "prompt_share",
)
# The table shows what the headline compares; CSV, JSON and parquet carry every column.
HIDDEN = ("objective_vs_plan", "budget", "prompts", "min_G", "median_G", "max_G")


def objective_label(options: PlanOptions) -> str:
    """What the objective counts, in words."""
    if options.objective == "signal":
        return "Σ E[σ²]" if options.method == "drgrpo" else "Σ E[σ]"
    if options.objective == "fidelity":
        return f"prompts reaching φ* = {options.target:g}"
    if options.objective == "learnable":
        return "expected non-silent groups"
    return "Knapsack-RL value"


def _sum(summary: pl.DataFrame, strategy: str, column: str) -> float | None:
    """The column summed over groups; None when a group has no such row (no prompt with 0 < p̂ < 1)."""
    rows = summary.filter(pl.col("strategy") == strategy)
    return float(rows[column].sum()) if rows.height == summary["strategy"].eq("plan").sum() else None


def _gain(plan: float, other: float | None) -> str:
    """The plan's objective over another's, as a signed percentage."""
    if other is None:
        return "–"
    return f"{100 * (plan / other - 1):+.1f}%" if other > 0 else "(it scores 0)"


def _silent(summary: pl.DataFrame, strategy: str) -> str:
    """The expected silent share of groups over all the strategy's kept prompts (all groups)."""
    rows = summary.filter(pl.col("strategy") == strategy)
    kept = float(rows["prompts_kept"].sum())
    if not kept:
        return "–"
    silent = float((rows["expected_silent_rate"].fill_null(0.0) * rows["prompts_kept"]).sum())
    return f"{100 * silent / kept:.1f}%"


def _uniform_size(summary: pl.DataFrame, strategy: str, by: tuple[str, ...]) -> str:
    """`` (G)`` of a uniform strategy when there is one plan (with --by each group has its own)."""
    rows = summary.filter(pl.col("strategy") == strategy)
    return f" ({rows['uniform_G'][0]})" if rows.height == 1 and not by else ""


def headline(plans: Plans) -> str:
    """One paragraph: the plan against the best uniform G and against uniform G with p̂ ∈ {0, 1} dropped."""
    s = plans.summary
    mine = s.filter(pl.col("strategy") == "plan")
    plan = float(mine["objective"].sum())
    kept, left = int(mine["prompts_kept"].sum()), int(mine["prompts_left_out"].sum())
    used, budget = int(mine["rollouts_used"].sum()), int(mine["budget"].sum())
    best, dropped = "uniform_best", "uniform_dropped_best"
    where = f" (one plan per {', '.join(plans.by)} group, summed)" if plans.by else ""
    return (
        f"Plan for {plans.options.describe()}{where}: {objective_label(plans.options)} {plan:,.1f}, "
        f"{_gain(plan, _sum(s, best, 'objective'))} against the best uniform G{_uniform_size(s, best, plans.by)} "
        f"and {_gain(plan, _sum(s, dropped, 'objective'))} against the best uniform G with p̂ ∈ {{0, 1}} "
        f"dropped{_uniform_size(s, dropped, plans.by)}; silent groups {_silent(s, 'plan')} against "
        f"{_silent(s, best)} and {_silent(s, dropped)}. {kept:,} prompts kept, {left:,} left out; "
        f"mean G {used / kept if kept else 0:.2f}; {used:,} of {budget:,} rollouts used."
    )


def sizes_line(plans: Plans) -> str:
    """The plan's group sizes over all groups: prompts at each G (0 = left out)."""
    d = (
        plans.distribution.filter(pl.col("strategy") == "plan")
        .group_by("group_size")
        .agg(pl.col("prompts").sum())
    )
    total = int(d["prompts"].sum())
    parts = [
        f"{'left out' if g == 0 else f'G={g}'} {n:,} ({100 * n / total:.1f}%)"
        for g, n in d.sort("group_size").iter_rows()
    ]
    return "plan's group sizes: " + ", ".join(parts)


def view(plans: Plans) -> View:
    """The summary's table view."""
    guarantees = sorted({p.guarantee for p in plans.plans})
    footer = [sizes_line(plans), *[f"guarantee: {g}" for g in guarantees]]
    return View(
        headline=headline(plans),
        footer=footer,
        percent=PERCENT,
        labels=dict(LABELS),
        hide=(*HIDDEN, *(["signal"] if plans.options.objective == "signal" else [])),
        keys=("strategy", *plans.by),
    )


def distribution_view(plans: Plans) -> View:
    """The table view of the distribution of group sizes."""
    return View(
        headline=headline(plans),
        percent=PERCENT,
        labels=dict(LABELS),
        keys=("strategy", *plans.by),
        bars=("prompt_share",),
    )

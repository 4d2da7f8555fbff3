"""The table view of a plan's summary: a headline in words, short headers, the plan's sizes and guarantee."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.columns import labels, percent
from sigmatool.options import COLUMN
from sigmatool.options.plan import PlanOptions
from sigmatool.plan.groups import Plans
from sigmatool.render import View, also_in_data

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot

# The table shows what the headline compares; CSV, JSON and parquet carry every column.
# (the estimator: in the headline.)
HIDDEN = ("objective_vs_plan", "budget", "prompts", "min_G", "median_G", "max_G", "estimator")
# Left to the data formats, so that the table fits 80 columns: mean_G gives a uniform strategy's G, the
# footer the rollouts used, prompts_kept the prompts left out; silent groups stand for silent rollouts.
TABLE_HIDES = ("uniform_G", "silent_rollout_share", "rollouts_used", "prompts_left_out")
# With an objective other than the signal, the signal column takes the room of the extreme share.
SIGNAL_HIDES = ("extreme_gradient_share",)
# A uniform strategy and its best-G twin: one row when they are the same.
TWINS = (("uniform", "uniform_best"), ("uniform_dropped", "uniform_dropped_best"))


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
    """:func:`plan_line`; with several pass-rate columns, one per column, named."""
    columns = plans.columns()
    if not columns:
        return plan_line(plans)
    return "\n".join(f"{name}: {plan_line(part)}" for name, part in columns.items())


def plan_line(plans: Plans) -> str:
    """Three lines at 80 columns: the plan against the best uniform G and against uniform G with p̂ ∈ {0, 1}
    dropped, in its objective and in silent groups (kept prompts, mean G and rollouts are in the table)."""
    s = plans.summary
    plan = float(s.filter(pl.col("strategy") == "plan")["objective"].sum())
    best, dropped = "uniform_best", "uniform_dropped_best"
    where = f" (one plan per {', '.join(plans.by)} group, summed)" if plans.by else ""
    named = set(s["estimator"]) if "estimator" in s.columns else set()
    tag = f" [{named.pop()}]" if len(named) == 1 and "plug-in" not in named else ""
    return (
        f"Plan for {plans.options.describe()}{where}{tag}: {objective_label(plans.options)} {plan:,.1f}, "
        f"{_gain(plan, _sum(s, best, 'objective'))} against the best uniform G{_uniform_size(s, best, plans.by)}, "
        f"{_gain(plan, _sum(s, dropped, 'objective'))} with p̂ ∈ {{0, 1}} dropped{_uniform_size(s, dropped, plans.by)}; "
        f"silent groups {_silent(s, 'plan')} against {_silent(s, best)} and {_silent(s, dropped)}."
    )


def rollouts_line(plans: Plans, column: str | None = None) -> str:
    """The plan's rollouts against its budget, over all groups (of one pass-rate column, when given)."""
    mine = plans.summary.filter(pl.col("strategy") == "plan")
    if column is not None:
        mine = mine.filter(pl.col(COLUMN) == column)
    used, budget = int(mine["rollouts_used"].sum()), int(mine["budget"].sum())
    return f"plan's rollouts: {used:,} of the budget's {budget:,} used"


def distinct_rows(summary: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The summary without each best-G twin that equals its uniform strategy in every group (the default G
    is the best), and the names of the twins left out."""
    merged = []
    for base, twin in TWINS:
        rows = [summary.filter(pl.col("strategy") == name).drop("strategy") for name in (base, twin)]
        if rows[1].height and rows[0].equals(rows[1]):
            merged.append(twin)
    return summary.filter(~pl.col("strategy").is_in(merged)), merged


def _share(part: int, total: int) -> str:
    """``part`` of ``total`` as a percentage of one decimal; a part that is not 0 but rounds to it says so."""
    return "<0.1%" if 0 < 1000 * part < total / 2 else f"{100 * part / total:.1f}%"


def sizes_line(plans: Plans, column: str | None = None) -> str:
    """The plan's group sizes over all groups (of one pass-rate column, when given): prompts at each G
    (0 = left out)."""
    d = plans.distribution.filter(pl.col("strategy") == "plan")
    if column is not None:
        d = d.filter(pl.col(COLUMN) == column)
    d = d.group_by("group_size").agg(pl.col("prompts").sum())
    total = int(d["prompts"].sum())
    parts = [
        f"{'left out' if g == 0 else f'G={g}'} {n:,} ({_share(n, total)})"
        for g, n in d.sort("group_size").iter_rows()
    ]
    return "plan's group sizes: " + ", ".join(parts)


def view(plans: Plans) -> View:
    """The summary's table view: each distinct comparison once, the columns that fit 80 columns."""
    rows, merged = distinct_rows(plans.summary)
    footer = _footer(plans)
    if merged:
        footer.append(
            "rows the same as another, shown once: "
            + ", ".join(f"{twin} as {base}" for base, twin in TWINS if twin in merged)
        )
    hides = (*TABLE_HIDES, *(SIGNAL_HIDES if plans.options.objective != "signal" else ()))
    footer.append(also_in_data(hides))
    names = plans.summary.columns
    return View(
        headline=headline(plans),
        footer=footer,
        percent=percent(names),
        labels=labels(names),
        hide=(*HIDDEN, *hides, *(["signal"] if plans.options.objective == "signal" else [])),
        keys=("strategy", *plans.by),
        rows=rows,
    )


def _footer(plans: Plans) -> list[str]:
    """The plan's sizes, rollouts and guarantees: with several pass-rate columns one set per column, each
    line naming its column (and, with --by too, each guarantee its group); else over all groups."""
    if COLUMN not in plans.by:
        guarantees = sorted({p.guarantee for p in plans.plans})
        return [sizes_line(plans), rollouts_line(plans), *[f"guarantee: {g}" for g in guarantees]]
    lines = []
    at = plans.by.index(COLUMN)
    for column in dict.fromkeys(str(key[at]) for key in plans.keys):
        mine = [(k, p) for k, p in zip(plans.keys, plans.plans, strict=True) if str(k[at]) == column]
        lines += [f"{column}: {sizes_line(plans, column)}", f"{column}: {rollouts_line(plans, column)}"]
        others = len(mine) > 1
        lines += list(
            dict.fromkeys(
                f"{column}: guarantee{' (' + _group_words(plans, k) + ')' if others else ''}: {p.guarantee}"
                for k, p in mine
            )
        )
    return lines


def _group_words(plans: Plans, key: tuple[object, ...]) -> str:
    """A --by group in words, without the column key: ``source=algebra``."""
    return ", ".join(f"{name}={value}" for name, value in zip(plans.by, key, strict=True) if name != COLUMN)


def distribution_view(plans: Plans) -> View:
    """The table view of the distribution of group sizes."""
    names = plans.distribution.columns
    return View(
        headline=headline(plans),
        percent=percent(names),
        labels=labels(names),
        keys=("strategy", *plans.by),
        bars=("prompt_share",),
    )


@dataclass(frozen=True)
class PlanResult:
    """``plan``'s answer: the plans against uniform G (``distribution``: prompts and rollouts per group size
    and strategy instead); ``--plot`` draws the first group's plan. ``trust``: what the valuation says of
    the values beyond the logged samples (:meth:`~sigmatool.estimators.Valuation.bias_note`)."""

    plans: Plans
    distribution: bool = False
    trust: tuple[str, ...] = ()

    def frame(self) -> pl.DataFrame:
        return self.plans.distribution if self.distribution else self.plans.summary

    def view(self) -> View:
        return distribution_view(self.plans) if self.distribution else view(self.plans)

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot:
        """A rollout plan's group size per p, and its objective against the best uniform G at equal
        rollouts."""
        from sigmatool.figures.plan import plan_figure
        from sigmatool.plan.core import plan_frames

        frames = plan_frames(self.plans.plans[0])
        return plan_figure(
            frames.allocation,
            frames.comparison,
            objective=frames.objective,
            source=source,
            estimator=frames.estimator,
            caption=caption,
            style=style,
        )

    def warnings(self) -> tuple[str, ...]:
        return tuple(line for line in self.trust if line)

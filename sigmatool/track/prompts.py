"""Every prompt's story over a run: what the run taught it and where it was wasted (``track --per-prompt``).

One row per prompt, from its usable rollouts in each step it was drawn in: ``prompt``, ``k`` and ``n`` over
the run, ``steps`` (how many steps drew it), ``first_step``, ``first_solved_step`` (the first step with a
right answer; null if none), ``steps_all_right`` and ``steps_all_wrong`` (steps whose answers all agreed: no
gradient from it there), ``status`` and ``per_step`` (``step:k/n`` for each step, in order).

A step *solves* a prompt when at least one answer is right. The status reads the solved steps in order:
``never solved``; ``always solved``; ``learned at step s`` (unsolved in every step before s, solved in s and
every step after); ``forgotten at step s`` (solved before s, unsolved from s on); ``unstable`` (anything else).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.render.table import View

if TYPE_CHECKING:
    from sigmatool.figures.plot import Plot

COLUMNS = (
    "prompt",
    "k",
    "n",
    "steps",
    "first_step",
    "first_solved_step",
    "steps_all_right",
    "steps_all_wrong",
    "status",
    "per_step",
)


def status(steps: list[int], solved: list[bool]) -> str:
    """The status of a prompt drawn at ``steps`` (in order), solved or not in each (module docstring).

    >>> status([1, 2, 3], [False, True, True]), status([1, 2, 3], [True, False, False])
    ('learned at step 2', 'forgotten at step 2')
    >>> status([1, 2], [False, False]), status([4], [True]), status([1, 2, 3], [True, False, True])
    ('never solved', 'always solved', 'unstable')
    """
    if not any(solved):
        return "never solved"
    if all(solved):
        return "always solved"
    turn = next(i for i in range(1, len(solved)) if solved[i] != solved[i - 1])
    if all(s == solved[turn] for s in solved[turn:]):
        return f"{'learned' if solved[turn] else 'forgotten'} at step {steps[turn]}"
    return "unstable"


def prompt_stories(groups: pl.DataFrame) -> pl.DataFrame:
    """One row per prompt (columns :data:`COLUMNS`) from the run's group table (``step``, ``prompt``,
    ``G``, ``k``), in the order of each prompt's first step, then its steps' counts (``per_step``), then its
    key: the key (a hash of the text) comes last because its value differs between machines."""
    per_step = (
        groups.filter(pl.col("G") >= 1)
        .group_by("prompt", "step")
        .agg(pl.col("k").sum().cast(pl.Int64), pl.col("G").sum().cast(pl.Int64).alias("n"))
        .sort("prompt", "step")
    )
    stories = per_step.group_by("prompt", maintain_order=True).agg(
        pl.col("k").sum().alias("__k"),
        pl.col("n").sum().alias("__n"),
        pl.len().cast(pl.Int64).alias("steps"),
        pl.col("step").first().alias("first_step"),
        pl.col("step").filter(pl.col("k") > 0).first().alias("first_solved_step"),
        (pl.col("k") == pl.col("n")).sum().cast(pl.Int64).alias("steps_all_right"),
        (pl.col("k") == 0).sum().cast(pl.Int64).alias("steps_all_wrong"),
        pl.col("step").alias("__steps"),
        (pl.col("k") > 0).alias("__solved"),
        pl.concat_str(pl.col("step"), pl.lit(":"), pl.col("k"), pl.lit("/"), pl.col("n"))
        .str.join(" ")
        .alias("per_step"),
    )
    said = [
        status(s, v) for s, v in zip(stories["__steps"].to_list(), stories["__solved"].to_list(), strict=True)
    ]
    return (
        stories.with_columns(pl.Series("status", said, dtype=pl.String))
        .rename({"__k": "k", "__n": "n"})
        .sort("first_step", "per_step", "prompt")
        .select(COLUMNS)
    )


def headline(stories: pl.DataFrame) -> str:
    """How many prompts the run taught, kept, lost and wasted."""
    if stories.height == 0:
        return "The log holds no usable rollout."
    counts = stories["status"].str.replace(r" at step \d+$", "").value_counts()
    count = dict(zip(counts["status"].to_list(), counts["count"].to_list(), strict=True))
    wasted = int((stories["steps_all_right"] + stories["steps_all_wrong"] == stories["steps"]).sum())
    order = ("learned", "always solved", "never solved", "forgotten", "unstable")
    parts = [f"{count[name]:,} {name}" for name in order if count.get(name)]
    return (
        f"{stories.height:,} prompts: {', '.join(parts)}. {wasted:,} gave no gradient in any step they were "
        "drawn in (every group all right or all wrong)."
    )


def view(stories: pl.DataFrame) -> View:
    return View(
        headline=headline(stories),
        hide=("per_step",),
        footer=[
            "solved: at least one right answer in the step; steps all right / all wrong: steps whose answers "
            "agreed (no gradient); per_step (step:k/n) in the data formats"
        ],
    )


@dataclass(frozen=True)
class Stories:
    """``track --per-prompt``: one row per prompt over the run (:func:`prompt_stories`); no figure."""

    stories: pl.DataFrame

    def frame(self) -> pl.DataFrame:
        return self.stories

    def view(self) -> View:
        return view(self.stories)

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None:
        return None

    def warnings(self) -> tuple[str, ...]:
        return ()

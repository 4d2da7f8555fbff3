"""The analyses' output columns, each declared once: its name, its label for people and its unit.

The table view (:mod:`sigmatool.render.table`) heads its columns with the labels and shows shares as
percentages; the report (:mod:`sigmatool.report.page`) does the same from the same declarations; data
formats keep the snake_case names at full precision. A ``\\n`` in a label is where the table view breaks
its header; everywhere else the label reads as one line (:attr:`Column.heading`).

Units: ``share`` is a fraction in [0, 1], shown as a percentage; ``pass rate`` a p, shown exactly;
``G`` a group size; ``prompts`` a (weighted) count of prompts; ``groups`` a count of groups; ``""`` a plain
number.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SHARE = "share"
PASS_RATE = "pass rate"


@dataclass(frozen=True)
class Column:
    """One output column: ``name`` in every format, ``label`` for people, ``unit`` (see the module)."""

    name: str
    label: str
    unit: str = ""

    @property
    def heading(self) -> str:
        """The label on one line: ``"unreach-\\nable"`` → ``"unreachable"``, ``"G\\nmedian"`` → ``"G median"``."""
        return " ".join(self.label.replace("-\n", "").split())

    @property
    def percent(self) -> bool:
        return self.unit == SHARE


def _declare(*columns: Column) -> dict[str, Column]:
    named = {c.name: c for c in columns}
    if len(named) != len(columns):
        raise AssertionError("an output column is declared twice")
    return named


COLUMNS = _declare(
    # Identify a row.
    Column("column", "column"),  # the pass-rate column, with several --col
    Column("G", "G", "G"),
    Column("segment", "segment"),
    Column("p_lo", "p lo", PASS_RATE),
    Column("p_hi", "p hi", PASS_RATE),
    Column("p", "p", PASS_RATE),
    Column("prompts", "prompts", "prompts"),
    # silent
    Column("silent_rate", "silent groups", SHARE),
    Column("all_right_rate", "all right", SHARE),
    Column("all_wrong_rate", "all wrong", SHARE),
    Column("always_silent_share", "always\nsilent", SHARE),
    Column("dapo_draws_per_group", "DAPO draws\nper group", "groups"),
    Column("dapo_draws_per_group_learnable", "…learnable\nprompts only", "groups"),
    Column("dapo_unfilled_rate", "DAPO\nunfilled", SHARE),
    # budget
    Column("prompt_share", "prompts\nshare", SHARE),
    Column("grpo_share", "GRPO\n(= DAPO)", SHARE),
    Column("drgrpo_share", "Dr. GRPO", SHARE),
    Column("grpo_over_drgrpo", "GRPO ÷\nDr. GRPO"),
    # groupsize
    Column("unreachable", "unreach-\nable", "prompts"),
    Column("g_min", "G\nmin", "G"),
    Column("g_median", "G\nmedian", "G"),
    Column("g_p90", "G\np90", "G"),
    Column("g_max", "G\nmax", "G"),
    Column("mean_rollouts_schedule", "mean G\nschedule", "G"),
    Column("uniform_g_needed", "uniform G\nneeded", "G"),
    Column("savings", "savings\n×"),
    Column("share_at_target_uniform", "at target\nuniform G", SHARE),
    Column("g_median_law", "law G\nmedian", "G"),
    Column("g_p90_law", "law G\np90", "G"),
    # track, per step and per run
    Column("mean_group_size", "mean G", "G"),
    Column("min_group_size", "min G", "G"),
    Column("max_group_size", "max G", "G"),
    Column("mean_reward", "mean reward", SHARE),
    Column("silent_fraction", "silent", SHARE),
    Column("all_right_fraction", "all right", SHARE),
    Column("all_wrong_fraction", "all wrong", SHARE),
    Column("compared_groups", "compared groups", "groups"),
    Column("compared_silent_fraction", "silent (compared)", SHARE),
    Column("expected_silent_fraction", "expected silent", SHARE),
    Column("silent_z", "z"),
    Column("mean_bias", "mean bias", SHARE),
    Column("min_gap", "min gap", SHARE),
    # track's figure: measured against expected silent share per step
    Column("measured_silent", "measured silent", SHARE),
    Column("expected_silent", "expected silent", SHARE),
    Column("expected_silent_lo", "expected silent\nlow", SHARE),
    Column("expected_silent_hi", "expected silent\nhigh", SHARE),
)


def column(name: str) -> Column:
    """The declaration of an output column; an undeclared one is labelled by its name."""
    return COLUMNS.get(name) or Column(name, name.replace("_", " "))


def labels(names: Iterable[str]) -> dict[str, str]:
    """The table view's header of each declared column among ``names``."""
    return {n: COLUMNS[n].label for n in names if n in COLUMNS}


def percent(names: Iterable[str]) -> tuple[str, ...]:
    """Those of ``names`` that are shares, shown as percentages."""
    return tuple(n for n in names if n in COLUMNS and COLUMNS[n].percent)

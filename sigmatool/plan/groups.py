"""Plans for a histogram: one plan per ``--by`` group (each with the same budget per prompt), as frames.

The plan's input is each group's distinct values and how many prompts share each (:func:`plan_input`):
the distinct pass rates p̂ under the plug-in estimate; the distinct counts (k, n) when the valuation needs
them (the unbiased estimator, or a prior's posterior means), ordered by p̂. Either way the plan's curves
ask the valuation for every quantity (:class:`sigmatool.plan.curves.Rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.errors import DataError, UsageError
from sigmatool.estimators import Valuation
from sigmatool.options import COLUMN, by_columns
from sigmatool.options.plan import PlanOptions
from sigmatool.plan.core import Plan, distinct_values, plan_values
from sigmatool.plan.curves import Rows
from sigmatool.plan.export import BARE, CELL_K, CELL_N, KEY

Key = tuple[object, ...]


def plan_input(
    group: pl.DataFrame, by: Sequence[str] = (), valuation: Valuation | None = None
) -> tuple[Rows, NDArray[np.int64]]:
    """The distinct values a plan is made on (ascending p̂) and their prompts, from histogram rows."""
    if valuation is None or (not valuation.keyed and valuation.estimator != "unbiased"):
        p, counts = distinct_values(group.select("p", "prompts"))
        if valuation is not None and valuation.grader is not None:
            return Rows(pl.DataFrame({"p": p}), Valuation(grader=valuation.grader)), counts
        return Rows.plugin(p), counts
    cells = (
        group.group_by([*by, "k", "n", "p"])  # p: bare rates beside counts (k, n null) stay apart
        .agg(pl.col("prompts").sum())
        .filter(pl.col("prompts") > 0)
        .sort("p", "n", "k")
    )
    if cells.height == 0:
        raise DataError("plan: no prompts to plan for")
    counts = cells["prompts"].cast(pl.Int64).to_numpy()
    return Rows.cells(cells.select(*by, "k", "n", "p"), valuation), counts


@dataclass
class Plans:
    """One plan per ``--by`` group (a single plan without ``--by``), and their frames with the keys first."""

    by: tuple[str, ...]
    keys: list[Key]
    plans: list[Plan]
    options: PlanOptions
    schema: dict[str, pl.DataType]  # the --by columns' dtypes
    estimators: tuple[str, ...] = ()  # each group's estimator, in words (the summary's last column)

    def _stack(self, frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
        if not self.by:
            return frames[0]
        parts = [
            frame.select(
                *[pl.lit(v, dtype=self.schema[b]).alias(b) for b, v in zip(self.by, key, strict=True)],
                pl.all(),
            )
            for key, frame in zip(self.keys, frames, strict=True)
        ]
        return pl.concat(parts)

    def columns(self) -> dict[str, Plans]:
        """With the groups led by the ``column`` key (several pass-rate columns), each column's plans; else
        none."""
        if not by_columns(self.by):
            return {}
        names = dict.fromkeys(str(key[0]) for key in self.keys)
        return {
            name: Plans(
                self.by[1:],
                [key[1:] for key in self.keys if key[0] == name],
                [plan for key, plan in zip(self.keys, self.plans, strict=True) if key[0] == name],
                self.options,
                {b: dtype for b, dtype in self.schema.items() if b != COLUMN},
                tuple(e for key, e in zip(self.keys, self.estimators, strict=True) if key[0] == name),
            )
            for name in names
        }

    @cached_property
    def summary(self) -> pl.DataFrame:
        """The plan against uniform G per group: ``--by`` columns, then ``sigmatool.plan.SUMMARY_COLUMNS``,
        then the estimator that valued its prompts."""
        named = self.estimators or ("plug-in",) * len(self.plans)
        return self._stack(
            [
                p.summary.with_columns(pl.lit(e).alias("estimator"))
                for p, e in zip(self.plans, named, strict=True)
            ]
        )

    @cached_property
    def distribution(self) -> pl.DataFrame:
        """Prompts and rollouts per group size, per strategy and group."""
        return self._stack([p.distribution for p in self.plans])

    @cached_property
    def values(self) -> pl.DataFrame:
        """``sigmatool.plan.VALUE_COLUMNS`` per group: one row per distinct value and size."""
        return self._stack([p.values for p in self.plans])

    @property
    def cells(self) -> bool:
        """Whether the plans were made on counts (k, n): the export then joins on them."""
        return any(p.cells for p in self.plans)

    def tables(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """:meth:`Plan.tables` of every group, with the ``--by`` keys and the join key (the histogram's p)."""
        pairs = [p.tables() for p in self.plans]
        every, split = (self._stack([pair[i] for pair in pairs]) for i in (0, 1))
        if self.cells:  # joined on the integers (k, n), never on a float; a bare rate beside them on itself
            bare = pl.when(pl.col("n").is_null()).then(pl.col("p")).alias(BARE)
            return tuple(  # type: ignore[return-value]
                t.with_columns(bare).rename({"k": CELL_K, "n": CELL_N}) for t in (every, split)
            )
        return every.with_columns(pl.col("p").alias(KEY)), split.with_columns(pl.col("p").alias(KEY))


def _label(by: Sequence[str], key: Key) -> str:
    return ", ".join(f"{b} = {v}" for b, v in zip(by, key, strict=True))


def plan_histogram(
    hist: pl.DataFrame, by: Sequence[str], options: PlanOptions, valuation: Valuation | None = None
) -> Plans:
    """A plan for each ``--by`` group of the histogram (``by`` columns, ``p``, ``prompts``; ``k``, ``n`` for
    a valuation other than the plug-in, which :func:`sigmatool.estimators.valuation` makes)."""
    by = tuple(by)
    if by and options.total is not None:
        raise UsageError(
            "--total-rollouts with --by: each group is planned with its own budget; give --budget "
            "(rollouts per prompt, the same in every group)"
        )
    keys: list[Key] = []
    plans: list[Plan] = []
    groups = hist.partition_by(list(by), maintain_order=True, as_dict=True) if by else {(): hist}
    for key, group in groups.items():
        try:
            plans.append(plan_values(*plan_input(group, by, valuation), options))
        except UsageError as exc:
            raise UsageError(f"{_label(by, key)}: {exc}" if by else str(exc)) from None
        keys.append(key)
    schema = {b: hist.schema[b] for b in by}
    return Plans(by, keys, plans, options, schema, tuple(_estimator(valuation, by, key) for key in keys))


def _estimator(valuation: Valuation | None, by: Sequence[str], key: Key) -> str:
    """The estimator of one group's plan, in words (with several pass-rate columns, its column's)."""
    if valuation is None:
        return "plug-in"
    return (valuation.part(str(key[0])) if by_columns(by) else valuation).label

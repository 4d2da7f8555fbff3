"""What a command shows of each kind of result: the frame its data formats write, its table view, and what
its figure draws. One table by result type, so that every command writes its answer through
:func:`sigmatool.cli.run.show`; a view's module is imported only when its result is shown (a command pays
for its own view alone)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from sigmatool.plan.groups import Plans
    from sigmatool.preflight import PreflightResult
    from sigmatool.render import View


@dataclass(frozen=True)
class Distribution:
    """``plan --distribution``: prompts and rollouts per group size and strategy."""

    plans: Plans


@dataclass(frozen=True)
class Columns:
    """``preflight`` on several pass-rate columns: one loop each, shown side by side."""

    results: Mapping[str, PreflightResult]


def _plan_drawn(plans: Plans) -> object:
    from sigmatool.plan.core import plan_frames

    return plan_frames(plans.plans[0])


def _attr(name: str) -> Callable[[Any], Any]:
    return lambda result: getattr(result, name)


def _itself(result: Any) -> Any:
    return result


# Result type → (module, its view function, the frame written, what --plot draws (None: no figure)).
VIEWS: dict[str, tuple[str, str, Callable[[Any], Any], Callable[[Any], Any] | None]] = {
    "SilentResult": ("sigmatool.silent", "view", _attr("summary"), _attr("curve")),
    "BudgetResult": ("sigmatool.budget", "view", _attr("summary"), _itself),
    "GroupSizeResult": ("sigmatool.groupsize", "view", _attr("summary"), _attr("curve")),
    "Plans": ("sigmatool.plan.report", "view", _attr("summary"), _plan_drawn),
    "Distribution": (
        "sigmatool.plan.report",
        "distribution_view",
        lambda r: r.plans.distribution,
        lambda r: _plan_drawn(r.plans),
    ),
    "PreflightResult": ("sigmatool.preflight", "view", _attr("summary"), _itself),
    "Columns": ("sigmatool.preflight", "columns_view", lambda r: _stacked(r.results), None),
    "LazyFrame": ("", "", _itself, None),  # per-prompt rows, streamed as they are
}


def _stacked(results: Mapping[str, PreflightResult]) -> pl.DataFrame:
    from sigmatool.preflight import stacked

    return stacked(results)


def _entry(result: object) -> tuple[str, str, Callable[[Any], Any], Callable[[Any], Any] | None]:
    name = type(result).__name__
    if name not in VIEWS:
        raise TypeError(f"no view of a {name}")
    return VIEWS[name]


def summary_of(result: object) -> pl.DataFrame | pl.LazyFrame:
    """The frame the data formats write (per-prompt rows: a LazyFrame, streamed)."""
    frame: pl.DataFrame | pl.LazyFrame = _entry(result)[2](result)
    return frame


def view_of(result: object) -> View | None:
    """The table view (None: the rows as they are)."""
    module, function, _, _ = _entry(result)
    if not module:
        return None
    argument = result.results if isinstance(result, Columns) else result
    argument = result.plans if isinstance(result, Distribution) else argument
    view: View = getattr(importlib.import_module(module), function)(argument)
    return view


def warnings_of(result: object) -> tuple[str, ...]:
    """What the table view's headline says of the numbers' trust, for the formats that have no headline."""
    warnings: tuple[str, ...] = getattr(result, "warnings", ())
    return warnings


def drawn_of(result: object) -> object:
    """What ``--plot`` draws (:func:`sigmatool.figures.commands.draw`), or None."""
    if type(result).__name__ not in VIEWS:
        return None
    drawn = _entry(result)[3]
    return None if drawn is None else drawn(result)

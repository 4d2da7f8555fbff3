"""What a command shows of each kind of result: the frame its data formats write, its table view, what its
figure draws, and what its headline says of the numbers' trust. One table by result type, so that every
command writes its answer through :func:`sigmatool.cli.run.show`; a view's module is imported only when its
result is shown (a command pays for its own view alone)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import polars as pl

    from sigmatool.plan.groups import Plans
    from sigmatool.preflight import PreflightResult
    from sigmatool.render import View
    from sigmatool.track import TrackResult


@dataclass(frozen=True)
class Distribution:
    """``plan --distribution``: prompts and rollouts per group size and strategy."""

    plans: Plans


@dataclass(frozen=True)
class Columns:
    """``preflight`` on several pass-rate columns: one loop each, shown side by side."""

    results: Mapping[str, PreflightResult]


@dataclass(frozen=True)
class Tracked:
    """``track``: the per-step table, or with ``--summary`` the run's one row."""

    result: TrackResult
    summary: bool


@dataclass(frozen=True)
class Stories:
    """``track --per-prompt``: one row per prompt over the run (sigmatool.track.prompts)."""

    frame: pl.DataFrame


@dataclass(frozen=True)
class Simulated:
    """``simulate``: the per-step trace (``--trace``) or the summary, with the summary's view."""

    frames: tuple[pl.DataFrame, pl.DataFrame]
    view: View
    trace: bool


def _simulated_view(shown: Simulated) -> View:
    """The summary's footnotes say what its columns mean; the trace has none of them."""
    from dataclasses import replace

    return replace(shown.view, footer=[]) if shown.trace else shown.view


def _call(module: str, function: str, *args: Any) -> Any:
    """``module.function(*args)``, the module imported now."""
    return getattr(importlib.import_module(module), function)(*args)


class Shown(NamedTuple):
    """How one kind of result is shown: its data frame, its table view (None: the rows as they are), and
    what --plot draws (None: no figure)."""

    frame: Callable[[Any], Any]
    view: Callable[[Any], Any] | None
    drawn: Callable[[Any], Any] | None = None


def _plan_frames(plans: Plans) -> object:
    return _call("sigmatool.plan.core", "plan_frames", plans.plans[0])


VIEWS: dict[str, Shown] = {
    "SilentResult": Shown(
        lambda r: r.summary, lambda r: _call("sigmatool.silent", "view", r), lambda r: r.curve
    ),
    "BudgetResult": Shown(lambda r: r.summary, lambda r: _call("sigmatool.budget", "view", r), lambda r: r),
    "GroupSizeResult": Shown(
        lambda r: r.summary, lambda r: _call("sigmatool.groupsize", "view", r), lambda r: r.curve
    ),
    "Plans": Shown(lambda r: r.summary, lambda r: _call("sigmatool.plan.report", "view", r), _plan_frames),
    "Distribution": Shown(
        lambda r: r.plans.distribution,
        lambda r: _call("sigmatool.plan.report", "distribution_view", r.plans),
        lambda r: _plan_frames(r.plans),
    ),
    "PreflightResult": Shown(
        lambda r: r.summary, lambda r: _call("sigmatool.preflight", "view", r), lambda r: r
    ),
    "Columns": Shown(
        lambda r: _call("sigmatool.preflight", "stacked", r.results),
        lambda r: _call("sigmatool.preflight", "columns_view", r.results),
    ),
    "Tracked": Shown(
        lambda r: (
            r.result.steps if not r.summary else _call("sigmatool.track.view", "summary_frame", r.result)
        ),
        lambda r: _call("sigmatool.track.view", "view", r.result, r.summary),
        lambda r: r.result,
    ),
    "Stories": Shown(lambda r: r.frame, lambda r: _call("sigmatool.track.prompts", "view", r.frame)),
    "Simulated": Shown(
        lambda r: r.frames[0] if r.trace else r.frames[1],
        _simulated_view,
        lambda r: _call("sigmatool.simulate", "SimulationRun", *r.frames),
    ),
    "CurriculumResult": Shown(
        lambda r: r.steps, lambda r: _call("sigmatool.curriculum.view", "view", r), lambda r: r
    ),
    "DataFrame": Shown(lambda r: r, None),  # rows written as they are (curriculum --per-prompt)
    "LazyFrame": Shown(lambda r: r, None),  # per-prompt rows, streamed as they are
}


def _shown(result: object) -> Shown:
    name = type(result).__name__
    if name not in VIEWS:
        raise TypeError(f"no view of a {name}")
    return VIEWS[name]


def summary_of(result: object) -> pl.DataFrame | pl.LazyFrame:
    """The frame the data formats write (per-prompt rows: a LazyFrame, streamed)."""
    frame: pl.DataFrame | pl.LazyFrame = _shown(result).frame(result)
    return frame


def view_of(result: object) -> View | None:
    """The table view (None: the rows as they are)."""
    view = _shown(result).view
    return None if view is None else view(result)


def warnings_of(result: object) -> tuple[str, ...]:
    """What the table view's headline says of the numbers' trust, for the formats that have no headline."""
    warnings: tuple[str, ...] = getattr(result, "warnings", ())
    return warnings


def drawn_of(result: object) -> object:
    """What ``--plot`` draws (:func:`sigmatool.figures.commands.draw`), or None."""
    shown = VIEWS.get(type(result).__name__)
    return None if shown is None or shown.drawn is None else shown.drawn(result)

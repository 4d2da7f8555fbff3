"""A simulation as ``sigmatool simulate`` asks for it: every update rule trained at one G, or one rule at a
plan's sizes against uniform G (:mod:`sigmatool.simulate.planned`); its frames, its table view, and the notes
on how the start was drawn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from sigmatool.options import SimulateOptions
from sigmatool.options.plan import SimulatePlan
from sigmatool.render import View

Frames = tuple[pl.DataFrame, pl.DataFrame]


def simulated(
    start: pl.DataFrame | str, options: SimulateOptions, planned: SimulatePlan | None
) -> tuple[Frames, View, list[str]]:
    """The run from ``start`` (a histogram, or the name of a start population), (trace, summary), its view
    and its notes, with a progress bar on a terminal for a run of a second or more."""
    import contextlib

    from sigmatool import progress, simulate

    total = options.steps * len(options.methods) * runs(planned)
    short = options.prompts * total < simulate.PROGRESS_WORK
    with contextlib.nullcontext(progress.nothing) if short else progress.bar("simulating", total) as advance:
        return _simulated(start, options, planned, lambda: advance(1))


def _simulated(
    start: pl.DataFrame | str,
    options: SimulateOptions,
    planned: SimulatePlan | None,
    on_step: Callable[[], None],
) -> tuple[Frames, View, list[str]]:
    """:func:`simulated`'s run; ``on_step`` is called after each step of each rule (and strategy)."""
    from sigmatool import simulate

    notes: list[str] = []
    common: dict[str, Any] = {
        "prompts": options.prompts,
        "steps": options.steps,
        "lr": options.lr,
        "seed": options.seed,
        "dapo_cap": options.dapo_cap,
        "notes": notes,
        "on_step": on_step,
    }
    if planned is None:
        frames = simulate.simulate(
            start, group_size=options.group_size, methods=options.methods, pass_at=options.pass_at, **common
        )
        return frames, simulate.view(frames[1], options), notes
    return (*_planned(start, options, planned, {**common, "method": options.methods[0]}), notes)


def runs(planned: SimulatePlan | None) -> int:
    """How many runs a request makes of each rule: one, or a plan's strategies (uniform, plan, replanned)."""
    return 1 if planned is None else (2 if planned.plan is None or not planned.replan_every else 3)


def _planned(
    start: pl.DataFrame | str, options: SimulateOptions, planned: SimulatePlan, common: dict[str, Any]
) -> tuple[Frames, View]:
    """The run at planned sizes against uniform G, and its table view; ``common``: the run's settings, its
    notes and its progress."""
    from sigmatool.simulate import planned as simulation

    if planned.plan is None:
        assert isinstance(start, pl.DataFrame)
        unplanned = int(start.filter(pl.col("group_size").is_null())["prompts"].sum())
        if unplanned:
            common["notes"].append(
                f"{unplanned:,} row(s) of the plan have no group size (not planned): left out"
            )
        frames = simulation.simulate_planned(start.filter(pl.col("group_size").is_not_null()), **common)
        what = f"the group sizes of {planned.file}"
    else:
        plan = planned.plan
        assert plan.budget is not None
        frames = simulation.simulate_plan(
            start,
            budget=plan.budget,
            sizes=plan.sizes,
            objective=plan.objective,
            replan_every=planned.replan_every,
            **common,
        )
        what = f"a plan for {plan.describe()} made on the start"
        if planned.replan_every:
            what += f", 'plan_replanned' that plan re-made every {planned.replan_every} steps"
    return frames, simulation.view(frames[1], what, options)

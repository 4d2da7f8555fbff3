"""The run itself: the start population drawn, each method trained from it on its own stream (:func:`simulate`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from sigmatool.errors import UsageError
from sigmatool.options import METHODS, SimulateOptions
from sigmatool.simulate import dynamics
from sigmatool.simulate.dynamics import TRACE_COLUMNS, FloatArray, GroupSizes, IntArray, Replan, Sizes
from sigmatool.simulate.start import Start, start_sample

# ``group_size=FROM_START``: each prompt keeps the G of the start row it was drawn from (a plan's rows).
FROM_START = "start"
# Prompt-steps that take roughly a second: the CLI shows a progress bar above this much work.
PROGRESS_WORK = 5_000_000

SUMMARY_COLUMNS = (
    "method",
    "silent_r2",
    "start_mean_p",
    "final_mean_p",
    "start_hardest_quartile_mean_p",
    "final_hardest_quartile_mean_p",
    "samples_drawn",
    "samples_vs_grpo",
    "extreme_share_measured",
    "extreme_share_predicted",
)


@dataclass(frozen=True)
class _Setup:
    """What every method's run shares: the start p, the sizes, the quartiles and the streams."""

    p0: FloatArray
    G: Sizes
    replan: Replan | None
    credit: dynamics.Credit
    quartile: IntArray
    streams: list[np.random.Generator]


def _streams(seed: int) -> list[np.random.Generator]:
    """The run's fixed streams: the start population, then one per method to run it and one to measure."""
    return [
        np.random.Generator(np.random.PCG64(s))
        for s in np.random.SeedSequence(seed).spawn(1 + 2 * len(METHODS))
    ]


def planned_sizes(start: Start, prompts: int, seed: int) -> IntArray | None:
    """The G each prompt of the start population gets from a start frame with ``group_size`` (else None):
    the same draw :func:`simulate` makes with this seed."""
    return start_sample(start, prompts, _streams(seed)[0])[1]


def _setup(
    start: Start,
    prompts: int,
    group_size: GroupSizes | str,
    seed: int,
    replan_every: int | None,
    notes: list[str] | None,
    pass_at: int = 1,
) -> _Setup:
    streams = _streams(seed)
    p0, planned = start_sample(start, prompts, streams[0], notes)
    if isinstance(group_size, str):
        if group_size != FROM_START or planned is None:
            raise UsageError(
                f"group_size={group_size!r}: give a G, per-prompt sizes, or {FROM_START!r} with a start "
                "frame that has a group_size column"
            )
        group_size = planned
    G = dynamics.group_sizes(group_size, p0)
    used = np.atleast_1d(np.asarray(G))
    used = used[used > 0]
    if used.size and pass_at > int(used.min()):
        raise UsageError(
            f"--pass-at {pass_at} > G = {int(used.min())}: a group of fewer than K answers has no pass@K"
        )
    replan = dynamics.replan_rule(group_size, replan_every)
    return _Setup(p0, G, replan, dynamics.Credit(pass_at), dynamics.quartiles(p0), streams)


def _summary_row(
    method: str, trace: pl.DataFrame, s: _Setup, shares: tuple[float, float], reference: int
) -> dict[str, object]:
    samples = int(trace["samples_drawn"].sum())
    start_q1 = float(dynamics.quartile_means(s.p0, s.quartile)[0])
    return {
        "method": method,
        "silent_r2": dynamics.r_squared(
            trace["observed_silent"].to_numpy(), trace["predicted_silent"].to_numpy()
        ),
        "start_mean_p": float(s.p0.mean()),
        "final_mean_p": float(trace["mean_p"][-1]),
        "start_hardest_quartile_mean_p": start_q1,
        "final_hardest_quartile_mean_p": trace["q1_mean_p"][-1],
        "samples_drawn": samples,
        "samples_vs_grpo": samples / reference,
        "extreme_share_measured": shares[0],
        "extreme_share_predicted": shares[1],
    }


def simulate(
    start: Start,
    *,
    prompts: int = 6000,
    group_size: GroupSizes | str = 8,
    steps: int = 150,
    lr: float = 0.5,
    seed: int = 7,
    methods: str | Sequence[str] = METHODS,
    dapo_cap: int = 4,
    notes: list[str] | None = None,
    on_step: Callable[[], None] | None = None,
    replan_every: int | None = None,
    pass_at: int = 1,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Run docs/theory.md §6's controlled training run; returns (trace, summary) frames.

    ``start``: a histogram frame (``p``, ``prompts``, as :func:`sigmatool.histogram` returns), an array of
    pass rates, or ``"beta-mix"``. ``notes`` collects lines for people (how the start was drawn);
    ``on_step`` is called after each simulated step (a progress bar). ``group_size``: one G, or one per
    prompt (0 = not trained) as an array or as a function of the start p, or ``"start"`` for the start
    frame's ``group_size`` column; with ``replan_every`` = k the function is called again on the current p
    every k steps (sizes checked in _setup). ``pass_at``: gains are pass@K weights (docs/passk.md).
    """
    one_size = int(group_size) if isinstance(group_size, int | np.integer) else 2
    listed = tuple(methods) if not isinstance(methods, str) else (methods,)
    chosen = SimulateOptions(prompts, one_size, steps, lr, seed, listed, dapo_cap).methods
    s = _setup(start, prompts, group_size, seed, replan_every, notes, pass_at)
    # GRPO's samples: one group per prompt and step, at the step-1 sizes.
    reference = int(np.sum(s.G)) * (prompts if isinstance(s.G, int) else 1) * steps
    traces, rows = [], []
    for method in chosen:
        index = METHODS.index(method)
        trace = dynamics.run(
            method,
            s.p0,
            G=s.G,
            steps=steps,
            lr=lr,
            cap=dapo_cap,
            credit=s.credit,
            quartile=s.quartile,
            rng=s.streams[1 + index],
            on_step=on_step,
            replan=s.replan,
        )
        traces.append(trace)
        stream = s.streams[1 + len(METHODS) + index]
        shares = dynamics.extreme_shares(method, s.p0, s.G, dapo_cap, s.credit, stream)
        rows.append(_summary_row(method, trace, s, shares, reference))
    order = {m: i for i, m in enumerate(METHODS)}
    trace_frame = (
        pl.concat(traces)
        .with_columns(pl.col("method").replace_strict(order, return_dtype=pl.Int64).alias("__order"))
        .sort(["step", "__order"])
        .select(TRACE_COLUMNS)
    )
    schema = {"method": pl.String, "samples_drawn": pl.Int64}
    summary = pl.DataFrame(rows, schema_overrides=schema, infer_schema_length=None).select(SUMMARY_COLUMNS)
    return trace_frame, summary

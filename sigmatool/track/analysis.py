"""The analysis: a training log's groups step by step against their expectation (the drift rule's defaults,
:func:`track` and :func:`track_groups`)."""

from __future__ import annotations

import polars as pl

from sigmatool.errors import DataError, UsageError
from sigmatool.track.expected import Estimate, from_table, leave_one_step_out
from sigmatool.track.expected import window as expected_window
from sigmatool.track.groups import group_table
from sigmatool.track.result import TrackResult
from sigmatool.track.steps import run_table, silent_band, step_table

Z_THRESHOLD = 4.0
MIN_GAP = 0.02


def _single_step_prompts(groups: pl.DataFrame) -> int:
    usable = groups.filter(pl.col("G") >= 1)
    return int(
        usable.group_by("prompt").agg(pl.col("step").n_unique().alias("s")).filter(pl.col("s") == 1).height
    )


def track(
    log: pl.LazyFrame,
    rates: pl.DataFrame | None = None,
    *,
    z_threshold: float = Z_THRESHOLD,
    min_gap: float = MIN_GAP,
    window: int | None = None,
) -> TrackResult:
    """Per-step measured and expected silent fractions of a training log.

    The expectation comes from ``rates`` (columns ``prompt`` and ``p``, or ``k`` and ``n``; with a ``step``
    column, one rate per step and prompt) when given; else from each prompt's rollouts in the ``window``
    steps before and after each step when ``window`` is given; else from its rollouts in all the other steps
    (leave-one-step-out). A step is flagged as drift when ``|silent_z| ≥ z_threshold`` and the measured and
    expected fractions differ by at least ``min_gap``.
    """
    _check_rule(z_threshold, min_gap)
    return track_groups(group_table(log), rates, z_threshold=z_threshold, min_gap=min_gap, window=window)


def _check_rule(z_threshold: float, min_gap: float) -> None:
    if not z_threshold > 0:
        raise UsageError(f"the z threshold must be positive, not {z_threshold}")
    if not 0 <= min_gap <= 1:
        raise UsageError(f"the minimum gap is a fraction in [0, 1], not {min_gap}")


def _check_credit(groups: pl.DataFrame, pass_at: int) -> None:
    """Every logged group holds at least K usable answers: a smaller one has no pass@K."""
    short = groups.filter((pl.col("G") >= 1) & (pl.col("G") < pass_at)).sort("step")
    if short.height:
        first = short.row(0, named=True)
        raise DataError(
            f"--pass-at {pass_at}: {short.height:,} logged group(s) hold fewer than {pass_at} usable answers "
            f"(the first at step {first['step']}, prompt {first['prompt']!r}, {first['G']} answers): a group "
            "of fewer than K answers has no pass@K"
        )


def track_groups(
    all_groups: pl.DataFrame,
    rates: pl.DataFrame | None = None,
    *,
    z_threshold: float = Z_THRESHOLD,
    min_gap: float = MIN_GAP,
    window: int | None = None,
    estimate: Estimate = None,
    pass_at: int = 1,
) -> TrackResult:
    """:func:`track` from the group table of :func:`group_table`; ``estimate`` the estimator and prior of
    the expectation from counts (by default the one rule every command uses); a group silent and all right
    under pass@``pass_at`` credit (docs/passk.md), every group holding at least K answers."""
    _check_rule(z_threshold, min_gap)
    if pass_at > 1:
        _check_credit(all_groups, pass_at)
    if rates is not None and window is not None:
        raise UsageError("the expectation comes from a pass-rate table or from a window of steps, not both")
    if window is not None:
        groups = expected_window(all_groups, window, estimate, pass_at)
        estimator, single = f"window of {window} step{'s' if window > 1 else ''}", None
    elif rates is None:
        groups = leave_one_step_out(all_groups, estimate, pass_at)
        estimator, single = "leave-one-step-out", _single_step_prompts(all_groups)
    else:
        groups = from_table(all_groups, rates, estimate, pass_at)
        estimator, single = "pass-rate table", None
    steps = step_table(groups, z_threshold, min_gap, pass_at)
    run = run_table(steps, groups, all_groups, single, pass_at)
    band = silent_band(steps, groups, z_threshold)
    return TrackResult(steps, run, groups, estimator, z_threshold, min_gap, band)

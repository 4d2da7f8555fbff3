"""A training run step by step: how many sampled groups were silent (σ = 0), against how many were expected.

Input: a polars LazyFrame with one row per rollout and columns ``step``, ``group``, ``prompt``, ``right``,
``usable`` (see :mod:`sigmatool.track.groups`). :func:`track` returns a per-step table and a one-row run table
(columns in :mod:`sigmatool.track.steps`); :func:`headline` says what they show in one sentence;
:func:`export_pass_rates` gives per-prompt (k, n) over the run or a window of steps. docs/track.md explains
the estimator, the drift rule and the correspondence with TRL's ``frac_reward_zero_std``.

The analysis is in :mod:`.analysis`, its answer and views in :mod:`.result`.
"""

from __future__ import annotations

from sigmatool.track.analysis import MIN_GAP, Z_THRESHOLD, track, track_groups
from sigmatool.track.expected import EXPECTED, from_table, leave_one_step_out
from sigmatool.track.expected import window as expected_window
from sigmatool.track.groups import LOG_COLUMNS, export_pass_rates, group_table, pass_rates_of
from sigmatool.track.result import TrackResult, headline, summary_frame, view
from sigmatool.track.steps import RUN_COLUMNS, STEP_COLUMNS, fit_statistics, silent_band

__all__ = [
    "EXPECTED",
    "LOG_COLUMNS",
    "MIN_GAP",
    "RUN_COLUMNS",
    "STEP_COLUMNS",
    "Z_THRESHOLD",
    "TrackResult",
    "expected_window",
    "export_pass_rates",
    "fit_statistics",
    "from_table",
    "group_table",
    "headline",
    "leave_one_step_out",
    "pass_rates_of",
    "silent_band",
    "summary_frame",
    "track",
    "track_groups",
    "view",
]

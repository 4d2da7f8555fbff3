"""Preflight: what a trainer's DAPO batch loop will do with a dataset, before the GPUs start.

The model, and the verl function it mirrors (:mod:`.model`); a run of many steps (:mod:`.runs`); the
smallest safe settings (:mod:`.safe`); the sums of the other trainers' loops (:mod:`.others`); the summary
row and :func:`analyse` (:mod:`.summary`); the headline (:mod:`.words`); the results that show them
(:mod:`.result`). The loop's settings, and the names each trainer gives them, are the trainers wing's
(:class:`sigmatool.trainers.settings.LoopSettings`). Internal constants and helpers are imported from their
modules.
"""

from sigmatool.preflight import others
from sigmatool.preflight.model import (
    Keep,
    Step,
    keep_probabilities,
    lost_shares,
    replace_step,
    short_after,
    silent_over,
    step,
)
from sigmatool.preflight.result import PreflightColumns, PreflightResult, headline
from sigmatool.preflight.runs import crash_of, run_crash, run_of, run_outcome, run_outcome_of, step_of
from sigmatool.preflight.safe import min_safe_gen_batch_size, min_safe_max_gen_batches
from sigmatool.preflight.summary import COLUMNS, PLAIN_COLUMNS, analyse, curve, summarize
from sigmatool.trainers.settings import LoopSettings

__all__ = [
    "COLUMNS",
    "PLAIN_COLUMNS",
    "Keep",
    "LoopSettings",
    "PreflightColumns",
    "PreflightResult",
    "Step",
    "analyse",
    "crash_of",
    "curve",
    "headline",
    "keep_probabilities",
    "lost_shares",
    "min_safe_gen_batch_size",
    "min_safe_max_gen_batches",
    "others",
    "replace_step",
    "run_crash",
    "run_of",
    "run_outcome",
    "run_outcome_of",
    "short_after",
    "silent_over",
    "step",
    "step_of",
    "summarize",
]

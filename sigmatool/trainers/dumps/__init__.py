"""Read the rollout dumps that RL trainers write, exactly as they write them.

``find_dump_files(trainer, args)`` turns files, globs and folders into :class:`DumpFile` s;
``scan_trainer(trainer, files, reward_col=, threshold=)`` gives a :class:`TrainerLog` whose lazy ``frame``
has one row per rollout (``step``, ``group``, ``prompt``, ``reward``, ``right``, ``usable``, ``bad``);
``rollout_counts(log, keys)`` counts k right of n usable per key in one streaming pass. Layouts, fields
and reward rules per trainer, with the code they were read from: docs/trainers.md.
"""

from __future__ import annotations

from sigmatool.options import TRAINERS
from sigmatool.trainers.dumps.files import DumpFile, find_dump_files, refuse_pickle, step_of
from sigmatool.trainers.dumps.log import COLUMNS, TrainerLog, describe_bad_rows, rollout_counts, scan_trainer
from sigmatool.trainers.dumps.loggers import SelectionError, capture_reasons, selection

__all__ = [
    "COLUMNS",
    "TRAINERS",
    "DumpFile",
    "SelectionError",
    "TrainerLog",
    "capture_reasons",
    "describe_bad_rows",
    "find_dump_files",
    "refuse_pickle",
    "rollout_counts",
    "scan_trainer",
    "selection",
    "step_of",
]

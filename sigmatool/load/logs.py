"""A trainer's rollout dumps (``--from``) as a dataset: graded rollouts pooled into k, n per prompt.

The readers of :mod:`sigmatool.trainers.dumps` give one row per rollout with the trainer's default reward rule
(or ``--reward-col``/``--threshold``); prompts are keyed by a 64-bit hash of their text. From there on a dump
is a rollout log like ``--rollouts``: the same per-prompt aggregation, checks and notes.
"""

from __future__ import annotations

import polars as pl

from sigmatool.load.columns import rollout_frame
from sigmatool.load.dataset import Dataset
from sigmatool.load.names import BAD, RAW_ID, REWARD, RIGHT, USABLE
from sigmatool.load.sources import Source
from sigmatool.options import InputOptions
from sigmatool.trainers.dumps import TrainerLog, find_dump_files, scan_trainer


def trainer_log(options: InputOptions) -> TrainerLog:
    """The dump files that DATA name (files, globs, folders), scanned lazily; reads schemas only (any other
    rollout log followed step by step: :func:`sigmatool.load.runs.run_log`)."""
    trainer = options.trainer or ""
    options.check_data()
    files = find_dump_files(trainer, options.paths)
    return scan_trainer(trainer, files, reward_col=options.reward_col, threshold=options.threshold)


def trainer_dataset(options: InputOptions) -> Dataset:
    """The dumps as a rollout-log :class:`Dataset` (``--by`` the step, or what the layout names: LABELS)."""
    log = trainer_log(options)
    raw = log.frame.select(
        *[pl.col(b) for b in options.by],
        pl.col("prompt").alias(RAW_ID),
        pl.col("reward").alias(REWARD),
        pl.col("right").alias(RIGHT),
        pl.col("usable").alias(USABLE),
        pl.col("bad").alias(BAD),
    )
    sources = tuple(
        Source(f.path, "parquet" if f.path.endswith(".parquet") else "jsonl", f.path) for f in log.files
    )
    frame = rollout_frame(raw, options.by)
    return Dataset(frame, sources, options, tuple(log.rules), raw=raw, form="trainer", log=log)

"""Rollout logs: graded answers pooled into k right of n per prompt (``--rollouts``, a trainer's ``--from``).

A rollout log has one row per answer, its reward graded (:func:`reward_flags`: right when 1, or at least T
with ``--threshold T``), and the rows are pooled per prompt into k, n and the bad and missing rewards left
out of them (:func:`rollout_frame`).
The readers of :mod:`sigmatool.trainers.dumps` give one row per rollout with the trainer's default reward rule
(or ``--reward-col``/``--threshold``); prompts are keyed by a 64-bit hash of their text. From there on a dump
is a rollout log like ``--rollouts``: the same per-prompt aggregation, checks and notes.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from sigmatool.load.dataset import Dataset
from sigmatool.load.names import (
    BAD,
    BAD_REWARDS,
    GROUP,
    NULL_REWARDS,
    RAW_ID,
    RAW_K,
    RAW_N,
    RAW_W,
    REWARD,
    RIGHT,
    ROLLOUT,
    USABLE,
)
from sigmatool.load.sources import Source
from sigmatool.options import InputOptions
from sigmatool.trainers.dumps import TrainerLog, find_dump_files, scan_trainer
from sigmatool.trainers.dumps.readers import Options


def reward_flags(opts: InputOptions, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """(right, usable) for one rollout row's reward, both false on a null; bad = present and not usable."""
    reward = pl.col(REWARD)
    if dtype == pl.Boolean:
        return reward.fill_null(False), reward.is_not_null()
    # 0 and 1 are exact in every numeric dtype: compared in their own (no cast per row). A threshold is
    # compared in double precision, as SQL engines compare a float column with a double literal (a float32
    # 0.7 is below 0.7); text is parsed and mostly fails.
    if opts.threshold is not None:
        value = reward.cast(pl.Float64, strict=False)
        usable = value.is_not_null() & ~value.is_nan()
        return (value >= opts.threshold).fill_null(False) & usable, usable
    value = reward if dtype.is_numeric() else reward.cast(pl.Float64, strict=False)
    return (value == 1).fill_null(False), ((value == 0) | (value == 1)).fill_null(False)


def rollout_rows(frame: pl.LazyFrame, opts: InputOptions) -> pl.LazyFrame:
    """A log's rows, each rollout once with ``--rollout-col``: its first row's prompt (and text, group and
    row number), its last row's reward (a multi-turn rollout logs a row per turn; the reward comes last)."""
    if not opts.rollout_col:
        return frame
    keys = [*opts.by, *([GROUP] if opts.group_col else []), ROLLOUT]
    others = [c for c in frame.collect_schema().names() if c not in keys]
    return frame.group_by(keys, maintain_order=True).agg(
        *[pl.col(c).last() if c == REWARD else pl.col(c).first() for c in others]
    )


def rollout_aggregates() -> list[pl.Expr]:
    """Per-prompt aggregates of rollout rows: k, n, and the bad and missing rewards left out of them."""
    return [
        pl.col(RIGHT).sum().alias(RAW_K),
        pl.col(USABLE).sum().alias(RAW_N),
        pl.col(BAD).sum().alias(BAD_REWARDS),
        (~pl.col(USABLE) & ~pl.col(BAD)).sum().alias(NULL_REWARDS),
    ]


# Two per-prompt counts share one UInt64 sum, 32 bits each: a prompt's counts stay below 2^32 as before
# (a boolean column sums to UInt32). One wide sum per pair takes less memory and time than two narrow ones.
_HALF = 1 << 32


def packed_rollout_aggregates(flags: bool = True) -> list[pl.Expr]:
    """:func:`rollout_aggregates` as two sums: (k, n) and (bad, missing), each pair packed in a UInt64; the
    first alone without ``flags`` (a log whose rewards are all 0 or 1 has no bad or missing ones to count)."""
    u64 = pl.UInt64
    missing = ~pl.col(USABLE) & ~pl.col(BAD)
    kn = (pl.col(RIGHT).cast(u64) + pl.col(USABLE).cast(u64) * _HALF).sum().alias("__kn")
    if not flags:
        return [kn]
    return [kn, (pl.col(BAD).cast(u64) + missing.cast(u64) * _HALF).sum().alias("__bn")]


def unpacked_rollout_columns(flags: bool = True) -> list[pl.Expr]:
    """The columns of :func:`rollout_aggregates` from those of :func:`packed_rollout_aggregates` (without
    ``flags``, no bad or missing rewards)."""
    u32 = pl.UInt32
    counts = [
        (pl.col("__kn") % _HALF).cast(u32).alias(RAW_K),
        (pl.col("__kn") // _HALF).cast(u32).alias(RAW_N),
    ]
    if not flags:
        return [*counts, pl.lit(0, u32).alias(BAD_REWARDS), pl.lit(0, u32).alias(NULL_REWARDS)]
    return [
        *counts,
        (pl.col("__bn") % _HALF).cast(u32).alias(BAD_REWARDS),
        (pl.col("__bn") // _HALF).cast(u32).alias(NULL_REWARDS),
    ]


def rollout_frame(raw: pl.LazyFrame, by: Sequence[str]) -> pl.LazyFrame:
    """Graded rollout rows into one row per prompt (in order of first appearance): ``--by`` columns, id,
    k, n, weight 1, and the bad and missing rewards left out."""
    return (
        raw.group_by([*by, RAW_ID], maintain_order=True)
        .agg(rollout_aggregates())
        .with_columns(pl.lit(1.0).alias(RAW_W))
    )


def trainer_log(options: InputOptions) -> TrainerLog:
    """The dump files that DATA name (files, globs, folders), scanned lazily; reads schemas only (any other
    rollout log followed step by step: :func:`sigmatool.load.runs.run_log`)."""
    trainer = options.trainer or ""
    options.check_data()
    files = find_dump_files(trainer, options.paths)
    columns = Options(
        prompt_cols=options.prompt_key,
        group_col=options.group_col,
        step_col=options.step_col,
        prompt_masks=options.prompt_masks,
    )
    return scan_trainer(
        trainer, files, reward_col=options.reward_col, threshold=options.threshold, columns=columns
    )


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

"""A training log's rollouts into one row per sampled group, after checking the input contract.

The log is a polars LazyFrame with one row per rollout: ``step`` (integer), ``group`` (the key of one sampled
group), ``prompt`` (a prompt key, unsigned integer or text), ``right`` and ``usable`` (Boolean). A rollout
whose reward is not usable takes no part: a group's size G is its number of usable rollouts, k the number of
those that are right.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import polars as pl

from sigmatool.errors import DataError, UsageError
from sigmatool.load.grouping import key_notes

if TYPE_CHECKING:
    from sigmatool.trainers.dumps import TrainerLog

LOG_COLUMNS = ("step", "group", "prompt", "right", "usable")
# Optional: ``bad`` (Boolean) marks a present reward that cannot be graded, as the trainer readers give it.
OPTIONAL_COLUMNS = ("bad",)
# Optional, together: where a rollout was read (``file``, an index into the files named to group_table, and
# its ``row``), so that a message names a place the user can open rather than a group's hash.
WHERE_COLUMNS = ("file", "row")
MAX_NAMED = 5


def _check_schema(schema: Mapping[str, pl.DataType]) -> None:
    missing = [c for c in LOG_COLUMNS if c not in schema]
    if missing:
        raise DataError(
            f"training log: missing column(s) {', '.join(missing)}; the columns are: {', '.join(schema)}"
        )
    wrong = []
    if not schema["step"].is_integer():
        wrong.append(f"step is {schema['step']}, not an integer")
    for flag in ("right", "usable"):
        if schema[flag] != pl.Boolean:
            wrong.append(f"{flag} is {schema[flag]}, not Boolean")
    prompt = schema["prompt"]
    if not (prompt.is_integer() or prompt == pl.String):
        wrong.append(f"prompt is {prompt}, not an integer or text key")
    if wrong:
        raise DataError(f"training log: {'; '.join(wrong)}")


def checked(log: pl.LazyFrame) -> pl.LazyFrame:
    """The log with its columns checked (schema only: nothing is read), ``step`` as Int64, ``bad`` added."""
    schema = log.collect_schema()
    _check_schema(schema)
    bad = pl.col("bad").fill_null(False) if "bad" in schema else pl.lit(False)
    where = [c for c in WHERE_COLUMNS if c in schema] if all(c in schema for c in WHERE_COLUMNS) else []
    return log.select(
        pl.col("step").cast(pl.Int64), "group", "prompt", "right", "usable", bad.alias("bad"), *where
    )


def group_table(log: pl.LazyFrame, files: Sequence[str] = ()) -> pl.DataFrame:
    """One row per (step, group): ``step``, ``group``, ``prompt``, ``G`` (usable rollouts), ``k`` (right ones),
    ``bad`` and ``missing`` (rollouts whose reward could not be graded or was missing; Int64).

    Groups without a usable rollout are kept with G = 0 so that they can be counted. Raises DataError for a
    null key, a usable rollout without a grade, or a group that mixes prompts. Whether a bad reward is an
    error is the caller's choice (the trainer readers name its file and rows). With ``files`` and the log's
    ``file`` and ``row`` columns, a message names a group by one of its rollouts' file and row.
    """
    lf = checked(log)
    where = [pl.col(c).first() for c in WHERE_COLUMNS] if files and "file" in lf.collect_schema() else []
    groups = (
        lf.group_by("step", "group")
        .agg(
            *where,
            pl.col("prompt").first(),
            pl.col("prompt").n_unique().alias("__prompts"),
            pl.col("usable").fill_null(False).sum().cast(pl.Int64).alias("G"),
            (pl.col("usable").fill_null(False) & pl.col("right").fill_null(False))
            .sum()
            .cast(pl.Int64)
            .alias("k"),
            (pl.col("usable").fill_null(False) & pl.col("right").is_null()).sum().alias("__ungraded"),
            pl.col("bad").sum().cast(pl.Int64),
            (~pl.col("usable").fill_null(False) & ~pl.col("bad")).sum().cast(pl.Int64).alias("missing"),
            pl.any_horizontal(pl.col("step", "group", "prompt").is_null()).any().alias("__null_key"),
        )
        .sort("step", "group", nulls_last=True)
        .collect()
    )
    _check_groups(groups, files)
    return groups.select("step", "group", "prompt", "G", "k", "bad", "missing")


def _named(groups: pl.DataFrame, files: Sequence[str]) -> str:
    """The first groups, each by a place a user can open (file and row) when known, else by its key."""
    first = groups.head(MAX_NAMED)
    if files and "file" in first.columns:
        return ", ".join(
            f"step {s} at {files[f]} row {r}" for s, f, r in first.select("step", "file", "row").rows()
        )
    return ", ".join(f"step {s} group {g!r}" for s, g in first.select("step", "group").rows())


def _check_groups(groups: pl.DataFrame, files: Sequence[str] = ()) -> None:
    if groups["__null_key"].any():
        raise DataError("training log: some rollouts have a null step, group or prompt")
    for column, message in (
        ("__ungraded", "usable rollouts without a right/wrong grade"),
        ("__prompts", "groups that mix several prompts"),
    ):
        limit = 0 if column == "__ungraded" else 1
        bad = groups.filter(pl.col(column) > limit)
        if bad.height:
            raise DataError(f"training log: {bad.height} {message} ({_named(bad, files)})")


def export_pass_rates(log: pl.LazyFrame, steps: tuple[int, int] | None = None) -> pl.DataFrame:
    """Per-prompt counts over the run, or over the steps ``first…last`` (inclusive): ``prompt``, ``k``, ``n``.

    n counts usable rollouts and k the right ones; prompts with no usable rollout in the window are left out.
    The frame is what every sigmatool command reads with k and n columns.
    """
    return pass_rates_of(group_table(log), steps)


def pass_rates_of(groups: pl.DataFrame, steps: tuple[int, int] | None = None) -> pl.DataFrame:
    """:func:`export_pass_rates` from the group table: k and n summed per prompt over the window."""
    if steps is not None:
        first, last = steps
        if first > last:
            raise UsageError(f"the step window {first}…{last} is empty: the first step is after the last")
        groups = groups.filter(pl.col("step").is_between(first, last))
    return (
        groups.filter(pl.col("G") >= 1)
        .group_by("prompt")
        .agg(pl.col("k").sum().cast(pl.Int64), pl.col("G").sum().cast(pl.Int64).alias("n"))
        .sort("prompt")
    )


def dump_groups(trainer_log: TrainerLog, allow_bad: bool = False) -> tuple[pl.DataFrame, list[str]]:
    """A trainer's dumps as the group table, read once, and notes for people (the log's own, and rollouts
    skipped for a missing reward); a reward that cannot be graded (unless ``allow_bad``: --invalid counts
    it), or a dump polars cannot read, stops it."""
    from sigmatool.trainers.dumps import describe_bad_rows
    from sigmatool.trainers.dumps.log import ROLLOUTS

    try:
        groups = (
            trainer_log.groups
            if trainer_log.groups is not None
            else group_table(trainer_log.frame, [f.path for f in trainer_log.files])
        )
    except pl.exceptions.PolarsError as exc:
        lines = str(exc).strip().splitlines() or [type(exc).__name__]
        raise DataError(f"cannot read the {trainer_log.trainer} dump: {lines[0]}") from exc
    if int(groups["bad"].sum()) and not allow_bad:
        raise DataError(describe_bad_rows(trainer_log))
    missing = int(groups["missing"].sum())
    skipped = (
        [f"{trainer_log.trainer}: skipped {missing:,} rollout(s) with a missing reward"] if missing else []
    )
    per_prompt = pass_rates_of(groups).group_by("n").agg(pl.len().alias("prompts"))
    plain = trainer_log.trainer == ROLLOUTS  # a --rollouts log: its key is the user's --prompt-col
    keys = key_notes(per_prompt, trainer=None if plain else trainer_log.trainer)
    return groups, [*trainer_log.notes, *skipped, *keys]

"""A training log's rollouts into one row per sampled group, after checking the input contract.

The log is a polars LazyFrame with one row per rollout: ``step`` (integer), ``group`` (the key of one sampled
group), ``prompt`` (a prompt key, unsigned integer or text), ``right`` and ``usable`` (Boolean). A rollout
whose reward is not usable takes no part: a group's size G is its number of usable rollouts, k the number of
those that are right.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from sigmatool.errors import DataError, UsageError

LOG_COLUMNS = ("step", "group", "prompt", "right", "usable")
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
    """The log with its columns checked (schema only: nothing is read) and ``step`` as Int64."""
    _check_schema(log.collect_schema())
    return log.select(pl.col("step").cast(pl.Int64), "group", "prompt", "right", "usable")


def group_table(log: pl.LazyFrame) -> pl.DataFrame:
    """One row per (step, group): ``step``, ``group``, ``prompt``, ``G`` (usable rollouts), ``k`` (right ones).

    Groups without a usable rollout are kept with G = 0 so that they can be counted. Raises DataError for a
    null key, a usable rollout without a grade, or a group that mixes prompts.
    """
    lf = checked(log)
    groups = (
        lf.group_by("step", "group")
        .agg(
            pl.col("prompt").first(),
            pl.col("prompt").n_unique().alias("__prompts"),
            pl.col("usable").fill_null(False).sum().cast(pl.Int64).alias("G"),
            (pl.col("usable").fill_null(False) & pl.col("right").fill_null(False))
            .sum()
            .cast(pl.Int64)
            .alias("k"),
            (pl.col("usable").fill_null(False) & pl.col("right").is_null()).sum().alias("__ungraded"),
            pl.any_horizontal(pl.col("step", "group", "prompt").is_null()).any().alias("__null_key"),
        )
        .sort("step", "group", nulls_last=True)
        .collect()
    )
    _check_groups(groups)
    return groups.select("step", "group", "prompt", "G", "k")


def _check_groups(groups: pl.DataFrame) -> None:
    if groups["__null_key"].any():
        raise DataError("training log: some rollouts have a null step, group or prompt")
    for column, message in (
        ("__ungraded", "usable rollouts without a right/wrong grade"),
        ("__prompts", "groups that mix several prompts"),
    ):
        limit = 0 if column == "__ungraded" else 1
        bad = groups.filter(pl.col(column) > limit)
        if bad.height:
            named = ", ".join(
                f"step {s} group {g!r}" for s, g in bad.select("step", "group").head(MAX_NAMED).rows()
            )
            raise DataError(f"training log: {bad.height} {message} ({named})")


def export_pass_rates(log: pl.LazyFrame, steps: tuple[int, int] | None = None) -> pl.DataFrame:
    """Per-prompt counts over the run, or over the steps ``first…last`` (inclusive): ``prompt``, ``k``, ``n``.

    n counts usable rollouts and k the right ones; prompts with no usable rollout in the window are left out.
    The frame is what every sigmatool command reads with k and n columns.
    """
    lf = checked(log)
    if steps is not None:
        first, last = steps
        if first > last:
            raise UsageError(f"the step window {first}…{last} is empty: the first step is after the last")
        lf = lf.filter(pl.col("step").is_between(first, last))
    counts = (
        lf.filter(pl.col("usable").fill_null(False))
        .group_by("prompt")
        .agg(
            pl.col("right").sum().cast(pl.Int64).alias("k"),
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("right").null_count().alias("__ungraded"),
        )
        .sort("prompt")
        .collect()
    )
    ungraded = int(counts["__ungraded"].sum())
    if ungraded:
        raise DataError(f"training log: {ungraded} usable rollouts without a right/wrong grade")
    return counts.drop("__ungraded")

"""A trainer's dump files as one lazy frame of rollouts, and their k-of-n counts in one streaming pass."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import polars as pl

from sigmatool.errors import DataError, first_line
from sigmatool.options.inputs import LABELS
from sigmatool.trainers.dumps.files import DumpFile, check_trainer, refuse_pickle, step_of
from sigmatool.trainers.dumps.loggers import LOGGERS, rlprobe_selection
from sigmatool.trainers.dumps.readers import READERS, ROW, Options, Part, choose_trl_reward, parquet_schema
from sigmatool.trainers.dumps.rewards import REWARD, bad_reason, flags

COLUMNS = ("step", "group", "prompt", "reward", "right", "usable", "bad")
# The name a rollout log read with --rollouts (sigmatool.load.runs) goes by where a trainer's name would stand.
ROLLOUTS = "rollouts"
MAX_ROWS_NAMED = 5


@dataclass
class TrainerLog:
    """Rollouts read from a trainer's dump files.

    ``frame`` has one row per rollout: ``step`` (Int64, null if unknown), ``group`` (UInt64, one sampled
    group), ``prompt`` (UInt64 hash), ``reward`` (Float64, null if missing), ``right``, ``usable`` (reward
    present and gradeable) and ``bad`` (reward present but not gradeable), all Boolean; then where it was
    read: ``file`` (UInt32, its place in ``files``) and ``row`` (its row, or ROLL's item, from 1).
    """

    trainer: str
    frame: pl.LazyFrame
    files: list[DumpFile]
    notes: list[str] = field(default_factory=list)
    options: Options = field(default_factory=Options)
    rules: list[str] = field(default_factory=list)  # the notes on rewards and files, not on grouping
    # The message for rewards that cannot be graded, where the log says it its own way (a --rollouts log).
    bad_rows: Callable[[], str] | None = None
    # The group table of sigmatool.track.groups.group_table, when an engine has counted it (--engine).
    groups: pl.DataFrame | None = None
    # The rollouts per group the run sampled, when the log's metadata says it (rlprobe's manifest).
    per_group: int | None = None


def _as_file(trainer: str, item: DumpFile | str) -> DumpFile:
    return item if isinstance(item, DumpFile) else DumpFile(str(item), step_of(trainer, str(item)))


def read_part(trainer: str, file: DumpFile, index: int, options: Options) -> Part:
    """One file's rows with the canonical reward flags and the row number ``__row``."""
    refuse_pickle(file.path)
    part = {**READERS, **LOGGERS}[trainer](file, index, options)
    part.frame = part.frame.with_columns(flags(part.rule)).drop(REWARD)
    return part


def scan_trainer(
    trainer: str,
    files: Sequence[DumpFile | str],
    *,
    reward_col: str | None = None,
    threshold: float | None = None,
    columns: Options = Options(),
) -> TrainerLog:
    """Lazy rollouts of ``files`` as ``trainer`` wrote them; reads schemas only, never the data (rlprobe:
    its capture reasons, to refuse a selection by reward; a W&B table is read whole). ``columns``: a W&B
    table's prompt, group and step columns and the prompt masks."""
    check_trainer(trainer)
    dump_files = [_as_file(trainer, f) for f in files]
    if not dump_files:
        raise DataError(f"no {trainer} dump files to read")
    options = replace(columns, reward_col=reward_col, threshold=threshold)
    notes: list[str] = []
    if trainer == "trl" and reward_col is None:
        for file in dump_files:
            refuse_pickle(file.path)
        paths = [f.path for f in dump_files]
        options = replace(options, reward_col=choose_trl_reward(paths, [parquet_schema(p) for p in paths]))
    empty = [f for f in dump_files if _is_empty(f.path)]
    if empty:
        notes.append(f"{trainer}: skipped {len(empty)} empty file(s), e.g. {empty[0].path}")
        dump_files = [f for f in dump_files if f not in empty]
        if not dump_files:
            shown = ", ".join(f.path for f in empty[:3]) + (" and more" if len(empty) > 3 else "")
            raise DataError(
                f"every {trainer} dump file given is empty ({shown}): the run wrote no rollouts there yet"
            )
    if trainer == "rlprobe":
        rlprobe_selection(dump_files)
    parts = [read_part(trainer, file, i, options) for i, file in enumerate(dump_files)]
    rules = list(notes)
    for part in parts:
        for note in [part.rule.says, part.rows, *part.notes]:
            if note and note not in notes:
                notes.append(note)
        for rule in (part.rule.says, part.rows):
            if rule and rule not in rules:
                rules.append(rule)
    # Where each rollout was read (the file's place in ``files``, its row), so that messages name it.
    labels = LABELS.get(trainer, ())
    frames = [
        part.frame.select(
            *COLUMNS, pl.lit(i, dtype=pl.UInt32).alias("file"), pl.col(ROW).alias("row"), *labels
        )
        for i, part in enumerate(parts)
    ]
    try:
        frame = pl.concat(frames, how="vertical_relaxed") if len(frames) > 1 else frames[0]
        frame.collect_schema()
    except pl.exceptions.PolarsError as exc:
        raise DataError(f"the {trainer} files do not share one layout: {exc}") from exc
    per_group = next((part.per_group for part in parts if part.per_group), None)
    return TrainerLog(trainer, frame, dump_files, notes, options, rules, per_group=per_group)


def _is_empty(path: str) -> bool:
    """No rollouts: an empty file, or only white space (verl writes one newline for an empty batch)."""
    with open(path, "rb") as handle:
        head = handle.read(64)
    return len(head) < 64 and not head.strip()


def rollout_counts(log: TrainerLog, keys: Sequence[str] = ("step", "prompt")) -> pl.DataFrame:
    """Per key: ``k`` right and ``n`` usable rollouts (Int64), ``groups``, ``rows`` and ``missing`` rewards.

    One streaming pass; memory holds the distinct keys. A present reward that is not gradeable raises a
    DataError naming the file, field and first rows; missing rewards are counted and noted.
    """
    aggs = [
        pl.col("right").and_(pl.col("usable")).sum().cast(pl.Int64).alias("k"),
        pl.col("usable").sum().cast(pl.Int64).alias("n"),
        pl.col("group").n_unique().cast(pl.Int64).alias("groups"),
        pl.len().cast(pl.Int64).alias("rows"),
        (~pl.col("usable") & ~pl.col("bad")).sum().cast(pl.Int64).alias("missing"),
        pl.col("bad").sum().cast(pl.Int64).alias("__bad"),
    ]
    try:
        out = log.frame.group_by(list(keys)).agg(aggs).collect(engine="streaming")
    except pl.exceptions.PolarsError as exc:
        raise DataError(f"cannot read the {log.trainer} dump: {first_line(exc)}") from exc
    if int(out["__bad"].sum()):
        raise DataError(describe_bad_rows(log))
    missing = int(out["missing"].sum())
    if missing:
        log.notes.append(f"{log.trainer}: skipped {missing:,} rollout(s) with a missing reward")
    return out.drop("__bad").sort(list(keys), nulls_last=True)


def describe_bad_rows(log: TrainerLog) -> str:
    """Second pass, only on failure: the first file with a bad reward, its field and first rows."""
    if log.bad_rows is not None:
        return log.bad_rows()
    for index, file in enumerate(log.files):
        part = read_part(log.trainer, file, index, log.options)
        rows = part.frame.filter(pl.col("bad")).select(ROW).head(MAX_ROWS_NAMED).collect()
        if rows.height:
            listed = ", ".join(str(r) for r in rows[ROW].to_list())
            more = " and more" if rows.height == MAX_ROWS_NAMED else ""
            where = "item" if log.trainer == "roll" else "row"
            return (
                f"{file.path}: field {part.rule.field!r}: reward {bad_reason(part.rule)}, "
                f"at {where}{'s' if rows.height > 1 else ''} {listed}{more}"
            )
    return f"the {log.trainer} dump has rewards that cannot be made 0/1"

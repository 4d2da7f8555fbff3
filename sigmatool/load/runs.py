"""A run's rollouts for ``track``: a trainer's dumps (``--from``), or any rollout log with a step column
(``--rollouts --prompt-col P --reward-col R --step-col S``) read into the frame a trainer's reader gives."""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from sigmatool.errors import DataError, UsageError, first_line
from sigmatool.load.dataset import Dataset
from sigmatool.load.grouping import text_column, text_key_notes
from sigmatool.load.integrity import dump_integrity, rows_integrity
from sigmatool.load.logs import trainer_log
from sigmatool.load.names import BAD, RAW_ID, REWARD, RIGHT, USABLE
from sigmatool.load.read import histogram, load
from sigmatool.load.sources import Source, opened, source_schema
from sigmatool.options import InputOptions
from sigmatool.trainers.dumps import DumpFile, TrainerLog
from sigmatool.trainers.dumps.files import natural
from sigmatool.trainers.dumps.log import ROLLOUTS
from sigmatool.trainers.dumps.readers import Options


def run_log(options: InputOptions) -> TrainerLog:
    """The run's rollouts: :func:`rollout_log` for a ``--rollouts`` log, else the trainer's dumps; with the
    notes of the group checks (:mod:`sigmatool.load.integrity`), each group within its step."""
    if options.rollouts:
        return rollout_log(options)
    log = trainer_log(options)
    who = f"{log.trainer}: "
    log.notes += [n for n in dump_integrity(log, options).notes(who) if n not in log.notes]
    return log


def rollout_log(options: InputOptions) -> TrainerLog:
    """Any rollout log with a step column (``--rollouts --prompt-col P --reward-col R --step-col S``) as a
    run's rollouts, the frame a trainer's reader gives: ``step``, ``group`` (one per step and prompt),
    ``prompt``, ``reward``, ``right``, ``usable``, ``bad``, ``file``, ``row``. Reads schemas and the step
    column's distinct values when they are not whole numbers.

    The prompt key is keyed as ``--pass-rates`` and the trainer readers key theirs: text is hashed, whole
    numbers ≥ 0 are the key as written. A step column of whole numbers is the step; any other (a
    checkpoint's name, an eval run's date) is numbered 1, 2, … in its order, names compared with their
    numbers as numbers, and a note says which value is which step.
    """
    step_col = options.step_col or ""
    if options.table is None and (not options.paths or "-" in options.paths):
        raise UsageError(
            "a run followed step by step is read from files: give the log's files, not standard input"
        )
    read = replace(options, by=(step_col,), step_col=None)
    with opened(read) as (sources, notes):
        parts = [load(read, [source], notes if i == 0 else ()) for i, source in enumerate(sources)]
        raw, schema = _stacked(parts)
        if options.engine != "polars":
            # Inside the block: a --table's schema is a file that lives as long as it.
            return _counted_run(options, sources, parts, schema)
    step, said = _steps(raw, step_col, schema[step_col])
    prompt = _prompt_key(pl.col(RAW_ID), schema[RAW_ID])
    frame = raw.select(
        step.alias("step"),
        pl.struct(step.alias("s"), prompt.alias("p")).hash().alias("group"),
        prompt.alias("prompt"),
        pl.col(REWARD).cast(pl.Float64, strict=False).alias("reward"),
        pl.col(RIGHT).alias("right"),
        pl.col(USABLE).alias("usable"),
        pl.col(BAD).alias("bad"),
        "file",
        pl.col("row").cast(pl.UInt32),
    )
    keyed = ", ".join(repr(c) for c in options.prompt_key)
    grouping = f"{ROLLOUTS}: a group = one ({step_col!r}, {keyed}) pair"
    key = options.prompt_col or ""
    text = text_column(source_schema(sources[0])[0].names(), key, (step_col,))
    checked = rows_integrity(raw, (step_col,), options)
    # A text that is a rollout's own turn or conversation says nothing of the key: the group checks say why.
    if text is not None and not (checked.mixed or checked.per_rollout):
        said += text_key_notes([s.scan() for s in sources], key, text)
    said += checked.notes(shared=False)
    files = [DumpFile(s.label) for s in sources]
    log = TrainerLog(
        ROLLOUTS,
        frame,
        files,
        [*parts[0].notes, *said, grouping],
        Options(options.reward_col, options.threshold),
    )
    log.bad_rows = lambda: _bad_rows(read, parts)
    return log


def _stacked(parts: list[Dataset]) -> tuple[pl.LazyFrame, pl.Schema]:
    """The files' rollouts one after another, each row with its ``file`` and ``row``; and their schema."""
    frames = []
    for i, part in enumerate(parts):
        assert part.raw is not None
        frames.append(
            part.raw.with_row_index("row", offset=1).with_columns(pl.lit(i, dtype=pl.UInt32).alias("file"))
        )
    try:
        raw = pl.concat(frames, how="vertical_relaxed") if len(frames) > 1 else frames[0]
        return raw, raw.collect_schema()
    except pl.exceptions.PolarsError as exc:
        raise DataError(f"the rollout log's files do not share one layout: {first_line(exc)}") from exc


def _counted_run(
    options: InputOptions, sources: list[Source], parts: list[Dataset], schema: pl.Schema
) -> TrainerLog:
    """:func:`rollout_log` counted by ``--engine``: the group table from the engine's counts per step and
    prompt, keyed and numbered as polars keys and numbers the rows (the columns cast to the types polars
    reads, so that each key is the same)."""
    from sigmatool.load import engine

    step_col, key = options.step_col or "", options.prompt_col or ""
    counts = engine.prompt_counts(options, sources, schema[REWARD], step_col).with_columns(
        pl.col(step_col).cast(schema[step_col]), pl.col(key).cast(schema[RAW_ID])
    )
    step, said = _steps(counts.lazy(), step_col, schema[step_col])
    prompt = _prompt_key(pl.col(key), schema[RAW_ID])
    groups = counts.select(
        step.alias("step"),
        pl.struct(step.alias("s"), prompt.alias("p")).hash().alias("group"),
        prompt.alias("prompt"),
        pl.col("n").fill_null(0).cast(pl.Int64).alias("G"),
        pl.col("k").fill_null(0).cast(pl.Int64),
        pl.col("rejected_rewards").cast(pl.Int64).alias("bad"),
        pl.col("missing_rewards").cast(pl.Int64).alias("missing"),
    ).sort("step", "group", nulls_last=True)
    if groups.select(pl.any_horizontal(pl.col("step", "prompt").is_null()).any()).item():
        raise DataError("training log: some rollouts have a null step, group or prompt")
    grouping = f"{ROLLOUTS}: a group = one ({step_col!r}, {key!r}) pair"
    text = text_column(source_schema(sources[0])[0].names(), key, (step_col,))
    said += [] if text is None else engine.engine_key_notes(options, sources, key, text)
    log = TrainerLog(
        ROLLOUTS,
        pl.LazyFrame(),
        [DumpFile(s.label) for s in sources],
        [*parts[0].notes, *said, grouping],
        Options(options.reward_col, options.threshold),
        groups=groups,
    )
    message = engine.bad_rewards(options, sources, int(groups["bad"].sum()))
    log.bad_rows = lambda: message
    return log


def _prompt_key(key: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """A prompt key as the trainer readers and ``--pass-rates`` key theirs: whole numbers ≥ 0 as they are,
    anything else (text, lists of messages, negative numbers) hashed."""
    if dtype.is_integer():
        return pl.when(key >= 0).then(key.cast(pl.UInt64)).otherwise(key.hash())
    return key.hash()


def _steps(raw: pl.LazyFrame, column: str, dtype: pl.DataType) -> tuple[pl.Expr, list[str]]:
    """The step of each row: the column itself when it holds whole numbers, else each distinct value's place
    in order (1, 2, …), with a note that says which value is which step."""
    if dtype.is_integer():
        return pl.col(column).cast(pl.Int64), []
    values = raw.select(pl.col(column).unique()).collect()[column].drop_nulls()
    if dtype.is_float() and bool((values == values.round(0)).all()):
        return pl.col(column).cast(pl.Int64), []
    ordered = sorted(
        values.to_list(), key=(lambda v: natural(str(v))) if dtype == pl.String else (lambda v: v)
    )
    mapping = dict(zip(ordered, range(1, len(ordered) + 1), strict=True))
    shown = ", ".join(f"{s} = {v}" for v, s in list(mapping.items())[:4])
    more = f", …, {len(mapping)} = {ordered[-1]}" if len(mapping) > 4 else ""
    note = (
        f"{ROLLOUTS}: step column {column!r} is not whole numbers: its {len(mapping):,} values are numbered "
        f"in order ({shown}{more}"
        + ("; numbers inside names compared as numbers)" if dtype == pl.String else ")")
    )
    step = pl.col(column).replace_strict(mapping, default=None, return_dtype=pl.Int64)
    return step, [note]


def _bad_rows(read: InputOptions, parts: list[Dataset]) -> str:
    """The message for rewards that cannot be graded, as ``--rollouts`` gives it (file, column, rows)."""
    for part in parts:
        try:
            histogram(part)
        except DataError as exc:
            return str(exc)
    return f"column {read.reward_col!r}: rewards that cannot be made 0/1"

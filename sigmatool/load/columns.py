"""Which columns hold the values, and their projection to sigmatool's internal names.

A difficulty dataset gives each prompt a pass rate (``--col``, detected by name), k right of n samples
(``--k-col``/``--n-col``, or a rate with ``--samples N``), or a log of single graded answers
(``--rollouts``). Each source is scanned and its columns renamed to the internal names below; the values
themselves stay raw until :mod:`sigmatool.load.validate` checks them on their distinct values.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence

import polars as pl

from sigmatool.errors import DataError, UsageError
from sigmatool.load.names import (
    BAD,
    BAD_REWARDS,
    INTERNAL,
    NULL_REWARDS,
    RATE_NAMES,
    RATE_SUFFIXES,
    RAW_ID,
    RAW_K,
    RAW_N,
    RAW_P,
    RAW_W,
    REWARD,
    RIGHT,
    ROW,
    USABLE,
)
from sigmatool.load.sources import Source, csv_header, read_error, remote_schema
from sigmatool.load.value import ValueForm, column_dtype, column_expr, counted_columns
from sigmatool.options import InputOptions
from sigmatool.trainers.dumps.detect import dump_hint


def counts_columns(schema: pl.Schema, extra: Sequence[str] = ()) -> bool:
    """Whether the input holds counts in columns named ``k`` and ``n`` (as sigmatool's own exports write
    them, e.g. ``track --export-pass-rates``) and no pass-rate column by name."""
    names = list(schema.names())
    rates = [
        c
        for c in names
        if c.lower() in RATE_NAMES or any(c.lower().endswith(s) for s in RATE_SUFFIXES) or c in extra
    ]
    counts = all(c in names and schema[c].is_numeric() for c in ("k", "n"))
    return counts and not rates


def _grade_list(dtype: pl.DataType) -> bool:
    """A list (or array) of booleans or numbers: one grade per answer, readable with --col."""
    if not isinstance(dtype, pl.List | pl.Array):
        return False
    return bool(dtype.inner == pl.Boolean or dtype.inner.is_numeric())


# Column names of a rollout log: the prompt an answer belongs to, and the answer's reward.
PROMPT_KEYS = (
    "example_id", "prompt_id", "problem_id", "question_id", "task_id", "uid", "unique_id", "id", "idx",
    "prompt", "question", "problem",
)  # fmt: skip
REWARD_KEYS = ("reward", "rewards", "score", "correct", "is_correct", "passed", "success", "accuracy", "acc")
# Rows read to tell a rollout log (a repeated prompt key, 0/1 or ±1 rewards) from a table of pass rates.
PEEK_ROWS = 100_000


def rollout_route(
    source: Source, schema: pl.Schema, reward: str | None = None, key: str | None = None
) -> tuple[str, str] | None:
    """When ``source`` looks like a rollout log, one row per graded answer (a prompt key, ``key`` (the
    user's --id-col) or one found by name, that repeats in its first rows, and a reward, ``reward`` or one
    found by name, that is boolean, 0/1 or ±1 there): the options that read it so, and the key column.
    None otherwise."""
    names = {c.lower(): c for c in schema.names()}
    rewards = [reward] if reward else [names[r] for r in REWARD_KEYS if r in names]
    found = [names[k] for k in PROMPT_KEYS if k in names]
    given = [key] if key is not None and key in schema else []
    keys = [k for k in [*given, *found] if k not in rewards]
    if not rewards or not keys or rewards[0] not in schema:
        return None
    reward, key = rewards[0], keys[0]
    try:
        first = source.scan().select(key, reward).head(PEEK_ROWS).collect()
    except (pl.exceptions.PolarsError, OSError):
        return None
    values = first[reward].drop_nulls()
    if values.len() < 2 or first[key].n_unique() == first.height:
        return None
    signs = ""
    if values.dtype != pl.Boolean:
        if not values.dtype.is_numeric():
            return None
        distinct = set(values.unique().to_list())
        if not distinct <= {0, 1}:
            if not distinct <= {-1, 1}:
                return None
            signs = " --threshold 0"
    return f"--rollouts --prompt-col {key} --reward-col {reward}{signs}", key


def check_not_rollouts(source: Source, schema: pl.Schema, col: str, id_col: str | None = None) -> None:
    """A pass-rate column that holds one 0/1 reward per row of a repeated prompt key (the --id-col given,
    or one found by name) is a rollout log read as pass rates (every group would be silent): refused,
    naming the options that read it."""
    found = rollout_route(source, schema, col, id_col)
    if found is None:
        return
    route, key = found
    raise UsageError(
        f"{source.label}: column {col!r} holds one reward per row and {key!r} repeats: this is a rollout log "
        f"(one row per answer), not one pass rate per prompt; read it with {route}, or give --samples 1 to "
        "take each row as a prompt answered once"
    )


def pick_rate_column(
    schema: pl.Schema, label: str, extra: Sequence[str] = (), source: Source | None = None
) -> str:
    """The pass-rate column, by name (or one of ``extra``): exactly one candidate, else an error listing them
    (with ``source``, one that looks like a rollout log names the options that read it)."""
    names = list(schema.names())
    candidates = [
        c
        for c in names
        if c.lower() in RATE_NAMES or any(c.lower().endswith(s) for s in RATE_SUFFIXES) or c in extra
    ]
    if len(candidates) == 1:
        return candidates[0]
    numeric = [c for c, dtype in schema.items() if dtype.is_numeric()]
    listing = ", ".join(numeric) if numeric else "none"
    if not candidates:
        hint = dump_hint(names)
        if hint:
            raise DataError(f"{label}: no pass-rate column: {hint}")
        found = None if source is None else rollout_route(source, schema)
        if found is not None:
            raise DataError(
                f"{label}: no pass-rate column, and {found[1]!r} repeats beside a 0/1 reward: a rollout log "
                f"(one row per answer); read it with {found[0]}"
            )
        grades = [c for c, dtype in schema.items() if _grade_list(dtype)]
        lists = f"; lists of grades (k of n): {', '.join(grades)}" if grades else ""
        raise DataError(
            f"{label}: no pass-rate column found (looked for {', '.join(RATE_NAMES)} or a name ending in "
            f"solve_rate/pass_rate); pick one with --col, or give --k-col/--n-col. Numeric columns: {listing}"
            + lists
        )
    raise DataError(
        f"{label}: several pass-rate columns ({', '.join(candidates)}); pick one with --col (repeat --col "
        "to compare them). "
        f"Numeric columns: {listing}"
    )


def value_columns(opts: InputOptions) -> list[str]:
    """The user's columns that hold the values (not --by, id or weight)."""
    if opts.rollouts:
        return [opts.reward_col or ""]
    if opts.k_col:
        return [opts.k_col, opts.n_col or ""]
    return [opts.col or ""]


def needed_columns(opts: InputOptions) -> list[str]:
    cols: list[str] = list(opts.by)
    if opts.rollouts:
        cols.append(opts.prompt_col or "")
    cols += value_columns(opts)
    for extra in (opts.weight_col, opts.id_col):
        if extra:
            cols.append(extra)
    return list(dict.fromkeys(cols))


def source_schema(source: Source) -> tuple[pl.Schema, bool]:
    """The source's columns, and whether they could only be listed (JSON whose types polars cannot unify).

    In that case only the needed columns are read later, as text, so that an unused column mixing lists
    and numbers does no harm.
    """
    try:
        return (remote_schema(source) if source.remote else source.scan().collect_schema()), False
    except pl.exceptions.SchemaError as exc:
        if source.fmt not in ("json", "jsonl") or source.remote:
            # An object is not read twice (once for its keys) to work around a column polars cannot type.
            raise read_error(source, exc) from exc
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise read_error(source, exc) from exc
    return pl.Schema(dict.fromkeys(_json_keys(source.path), pl.String())), True


def _json_keys(path: str) -> list[str]:
    """Keys of the first objects of a JSON-lines file or JSON array, in order of appearance."""
    keys: dict[str, None] = {}
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read(1 << 20)
    stripped = text.lstrip()
    if stripped.startswith("["):
        with open(path, encoding="utf-8") as handle:
            objects = json.load(handle)[:1000]
    else:
        objects = []
        for line in stripped.splitlines()[:1000]:
            try:
                objects.append(json.loads(line))
            except json.JSONDecodeError:
                break
    for obj in objects:
        if isinstance(obj, dict):
            keys.update(dict.fromkeys(obj))
    return list(keys)


def _nested(opts: InputOptions, schema: pl.Schema) -> list[str]:
    """The value column when it is a dotted path into nested records rather than a column."""
    col = opts.col
    return [col] if col and col not in schema and "." in col and not opts.rollout_log else []


def did_you_mean(missing: Sequence[str], names: Sequence[str]) -> str:
    """`` (did you mean 'pass_rate'?)`` when a column's name is close to a missing one (difflib), else ''."""
    lowered = {n.lower(): n for n in names}
    close = []
    for name in missing:
        same = lowered.get(name.lower())
        close += [same] if same else difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    shown = ", ".join(repr(c) for c in dict.fromkeys(close))
    return f" (did you mean {shown}?)" if shown else ""


def check_columns(
    schema: pl.Schema, opts: InputOptions, label: str, form: ValueForm, header: list[str] | None = None
) -> list[str]:
    """Missing, duplicated and wrongly typed value columns are errors; returns notes for the rest.

    ``header`` is a CSV file's header as written: polars renames a repeated name, so repeats are found there.
    """
    needed = [c for c in needed_columns(opts) if c not in _nested(opts, schema)]
    names = header if header is not None else list(schema.names())
    missing = [c for c in needed if c not in schema]
    if missing:
        hint = dump_hint(list(schema.names()))
        raise DataError(
            f"{label}: missing column(s) {', '.join(repr(m) for m in missing)}{did_you_mean(missing, names)}; "
            f"the columns are: {', '.join(names)}" + (f"; {hint}" if hint else "")
        )
    doubled = sorted({n for n in names if names.count(n) > 1})
    used = [d for d in doubled if d in needed]
    if used:
        raise DataError(
            f"{label}: column name(s) {', '.join(repr(d) for d in used)} appear more than once in the "
            "header, so it is not clear which to use; rename the copies"
        )
    for name in value_columns(opts) if not (opts.rollouts or form.counted) else []:
        dtype = column_dtype(schema, name, label)
        if dtype == pl.String:
            continue
        if dtype == pl.Boolean:
            raise DataError(
                f"{label}: column {name!r} holds true/false values, not pass rates or counts; if each row "
                f"is one graded answer, read it as a rollout log: --rollouts --prompt-col ID --reward-col {name}"
            )
        if dtype.is_nested():
            raise DataError(
                f"{label}: column {name!r} holds lists or records ({dtype}), not numbers; "
                "give the column with the pass rate or the counts"
            )
    return [f"{label}: column {d!r} appears more than once in the header (not used)" for d in doubled]


def _scan(
    source: Source,
    schema: pl.Schema,
    listed_only: bool,
    needed: list[str],
    text_cols: Sequence[str],
    every: bool,
) -> pl.LazyFrame:
    """The source's scan: the needed columns as text when types could only be listed, ``text_cols`` as text.

    ``every``: all the source's columns are wanted (a JSON scan given a schema reads only the columns named).
    """
    if listed_only:
        return source.scan(dict.fromkeys(schema.names() if every else needed, pl.String()))
    if not text_cols:
        return source.scan()
    as_text: dict[str, pl.DataType] = dict.fromkeys(text_cols, pl.String())
    if source.fmt in ("json", "jsonl"):
        # A JSON scan given a schema reads only the columns it names: name every column that is used, as
        # read before, and the text columns as text (a CSV scan overrides the named types and reads all).
        kept = schema.names() if every else [c for c in needed if c in schema]
        return source.scan({**{c: schema[c] for c in kept}, **as_text})
    return source.scan(as_text)


def free_name(name: str, taken: Sequence[str]) -> str:
    """``name``, or ``name`` with more underscores in front, that is none of ``taken`` (a user's columns).

    >>> free_name("__row", ["__row", "___row"])
    '____row'
    """
    while name in taken:
        name = "_" + name
    return name


def _folder_columns(
    source: Source, needed: Sequence[str], schema: pl.Schema
) -> tuple[pl.Schema, list[pl.Expr]]:
    """Needed columns the file lacks but its folders name (``step=3/part-0.parquet``, as Spark and Hive
    write partitions): the schema with them, and each as the file's constant. A column the file has wins."""
    values = source.partitions
    columns = [
        pl.lit(values[c], pl.Int64 if isinstance(values[c], int) else None).alias(c)
        for c in needed
        if c not in schema and c in values
    ]
    if not columns:
        return schema, []
    return pl.Schema({**schema, **pl.select(columns).schema}), columns


def project(
    source: Source, opts: InputOptions, text_cols: Sequence[str], form: ValueForm, originals: bool = False
) -> tuple[pl.LazyFrame, list[str]]:
    """Scan one source, check its columns and rename them to the internal names; returns notes too.

    ``originals``: keep every column of the source as it is, with the internal columns after them.
    """
    schema, listed_only = source_schema(source)
    schema, folders = _folder_columns(source, needed_columns(opts), schema)
    needed = [c for c in needed_columns(opts) if c not in _nested(opts, schema)]
    if (
        source.fmt in ("json", "jsonl")
        and not form.counted
        and any(schema[c].is_nested() for c in value_columns(opts) if c in schema)
    ):
        # A JSON value column holding lists or records somewhere: read it as text, so the rows are named.
        schema, listed_only = pl.Schema({**schema, **dict.fromkeys(needed, pl.String())}), True
    notes = check_columns(schema, opts, source.label, form, csv_header(source))
    if originals:
        clash = [c for c in schema.names() if c in INTERNAL]
        if clash:
            raise DataError(
                f"{source.label}: column name(s) {', '.join(map(repr, clash))} are reserved; rename them"
            )
    lf = _scan(source, schema, listed_only, needed, text_cols, originals).with_columns(folders)
    # The row number goes under a name no column of the user's has; the user's columns are read by their
    # own names and renamed in one select, so a column called like an internal one (__row, __id) is just
    # a column.
    index = free_name(ROW, schema.names())
    lf = lf.with_row_index(index, offset=1)
    exprs: list[pl.Expr] = [] if originals else [pl.col(b) for b in opts.by]
    exprs.append(pl.col(index).alias(ROW))
    if opts.rollouts:
        exprs += [pl.col(opts.prompt_col or "").alias(RAW_ID), pl.col(opts.reward_col or "").alias(REWARD)]
    else:
        exprs.append(pl.col(opts.id_col).alias(RAW_ID) if opts.id_col else pl.col(index).alias(RAW_ID))
        if opts.k_col:
            exprs += [pl.col(opts.k_col).alias(RAW_K), pl.col(opts.n_col or "").alias(RAW_N)]
        elif form.counted:
            exprs += counted_columns(form, opts, schema, source.label)
        else:
            exprs.append(column_expr(schema, opts.col or "", source.label).alias(RAW_P))
        exprs.append(pl.col(opts.weight_col).alias(RAW_W) if opts.weight_col else pl.lit(1.0).alias(RAW_W))
    out = lf.select(pl.all().exclude(index), *exprs) if originals else lf.select(exprs)
    # An empty or blank text cell in a value column is a missing value, as an empty CSV field is.
    blank = [c for c, dtype in out.collect_schema().items() if c in INTERNAL and dtype == pl.String]
    return out.with_columns(
        pl.when(pl.col(c).str.strip_chars() != "").then(pl.col(c)).alias(c) for c in blank
    ), notes


# --------------------------------------------------------------------------------------------- values


def numeric(col: str) -> pl.Expr:
    """A raw column as Float64: text that is not a number becomes null (and is caught as invalid)."""
    return pl.col(col).cast(pl.Float64, strict=False)


def rate_expr(opts: InputOptions, dtype: pl.DataType | None) -> pl.Expr:
    """The raw pass rate as a Float64 number (a percentage divided by 100 with ``--percent``)."""
    if not opts.percent:
        return numeric(RAW_P)
    if dtype is not None and dtype.is_numeric():
        return numeric(RAW_P) / 100.0
    text = pl.col(RAW_P).cast(pl.String).str.strip_chars().str.strip_suffix("%")
    return text.cast(pl.Float64, strict=False) / 100.0


def shown_rate(opts: InputOptions, dtype: pl.DataType | None) -> pl.Expr:
    """The pass rate as the input wrote it: a float column keeps its own dtype (0.7 in float32 prints 0.7)."""
    if not opts.percent and dtype is not None and dtype.is_float():
        return pl.col(RAW_P)
    return rate_expr(opts, dtype)


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

"""Scanning: one source read lazily and projected to the raw internal columns.

The scan step of the walk (the face of :mod:`sigmatool.load` lists the steps). Each source's columns are
checked (:func:`sigmatool.load.schema.check_columns`), scanned (with Hive ``name=value`` folders as columns,
and columns read as text where their types could only be listed or turned out to hold text), numbered, and
renamed in one select to the internal names of :mod:`sigmatool.load.names`; a pass-rate column in a counted
form becomes raw ``k``, ``n`` and the ``problem`` of each row. The values themselves stay raw until the
values step (:mod:`sigmatool.load.dataset`, :mod:`sigmatool.load.validate`) reads them.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from sigmatool.errors import DataError
from sigmatool.load.forms import count_form, fraction_form, list_form
from sigmatool.load.grouping import text_column
from sigmatool.load.names import (
    GROUP,
    INTERNAL,
    PROBLEM,
    RAW_ID,
    RAW_K,
    RAW_N,
    RAW_P,
    RAW_W,
    REWARD,
    ROLLOUT,
    ROW,
    TEXT,
    UNGRADED,
)
from sigmatool.load.schema import (
    Schema,
    ValueForm,
    check_columns,
    column_expr,
    needed_columns,
    nested_path,
    value_columns,
)
from sigmatool.load.sources import Source, csv_header, source_schema
from sigmatool.options import InputOptions


def counted_columns(vf: ValueForm, opts: InputOptions, schema: Schema, label: str) -> list[pl.Expr]:
    """Raw ``k``, ``n``, the row's problem and its ungraded list elements, for a counted form."""
    value = column_expr(schema, opts.col or "", label)
    if vf.form == "fraction":
        parsed = fraction_form(value)
    elif vf.form == "list":
        parsed = list_form(value)
    else:
        if opts.nan_missing:
            value = pl.when(value.cast(pl.Float64, strict=False).is_nan()).then(None).otherwise(value)
        parsed = count_form(
            value, samples=vf.samples or 1, counts="wrong" if vf.counts == "wrong" else "right"
        )
    return [
        parsed.k.alias(RAW_K),
        parsed.n.alias(RAW_N),
        parsed.problem.alias(PROBLEM),
        parsed.nulls_skipped.alias(UNGRADED),
    ]


MASKED = "…"


def masked(text: pl.Expr, masks: Sequence[str]) -> pl.Expr:
    """A prompt text with each ``--prompt-mask`` pattern cut (replaced by one mark, so that texts that
    differ only there read alike)."""
    for mask in masks:
        text = text.str.replace_all(mask, MASKED)
    return text


def log_keys(opts: InputOptions, schema: pl.Schema) -> list[pl.Expr]:
    """A rollout log's prompt key ``RAW_ID`` (its ``--prompt-col``, or several as one key; text with the
    ``--prompt-mask`` patterns cut), and what the group checks read: the prompt ``TEXT`` (a prompt-text
    column beside the key, else the key's first text column, masked as the key is; none when the key is one
    text column, its own text), the sampled ``GROUP`` (``--group-col``)
    and the ``ROLLOUT`` each row belongs to (``--rollout-col``)."""
    cols = opts.prompt_key

    def part(col: str) -> pl.Expr:
        return masked(pl.col(col), opts.prompt_masks) if schema.get(col) == pl.String else pl.col(col)

    key = (
        part(cols[0])
        if len(cols) == 1
        else pl.struct([part(c).alias(f"k{i}") for i, c in enumerate(cols)]).hash()
    )
    texts = [c for c in cols if schema.get(c) == pl.String]
    beside = text_column(schema.names(), cols[-1], opts.by)
    text = beside if beside is not None and schema.get(beside) == pl.String else texts[0] if texts else None
    exprs = [key.alias(RAW_ID)]
    if text is not None and cols != (text,):  # a key that is the text itself is its own TEXT
        exprs.append(masked(pl.col(text), opts.prompt_masks).alias(TEXT))
    if opts.group_col:
        exprs.append(pl.col(opts.group_col).alias(GROUP))
    if opts.rollout_col:
        exprs.append(pl.col(opts.rollout_col).alias(ROLLOUT))
    return exprs


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
    needed = [c for c in needed_columns(opts) if c not in nested_path(opts, schema)]
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
        exprs += [*log_keys(opts, lf.collect_schema()), pl.col(opts.reward_col or "").alias(REWARD)]
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

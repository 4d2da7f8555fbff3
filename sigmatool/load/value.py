"""The pass-rate column in the forms public datasets use, and where it sits in nested records.

A pass-rate column (``--col``, or detected by name) holds a plain rate, read by the rate path of
:mod:`sigmatool.load.columns`, or one of the counted forms of :mod:`sigmatool.load.forms`: ``"k/n"`` text
(Polaris ``difficulty``), a list of grades (OpenR1-Math ``correctness_math_verify``), or a whole number of
right or wrong answers out of ``--samples N`` (Skywork-OR1 ``extra_info.model_difficulty.<model>``, a path
into nested records). A counted form becomes raw ``k``, ``n`` and a ``problem`` naming what is wrong with a
row. docs/datasets.md lists the datasets and the sources of each fact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from sigmatool.errors import DataError, UsageError
from sigmatool.load.forms import (
    FRACTION_PATTERN,
    KNOWN_COLUMNS,
    PROBLEMS,
    count_form,
    fraction_form,
    leaf_paths,
    list_form,
    resolve_leaf,
)
from sigmatool.load.names import PROBLEM, RAW_K, RAW_N, UNGRADED
from sigmatool.load.sources import Source, read_error
from sigmatool.options import InputOptions

COUNTED = ("fraction", "list", "count")
SAMPLE_ROWS = 1000
Schema = Mapping[str, pl.DataType]


@dataclass(frozen=True)
class ValueForm:
    """The form of the pass-rate column: rate, fraction, list or count (with its n and direction)."""

    form: str = "rate"
    samples: int | None = None
    counts: str = "right"
    notes: tuple[str, ...] = ()

    @property
    def counted(self) -> bool:
        return self.form in COUNTED


def column_expr(schema: Schema, path: str, label: str) -> pl.Expr:
    """A top-level column, else a dotted path into nested records (names may contain dots themselves)."""
    if path in schema or "." not in path:
        return pl.col(path)
    return resolve_leaf(schema, path, label).expr


def column_dtype(schema: Schema, path: str, label: str) -> pl.DataType:
    if path in schema:
        return schema[path]
    return resolve_leaf(schema, path, label).dtype


def _is_list(dtype: pl.DataType) -> bool:
    return isinstance(dtype, (pl.List, pl.Array))


def _form_of(dtype: pl.DataType) -> str:
    """A nested dtype in words: ``lists of lists of numbers``, ``lists of records``, ``lists of text``."""
    if _is_list(dtype):
        return "lists of " + _form_of(dtype.inner)  # type: ignore[attr-defined]
    if isinstance(dtype, pl.Struct):
        return "records"
    if dtype.is_numeric():
        return "numbers"
    return "text" if dtype == pl.String else str(dtype)


def _fractional(source: Source, expr: pl.Expr) -> bool:
    """Whether the first values of a text column look like "k/n"."""
    try:
        sample = source.scan().select(expr).head(SAMPLE_ROWS).collect().to_series()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise read_error(source, exc) from exc
    return bool(sample.cast(pl.String).str.contains(FRACTION_PATTERN).any())


def detected_extras(source: Source, schema: Schema) -> list[str]:
    """Columns of known datasets picked by name when their values have the form: OpenR1-Math's list of
    grades, Polaris's "k/n" ``difficulty`` (a difficulty of another kind, e.g. a level, is left alone)."""
    extra = []
    shape = source.shape()
    if shape is not None and shape.value is not None:
        extra.append(shape.value)  # the values of a JSON object of ids (load.objects)
    if _is_list(schema.get("correctness_math_verify", pl.Null())):
        extra.append("correctness_math_verify")
    if schema.get("difficulty") == pl.String and _fractional(source, pl.col("difficulty")):
        extra.append("difficulty")
    return extra


def _count_form(opts: InputOptions, path: str) -> ValueForm:
    known = KNOWN_COLUMNS.get(path)
    samples = opts.samples or (known.samples if known else None)
    if samples is None:
        raise UsageError(
            f"--counts: column {path!r} counts answers out of how many? give --samples N (e.g. --samples 16)"
        )
    direction = opts.counts or (known.counts if known else "right")
    notes = [f"reading {path!r} as a count of {direction} answers out of {samples}"]
    if opts.counts is None and known is not None:
        notes = [f"{path!r} ({known.dataset}): {known.note}"]
    return ValueForm("count", samples, direction, tuple(notes))


def value_form(opts: InputOptions, source: Source, schema: Schema) -> ValueForm:
    """The form of ``opts.col`` in this source, from its dtype and, for text, its first values."""
    path = opts.col or ""
    if path not in schema and "." not in path:
        return ValueForm()  # a missing column is named with the others (columns.check_columns)
    dtype = column_dtype(schema, path, source.label)
    known = KNOWN_COLUMNS.get(path)
    if _is_list(dtype):
        inner = dtype.inner  # type: ignore[attr-defined]
        if not (inner == pl.Boolean or inner.is_numeric() or inner == pl.Null):
            raise DataError(
                f"{source.label}: column {path!r} holds {_form_of(dtype)}, not pass rates or a list of grades "
                "(true/false or 0/1) per prompt"
            )
        if opts.samples is not None or opts.counts is not None:
            raise UsageError(
                f"{path!r} holds lists of grades, which carry their own n: drop --samples/--counts"
            )
        return ValueForm("list")
    if opts.counts is not None or (known is not None and known.samples and dtype.is_integer()):
        if not (dtype.is_numeric() or dtype == pl.String):
            raise UsageError(f"--counts: column {path!r} holds {dtype}, not whole numbers")
        return _count_form(opts, path)
    if (
        dtype == pl.String
        and not opts.percent
        and _fractional(source, column_expr(schema, path, source.label))
    ):
        if opts.samples is not None:
            raise UsageError(f"{path!r} holds 'k/n' text, which carries its own n: drop --samples")
        return ValueForm("fraction")
    if isinstance(dtype, pl.Struct) and source.fmt not in ("json", "jsonl"):
        # JSON types come from the values: records there may be stray values, which are named by row.
        choices = ", ".join(leaf_paths(dtype, path)[:12])
        raise DataError(f"{source.label}: {path!r} holds records; give the path of one field: {choices}")
    return ValueForm("rate")


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


def counted_problems(col: str) -> list[tuple[str, pl.Expr]]:
    """Each kind of bad value of a counted form, true on a bad row and on a bad distinct value alike."""
    return [(f"column {col!r}: {problem}", pl.col(PROBLEM) == problem) for problem in PROBLEMS]

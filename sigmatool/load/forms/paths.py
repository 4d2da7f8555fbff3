"""Dotted paths into nested struct columns, and detection of a column's form from its dtype and values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import polars as pl

from sigmatool.errors import DataError, UsageError
from sigmatool.load.forms.values import FRACTION_PATTERN, Form

# ------------------------------------------------------------------------------------------ nested paths


@dataclass(frozen=True)
class Leaf:
    """A column or struct field found from a dotted path: the expression, its dtype and the names walked."""

    path: str
    names: tuple[str, ...]
    dtype: pl.DataType

    @property
    def expr(self) -> pl.Expr:
        """``pl.col(first).struct.field(second)…``, named after the path."""
        expr = pl.col(self.names[0])
        for name in self.names[1:]:
            expr = expr.struct.field(name)
        return expr.alias(self.path)


@dataclass
class _Stop:
    """The deepest level a failed resolution reached, for the error message."""

    depth: int = -1
    trail: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    not_struct: pl.DataType | None = None


def _fields_of(dtype: pl.DataType) -> dict[str, pl.DataType] | None:
    if isinstance(dtype, pl.Struct):
        return {field.name: cast(pl.DataType, field.dtype) for field in dtype.fields}
    return None


def _walk(
    fields: Mapping[str, pl.DataType], rest: str, trail: tuple[str, ...], stop: _Stop
) -> tuple[tuple[str, ...], pl.DataType] | None:
    """Names that spell ``rest`` from this level down, longest matching name first (with backtracking)."""
    matches = sorted((f for f in fields if rest == f or rest.startswith(f + ".")), key=len, reverse=True)
    for name in matches:
        here = (*trail, name)
        if rest == name:
            return here, fields[name]
        inner = _fields_of(fields[name])
        if inner is None:
            if len(here) > stop.depth:
                stop.depth, stop.trail, stop.fields, stop.not_struct = len(here), here, (), fields[name]
            continue
        found = _walk(inner, rest[len(name) + 1 :], here, stop)
        if found is not None:
            return found
    if not matches and len(trail) > stop.depth:
        stop.depth, stop.trail, stop.fields, stop.not_struct = len(trail), trail, tuple(fields), None
    return None


def resolve_leaf(schema: Mapping[str, pl.DataType], path: str, label: str = "input") -> Leaf:
    """Find ``path`` (column names and struct fields joined by dots) in ``schema``.

    Names may themselves contain dots (``qwen2.5_7b_pass_rate``): at each level the longest name that
    matches the start of the rest of the path is tried first, then shorter ones. A path that does not
    resolve raises DataError listing the fields available where it stopped.
    """
    if not path:
        raise UsageError("the column path is empty")
    stop = _Stop()
    found = _walk(schema, path, (), stop)
    if found is not None:
        names, dtype = found
        return Leaf(path=path, names=names, dtype=dtype)
    where = ".".join(stop.trail)
    if stop.not_struct is not None:
        raise DataError(
            f"{label}: {where!r} is {stop.not_struct}, not a struct, so {path!r} cannot be read inside it"
        )
    level = f"inside {where!r}" if where else "at the top level"
    listing = ", ".join(stop.fields) if stop.fields else "none"
    raise DataError(f"{label}: no column or field {path!r}; the fields {level} are: {listing}")


def resolve_path(schema: Mapping[str, pl.DataType], path: str) -> pl.Expr:
    """The expression that reads ``path`` (see :func:`resolve_leaf`), named after the path.

    >>> schema = pl.Schema({"extra_info": pl.Struct({"model_difficulty": pl.Struct({"Qwen-7B": pl.Int64})})})
    >>> resolve_path(schema, "extra_info.model_difficulty.Qwen-7B").meta.output_name()
    'extra_info.model_difficulty.Qwen-7B'
    """
    return resolve_leaf(schema, path).expr


def leaf_paths(dtype: pl.DataType, prefix: str) -> list[str]:
    """Dotted paths of the non-struct fields under a struct (the choices to offer for a struct column)."""
    fields = _fields_of(dtype)
    if fields is None:
        return [prefix]
    return [path for name, inner in fields.items() for path in leaf_paths(inner, f"{prefix}.{name}")]


# ------------------------------------------------------------------------------------------ detection


def _is_list(dtype: pl.DataType) -> bool:
    return isinstance(dtype, pl.List | pl.Array)


def detect_form(
    dtype: pl.DataType, sample: pl.Series | None = None, path: str = "column", label: str = "input"
) -> Form:
    """The form of a column from its dtype, and for text from a sample of its values.

    Float → ``rate``; integer → ``count``; list or array of booleans or numbers → ``list``; text →
    ``fraction`` if any sampled value looks like ``k/n``, else ``rate`` (numbers stored as text; values that
    are not numbers then show up as bad rows). A struct, or any other dtype, raises DataError.
    """
    where = f"{label}: {path!r}"
    if dtype == pl.Boolean:
        raise DataError(f"{where} holds one boolean per row: that is one graded answer, not a pass rate")
    if dtype == pl.Null:
        raise DataError(f"{where} holds only nulls: nothing was measured")
    if dtype.is_float():
        return "rate"
    if dtype.is_integer():
        return "count"
    if _is_list(dtype):
        inner = dtype.inner  # type: ignore[attr-defined]
        if inner == pl.Boolean or inner.is_numeric() or inner == pl.Null:
            return "list"
        raise DataError(f"{where} is a list of {inner}, not a list of grades (booleans or 0/1)")
    if dtype == pl.String:
        if sample is not None and sample.cast(pl.String).str.contains(FRACTION_PATTERN).any():
            return "fraction"
        return "rate"
    if _fields_of(dtype) is not None:
        choices = ", ".join(leaf_paths(dtype, path)[:12])
        raise DataError(f"{where} is a struct; give the path of one of its fields: {choices}")
    raise DataError(f"{where} is {dtype}, which holds no pass rate")

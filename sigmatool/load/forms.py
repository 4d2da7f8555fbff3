"""Difficulty columns in the shapes public RL datasets use, as polars expressions.

A column holds one of four forms (docs/datasets.md lists which public dataset uses which):

- ``rate``: a pass rate in [0, 1] (Big-Math ``llama8b_solve_rate``, Guru ``qwen2.5_7b_pass_rate``);
- ``fraction``: text ``"k/n"`` (Polaris ``difficulty``);
- ``list``: one grade per answer, booleans or 0/1 (OpenR1-Math ``correctness_math_verify``);
- ``count``: a whole number of right, or of wrong, answers out of a known n (Skywork-OR1 ``model_difficulty``).

A column may sit inside nested structs: :func:`resolve_path` finds it from a dotted path whose names may
themselves contain dots. :func:`column_spec` resolves and detects a column; its ``parse`` gives the canonical
``k``, ``n``, ``p`` expressions with ``missing`` and ``problem`` flags. This module imports only polars and
``sigmatool.errors``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

import polars as pl

from sigmatool.errors import DataError, UsageError

__all__ = [
    "COUNTS",
    "FORMS",
    "KNOWN_COLUMNS",
    "LIST_NULLS",
    "NAN_POLICIES",
    "ColumnSpec",
    "Counts",
    "Form",
    "KnownColumn",
    "Leaf",
    "ListNulls",
    "NanPolicy",
    "Parsed",
    "bad_row_notes",
    "column_spec",
    "count_form",
    "counts_direction",
    "detect_form",
    "fraction_form",
    "leaf_paths",
    "list_form",
    "nan_policy",
    "rate_form",
    "resolve_leaf",
    "resolve_path",
]


# --------------------------------------------------------------------------------------------- values
# The four forms of a difficulty column as polars expressions: rate, "k/n" text, a list of grades, a count.
# Each builder returns a Parsed whose ``problem`` names the first thing wrong with a row (null when the row
# is fine) so that bad rows can be named by number; ``missing`` marks rows where nothing was measured.

Form = Literal["rate", "fraction", "list", "count"]
NanPolicy = Literal["error", "skip"]
ListNulls = Literal["skip", "invalid"]
Counts = Literal["right", "wrong"]
FORMS: tuple[str, ...] = ("rate", "fraction", "list", "count")
NAN_POLICIES: tuple[str, ...] = ("error", "skip")
LIST_NULLS: tuple[str, ...] = ("skip", "invalid")
COUNTS: tuple[str, ...] = ("right", "wrong")

FRACTION_PATTERN = r"^\s*(\d+)\s*/\s*(\d+)\s*$"
# A rate times n counts as whole within this distance of an integer (rates are often stored rounded).
INTEGER_TOLERANCE = 1e-6
MAX_ROWS_NAMED = 5

# Problem classes, in the order a row is checked; a row reports the first that applies.
NOT_A_NUMBER = "not a number"
NAN_RATE = "NaN is not a pass rate (--nan-missing reads NaN as not measured)"
RATE_RANGE = "pass rate outside [0, 1]"
RATE_NOT_WHOLE = "rate × n is not a whole number"
NOT_FRACTION = "not of the form k/n"
K_ABOVE_N = "k is larger than n"
N_ZERO = "n must be at least 1"
LIST_VALUE = "list holds a value other than true/false or 0/1"
LIST_NULL = "list holds ungraded (null) answers"
LIST_EMPTY = "list has no graded answers"
COUNT_NOT_WHOLE = "count is not a whole number"
COUNT_RANGE = "count outside [0, n]"
PROBLEMS: tuple[str, ...] = (
    NOT_A_NUMBER,
    NAN_RATE,
    RATE_RANGE,
    RATE_NOT_WHOLE,
    NOT_FRACTION,
    K_ABOVE_N,
    N_ZERO,
    LIST_VALUE,
    LIST_NULL,
    LIST_EMPTY,
    COUNT_NOT_WHOLE,
    COUNT_RANGE,
)


@dataclass(frozen=True)
class Parsed:
    """Canonical expressions for one difficulty column.

    ``k``/``n`` are null where the value is missing or bad (and for rates without a known n); ``p`` is
    Float64; ``missing`` is a Boolean that is true where nothing was measured; ``problem`` is a String, null
    where the value is usable. ``nulls_skipped`` counts ungraded list elements that were left out (0 for
    other forms).
    """

    k: pl.Expr
    n: pl.Expr
    p: pl.Expr
    missing: pl.Expr
    problem: pl.Expr
    nulls_skipped: pl.Expr

    @property
    def valid(self) -> pl.Expr:
        """True where the row takes part: something was measured and nothing is wrong with it."""
        return ~self.missing & self.problem.is_null()

    @property
    def bad(self) -> pl.Expr:
        """True where a present value is unusable (the loader names these rows)."""
        return ~self.missing & self.problem.is_not_null()


def _first_problem(checks: list[tuple[str, pl.Expr]]) -> pl.Expr:
    """A String expression naming the first check that is true, null when none is."""
    expr: pl.Expr = pl.lit(None, dtype=pl.String)
    for message, condition in reversed(checks):
        expr = pl.when(condition.fill_null(False)).then(pl.lit(message)).otherwise(expr)
    return expr


def _parsed(
    k: pl.Expr, n: pl.Expr, p: pl.Expr, missing: pl.Expr, checks: list[tuple[str, pl.Expr]]
) -> Parsed:
    problem = pl.when(missing).then(pl.lit(None, dtype=pl.String)).otherwise(_first_problem(checks))
    ok = ~missing & problem.is_null()
    return Parsed(
        k=pl.when(ok).then(k).otherwise(None).cast(pl.Int64).alias("k"),
        n=pl.when(ok).then(n).otherwise(None).cast(pl.Int64).alias("n"),
        p=pl.when(ok).then(p).otherwise(None).cast(pl.Float64).alias("p"),
        missing=missing.alias("missing"),
        problem=problem.alias("problem"),
        nulls_skipped=pl.lit(0, dtype=pl.Int64).alias("nulls_skipped"),
    )


# ------------------------------------------------------------------------------------------ options


def nan_policy(value: str) -> NanPolicy:
    """Check the NaN option: ``error`` (the default: NaN is a bad value) or ``skip`` (NaN means not measured)."""
    if value == "error":
        return "error"
    if value == "skip":
        return "skip"
    raise UsageError(f"NaN handling must be one of {', '.join(NAN_POLICIES)}, not {value!r}")


def counts_direction(value: str) -> Counts:
    """Check what a count column counts: ``right`` or ``wrong`` answers."""
    if value == "right":
        return "right"
    if value == "wrong":
        return "wrong"
    raise UsageError(f"a count column counts one of {', '.join(COUNTS)} answers, not {value!r}")


def check_samples(samples: int | None, form: str) -> int | None:
    if samples is not None and samples < 1:
        raise UsageError(f"the number of samples behind a {form} column must be at least 1, not {samples}")
    return samples


# ------------------------------------------------------------------------------------------ the forms


def rate_form(value: pl.Expr, *, nan: NanPolicy = "error", samples: int | None = None) -> Parsed:
    """A pass rate in [0, 1]; numbers stored as text are parsed. With ``samples`` = n, k = rate × n.

    ``nan="skip"`` makes NaN mean "not measured" (missing: skipped and counted); by default NaN is a bad
    value. Null is always missing.
    """
    n_samples = check_samples(samples, "rate")
    rate = value.cast(pl.Float64, strict=False)
    missing = value.is_null() | (rate.is_nan().fill_null(False) if nan == "skip" else pl.lit(False))
    checks = [
        (NOT_A_NUMBER, rate.is_null()),
        (NAN_RATE, rate.is_nan()),
        (RATE_RANGE, (rate < 0) | (rate > 1)),
    ]
    if n_samples is None:
        k = pl.lit(None, dtype=pl.Int64)
        n = pl.lit(None, dtype=pl.Int64)
    else:
        scaled = rate * n_samples
        checks.append((RATE_NOT_WHOLE, (scaled - scaled.round(0)).abs() > INTEGER_TOLERANCE))
        k = scaled.round(0)
        n = pl.lit(n_samples, dtype=pl.Int64)
    return _parsed(k, n, rate, missing, checks)


def fraction_form(value: pl.Expr) -> Parsed:
    """Text ``"k/n"`` (spaces allowed around the numbers and the slash) into k, n and p = k / n.

    Malformed text (including negative or non-integer numbers and numbers beyond Int64), k > n and n = 0
    are bad values; null is missing.

    >>> parsed = fraction_form(pl.col("difficulty"))
    >>> pl.DataFrame({"difficulty": ["3/8", "9/8"]}).select(parsed.k, parsed.problem).rows()
    [(3, None), (None, 'k is larger than n')]
    """
    text = value.cast(pl.String)
    groups = text.str.extract_groups(FRACTION_PATTERN)
    k = groups.struct.field("1").cast(pl.Int64, strict=False)
    n = groups.struct.field("2").cast(pl.Int64, strict=False)
    checks = [
        (NOT_FRACTION, k.is_null() | n.is_null()),
        (N_ZERO, n == 0),
        (K_ABOVE_N, k > n),
    ]
    return _parsed(k, n, k / n, value.is_null(), checks)


def list_form(value: pl.Expr, *, nulls: ListNulls = "skip") -> Parsed:
    """One grade per answer (booleans, or numbers 0/1): k = number right, n = number graded.

    A null list is missing. Null elements are ungraded answers: by default (``nulls="skip"``) they are
    left out of both k and n and counted in ``nulls_skipped``; with ``nulls="invalid"`` a list holding
    one is a bad value. A list with no graded answer (``[]``, or only nulls when skipping) is a bad value,
    as is any element other than true/false/0/1.
    """
    grades = value.list.eval(pl.element().cast(pl.Float64, strict=False))
    k = grades.list.eval((pl.element() == 1).fill_null(False)).list.sum()
    graded = grades.list.eval(pl.element().is_not_null()).list.sum()
    null_count = grades.list.eval(pl.element().is_null()).list.sum()
    other = grades.list.eval(((pl.element() != 0) & (pl.element() != 1)).fill_null(False)).list.any()
    checks = [(LIST_VALUE, other)]
    if nulls == "invalid":
        checks.append((LIST_NULL, null_count > 0))
        checks.append((LIST_EMPTY, value.list.len() == 0))
    else:
        checks.append((LIST_EMPTY, graded == 0))
    parsed = _parsed(k, graded, k / graded, value.is_null(), checks)
    skipped = pl.when(parsed.valid).then(null_count).otherwise(0).cast(pl.Int64)
    return Parsed(
        parsed.k, parsed.n, parsed.p, parsed.missing, parsed.problem, skipped.alias("nulls_skipped")
    )


def count_form(value: pl.Expr, *, samples: int, counts: Counts = "right") -> Parsed:
    """A whole number of right (``counts="right"``) or wrong (``"wrong"``) answers out of ``samples``.

    k = value, or samples − value for a count of wrong answers. Non-whole numbers and values outside
    [0, samples] are bad; null is missing.
    """
    n_samples = check_samples(samples, "count")
    assert n_samples is not None
    number = value.cast(pl.Float64, strict=False)
    checks = [
        (NOT_A_NUMBER, number.is_null()),
        (COUNT_NOT_WHOLE, number.is_nan() | ((number - number.round(0)).abs() > INTEGER_TOLERANCE)),
        (COUNT_RANGE, (number < 0) | (number > n_samples)),
    ]
    tally = number.round(0)
    k = tally if counts == "right" else n_samples - tally
    n = pl.lit(n_samples, dtype=pl.Int64)
    return _parsed(k, n, k / n_samples, value.is_null(), checks)


# --------------------------------------------------------------------------------------------- paths
# Dotted paths into nested struct columns, and detection of a column's form from its dtype and values.

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
    rest = path[len(where) + 1 :] if where else path
    close = difflib.get_close_matches(rest, stop.fields, n=1) or difflib.get_close_matches(
        rest.split(".")[0], stop.fields, n=1
    )
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    raise DataError(f"{label}: no column or field {path!r}{guess}; the fields {level} are: {listing}")


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


# --------------------------------------------------------------------------------------------- columns
# One difficulty column of a known or detected form, the datasets whose n or count direction is known,
# and notes naming bad rows.

# ------------------------------------------------------------------------------------------ one column


@dataclass(frozen=True)
class KnownColumn:
    """What a public dataset's difficulty column means where the values alone do not say (docs/datasets.md)."""

    dataset: str
    samples: int | None
    counts: Counts = "right"
    nan_means_missing: bool = False
    note: str = ""


# Keyed by the path as the dataset stores it. Only facts the form cannot carry: the n behind a rate or a
# count, what a count counts, and whether NaN means "not measured". Sources are in docs/datasets.md.
KNOWN_COLUMNS: dict[str, KnownColumn] = {
    "llama8b_solve_rate": KnownColumn("Big-Math (SynthLabsAI)", samples=64),
    "qwen2.5_7b_pass_rate": KnownColumn("Guru (LLM360)", samples=16, nan_means_missing=True),
    **{
        f"extra_info.model_difficulty.DeepSeek-R1-Distill-Qwen-{size}": KnownColumn(
            "Skywork-OR1-RL-Data",
            samples=16,
            counts="wrong",
            note="read as a count of wrong answers out of 16 (k = 16 − value); the publisher's scripts do not "
            "settle the direction (docs/datasets.md): --counts right reads it the other way",
        )
        for size in ("1.5B", "7B", "32B")
    },
}


@dataclass(frozen=True)
class ColumnSpec:
    """A resolved difficulty column and how to read it."""

    leaf: Leaf
    form: Form
    samples: int | None = None
    counts: Counts = "right"
    known: KnownColumn | None = None

    def parse(self, *, nan: NanPolicy = "error", nulls: ListNulls = "skip") -> Parsed:
        """The canonical expressions for this column."""
        value = self.leaf.expr
        if self.form == "rate":
            return rate_form(value, nan=nan, samples=self.samples)
        if self.form == "fraction":
            return fraction_form(value)
        if self.form == "list":
            return list_form(value, nulls=nulls)
        if self.samples is None:
            raise UsageError(
                f"column {self.leaf.path!r} holds counts: give --samples N, how many answers they count "
                "out of (and --counts right or wrong)"
            )
        return count_form(value, samples=self.samples, counts=self.counts)


def column_spec(
    schema: Mapping[str, pl.DataType],
    path: str,
    *,
    sample: pl.Series | None = None,
    samples: int | None = None,
    counts: Counts | None = None,
    label: str = "input",
) -> ColumnSpec:
    """Resolve ``path`` and detect its form.

    ``samples`` (n) turns a rate into counts and is required for a count column unless KNOWN_COLUMNS has it;
    ``counts`` says whether a count column counts right (default) or wrong answers, overriding KNOWN_COLUMNS.
    A rate keeps its value as given unless ``samples`` is given here: a dataset's few off-grid rates (Big-Math
    has six on a 1/9 grid) should not turn into errors by default.
    """
    leaf = resolve_leaf(schema, path, label)
    form = detect_form(leaf.dtype, sample, path, label)
    known = KNOWN_COLUMNS.get(path)
    if form in ("fraction", "list") and samples is not None:
        raise UsageError(f"{path!r} holds {form} values that carry their own n; drop --samples")
    n = samples
    if form == "count" and n is None and known is not None:
        n = known.samples
    direction = counts if counts is not None else (known.counts if known else "right")
    return ColumnSpec(leaf=leaf, form=form, samples=check_samples(n, form), counts=direction, known=known)


def bad_row_notes(frame: pl.LazyFrame, parsed: Parsed, label: str, limit: int = MAX_ROWS_NAMED) -> list[str]:
    """One line per kind of bad value: how many rows, and the first row numbers (1-based). Reads the frame."""
    rows = (
        frame.with_row_index("__row", offset=1)
        .select(pl.col("__row"), parsed.problem, parsed.bad.alias("__bad"))
        .filter(pl.col("__bad"))
        .group_by("problem", maintain_order=True)
        .agg(pl.len().alias("rows"), pl.col("__row").head(limit).alias("first"))
        .collect()
    )
    notes = []
    for problem, count, first in rows.iter_rows():
        shown = ", ".join(str(r) for r in first)
        more = "" if count <= len(first) else f" and {count - len(first)} more"
        notes.append(f"{label}: {problem}: {count} row(s) ({shown}{more})")
    return notes

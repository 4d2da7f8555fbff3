"""The four forms of a difficulty column as polars expressions: rate, "k/n" text, a list of grades, a count.

Each builder returns a :class:`Parsed` whose ``problem`` names the first thing wrong with a row (null when
the row is fine) so that bad rows can be named by number; ``missing`` marks rows where nothing was measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import polars as pl

from sigmatool.errors import UsageError

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

"""Checks on values: each kind of bad value as an expression, evaluated once on the distinct values.

The same expressions are true on a bad row and on a bad distinct value, so a histogram of distinct values
finds every problem in one pass, and only when there is one are the rows read again to name the first of
them (:func:`describe_bad_rows`).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from sigmatool.load.dataset import INTEGER_TOLERANCE, Dataset, numeric, rate_value
from sigmatool.load.forms import PROBLEMS
from sigmatool.load.names import PROBLEM, RAW_K, RAW_N, RAW_P, RAW_W, REWARD, ROW, USABLE
from sigmatool.load.sources import Source

MAX_ROWS_NAMED = 5
# A float32 holds k/N to within 2^-24 of the rate (it lies in [0, 1]); scaled by N that is N · 2^-24.
FLOAT32_RATE_ERROR = 2.0**-24
Problems = list[tuple[str, pl.Expr]]


def _text_problems(name: str, raw: str, percent: bool) -> Problems:
    """Text that is not a number, split by what it looks like."""
    text = pl.col(raw).cast(pl.String).str.strip_chars()
    failed = pl.col(raw).is_not_null() & numeric(raw).is_null()
    nested = text.str.starts_with("[") | text.str.starts_with("{")
    percentage = text.str.ends_with("%") & ~pl.lit(percent)
    return [
        (f"column {name!r}: a list or record, not a number", failed & nested),
        (
            f"column {name!r}: a percentage, not a fraction in [0, 1] (--percent reads percentages)",
            failed & percentage & ~nested,
        ),
        (f"column {name!r}: not a number", failed & ~nested & ~percentage),
    ]


def _count_problems(ds: Dataset) -> Problems:
    opts = ds.options
    k, n = numeric(RAW_K), numeric(RAW_N)
    checks: Problems = []
    for name, raw, value in ((opts.k_col, RAW_K, k), (opts.n_col, RAW_N, n)):
        checks += _text_problems(name or "", raw, False)
        whole = (value - value.round(0)).abs() <= INTEGER_TOLERANCE
        checks.append((f"column {name!r}: not a whole number ≥ 0", value.is_nan() | (value < 0) | ~whole))
    checks.append((f"column {opts.n_col!r}: n must be at least 1", n < 1))
    checks.append((f"columns {opts.k_col!r}, {opts.n_col!r}: k is larger than n", k > n))
    return checks


def _rate_problems(ds: Dataset) -> Problems:
    opts = ds.options
    name = opts.col or ""
    # A numeric column holds no text: its text checks would only cost a string cast per distinct value.
    numeric_rates = ds.rate_dtype is not None and ds.rate_dtype.is_numeric()
    checks = [] if numeric_rates else _text_problems(name, RAW_P, opts.percent)
    if opts.percent:
        # "45%" parses once its sign is stripped; the text checks above see only the raw text.
        checks = [(what, check & rate_value(ds).is_null()) for what, check in checks]
    rate = rate_value(ds)
    if not opts.nan_missing:
        checks.append((f"column {name!r}: NaN is not a pass rate", rate.is_nan()))
    checks.append((f"column {name!r}: pass rate outside [0, 1]", ~rate.is_nan() & ((rate < 0) | (rate > 1))))
    if opts.samples is not None:
        scaled = rate * opts.samples
        slack = INTEGER_TOLERANCE + (opts.samples * FLOAT32_RATE_ERROR if ds.rate_is_float32 else 0.0)
        checks.append(
            (
                f"column {name!r}: rate × {opts.samples} (--samples) is not a whole number",
                ~rate.is_nan() & ((scaled - scaled.round(0)).abs() > slack),
            )
        )
    return checks


def counted_problems(col: str) -> list[tuple[str, pl.Expr]]:
    """Each kind of bad value of a counted form, true on a bad row and on a bad distinct value alike."""
    return [(f"column {col!r}: {problem}", pl.col(PROBLEM) == problem) for problem in PROBLEMS]


def problems(ds: Dataset) -> Problems:
    """(description, expression true on a bad row) for each kind of bad value, in the order reported."""
    opts = ds.options
    if ds.is_log:
        return []  # rewards are checked row by row while aggregating (see reward_problems)
    if ds.counted:
        checks = counted_problems(opts.col or "")
    else:
        checks = _count_problems(ds) if ds.form == "counts" else _rate_problems(ds)
    if opts.weight_col:
        w = numeric(RAW_W)
        checks += [
            (
                f"column {opts.weight_col!r}: weight is not a number",
                pl.col(RAW_W).is_not_null() & w.is_null(),
            ),
            (
                f"column {opts.weight_col!r}: weight must be a finite number ≥ 0",
                w.is_nan() | w.is_infinite() | (w < 0),
            ),
        ]
    return checks


def reward_problems(ds: Dataset) -> Problems:
    """Bad rewards by kind, on graded rollout rows: the same usable flag that aggregation counts."""
    name = ds.options.reward_col
    reward = pl.col(REWARD)
    text = reward.is_not_null() & reward.cast(pl.Float64, strict=False).is_null()
    bad = reward.is_not_null() & ~pl.col(USABLE) & ~text
    if ds.options.threshold is not None:
        return [(f"column {name!r}: reward is not a number", text), (f"column {name!r}: NaN reward", bad)]
    return [
        (f"column {name!r}: reward is not a number", text),
        (
            f"column {name!r}: reward is not 0/1 (the identity holds for binary rewards; "
            "--threshold T counts reward ≥ T as right)",
            bad,
        ),
    ]


def null_expr(ds: Dataset, *, weight: bool = True) -> pl.Expr:
    """Rows skipped as missing (and counted): a null pass rate, count or (with ``weight``) weight; for
    rollouts also a prompt with no graded reward."""
    if ds.counted:
        cols = [RAW_W] if weight and ds.options.weight_col else []
        expr = pl.col(RAW_K).is_null() & pl.col(PROBLEM).is_null()
    else:
        # A rate column read as counts has k and n where its rate has them (off a grid: a bare rate).
        cols = [RAW_K, RAW_N] if ds.has_counts and ds.form != "rate" else [RAW_P]
        cols += [RAW_W] if weight and ds.options.weight_col else []
        expr = pl.col(RAW_N) == 0 if ds.is_log else pl.lit(False)
    if ds.options.nan_missing and ds.form == "rate":
        expr = expr | rate_value(ds).is_nan().fill_null(False)
    for col in cols:
        expr = expr | pl.col(col).is_null()
    return expr


def usable_expr(ds: Dataset) -> pl.Expr:
    """Rows that take part in the analysis: nothing missing and no bad value."""
    bad = pl.lit(False)
    for _, check in problems(ds):
        bad = bad | check.fill_null(False)
    return ~null_expr(ds) & ~bad


def percent_hint(ds: Dataset, rates: pl.Series) -> str:
    """Hints on a rate column's bad values: NaN (--nan-missing); values past 1 that look like a rating (at
    most 10, in steps of a half: not a pass rate at all), like percentages (at most 100: --percent, or the
    column is not a pass rate), or like counts (whole numbers: --samples N --counts)."""
    if ds.has_counts or ds.options.percent or ds.is_log:
        return ""
    numbers = rates.cast(pl.Float64, strict=False)
    nan = "; if NaN means not measured, --nan-missing skips such rows" if bool(numbers.is_nan().any()) else ""
    values = numbers.drop_nans().drop_nulls()
    top, bottom = values.max(), values.min()
    if not (isinstance(top, float) and isinstance(bottom, float) and 1.0 < top <= 100.0 and bottom >= 0):
        return nan
    whole = bool((values == values.round(0)).all())
    halves = bool(((values * 2) == (values * 2).round(0)).all())
    if top <= 10.0 and halves:
        hint = nan + (
            f"; the values reach {top:g} in steps of {'1' if whole else '0.5'}, like a rating (1 to 10): the "
            "column may be a rating, not a pass rate (a pass rate counts answers graded right)"
        )
    else:
        hint = nan + (
            f"; the values reach {top:g}: if they are percentages, --percent reads them as such, or the column "
            "is not a pass rate"
        )
    if whole:
        hint += "; if they count right (or wrong) answers of N, --samples N --counts right (or wrong)"
    return hint


def describe_bad_rows(ds: Dataset, reload: Callable[[Source], Dataset]) -> str:
    """Second pass, only on failure: name each kind of problem with its first offending rows.

    ``reload`` reads one source again with its value columns as text, so that every bad value is seen.
    """
    for source in ds.sources:
        single = reload(source)
        if ds.is_log:
            assert single.raw is not None
            frame, checks = single.raw, reward_problems(single)
        else:
            frame, checks = single.frame, problems(single)
        found: list[str] = []
        for problem, check in checks:
            rows = frame.filter(check.fill_null(False)).select(ROW).head(MAX_ROWS_NAMED).collect()
            if rows.height:
                listed = ", ".join(str(r) for r in rows[ROW].to_list())
                more = " and more" if rows.height == MAX_ROWS_NAMED else ""
                plural = "s" if rows.height > 1 else ""
                found.append(f"{problem} at row{plural} {listed}{more}")
        if found:
            return f"{source.label}: " + "; ".join(found) + " (--skip-invalid skips such rows)"
    return "the input has invalid values (--skip-invalid skips such rows)"

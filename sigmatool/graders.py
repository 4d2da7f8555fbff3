"""``sigmatool graders``: two graders of one rollout set, compared answer by answer and group by group.

Each rollout is graded by both, A and B; per prompt its n paired rollouts fall in four cells: right under
both (n11), under A only (n10), under B only (n01), under neither (n00). Over all rollouts:
``a_only = Σ n10``, ``b_only = Σ n01``, ``agree_share = Σ (n11 + n00) / Σ n`` and ``mcnemar_p``, the exact
two-sided McNemar test (a binomial test of a_only of a_only + b_only at ½).

Per G, a group is G of the prompt's n paired rollouts drawn without replacement (prompts with n ≥ G), so
each share is exact from the four counts:

- ``P(silent under A) = [C(n11 + n10, G) + C(n01 + n00, G)] / C(n, G)``;
- ``P(silent under A and B) = [C(n11, G) + C(n10, G) + C(n01, G) + C(n00, G)] / C(n, G)`` (all G in one cell);
- ``silent_a_not_b = P(silent under A) − P(silent under both)``, the prompts' mean.

``prompts_silent_a_only`` counts the prompts whose n rollouts all agree under A and not under B. With a
trusted grader (``--trusted a``), the other's false-pass rate is the share of the trusted grader's wrong
answers it passes (``fp``, over ``fp_trials`` of them), its false-fail rate the share of the trusted
grader's right answers it fails (``fn``, over ``fn_trials``), each with its 95 % Clopper–Pearson interval:
the rows ``--denoise-from`` reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.columns import labels, percent
from sigmatool.options.verifier import GradersOptions
from sigmatool.render import View

FloatArray = NDArray[np.float64]

PROMPT, A, B = "prompt", "a", "b"  # the paired frame's columns: prompt id, right under A, right under B
CELLS = ("n11", "n10", "n01", "n00")


def cells(paired: pl.DataFrame) -> pl.DataFrame:
    """Per prompt (in order of first appearance): its n paired rollouts in the four cells."""
    a, b = pl.col(A), pl.col(B)
    return paired.group_by(PROMPT, maintain_order=True).agg(
        pl.len().alias("n"),
        (a & b).sum().alias("n11"),
        (a & ~b).sum().alias("n10"),
        (~a & b).sum().alias("n01"),
        (~a & ~b).sum().alias("n00"),
    )


def _choose(m: FloatArray, G: int) -> FloatArray:
    from scipy.special import comb

    return np.asarray(comb(m, G), dtype=np.float64)


def silent_shares(four: pl.DataFrame, G: int) -> dict[str, FloatArray]:
    """Per prompt at G: the chance a group of G of its paired rollouts is silent under A, under B, under A
    and not B, under B and not A (NaN where n < G)."""
    n11, n10, n01, n00, n = (four[c].cast(pl.Float64).to_numpy() for c in (*CELLS, "n"))
    total = _choose(n, G)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (_choose(n11 + n10, G) + _choose(n01 + n00, G)) / total
        b = (_choose(n11 + n01, G) + _choose(n10 + n00, G)) / total
        both = (_choose(n11, G) + _choose(n10, G) + _choose(n01, G) + _choose(n00, G)) / total
    short = n < G
    out = {
        "p_silent_a": a,
        "p_silent_b": b,
        "p_silent_a_not_b": a - both,
        "p_silent_b_not_a": b - both,
    }
    return {name: np.where(short, np.nan, x) for name, x in out.items()}


def mcnemar(a_only: int, b_only: int) -> float:
    """The exact two-sided McNemar p-value: a binomial test of a_only of a_only + b_only at ½.

    >>> mcnemar(0, 5)  # 2 · ½⁵
    0.0625
    """
    if a_only + b_only == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(a_only, a_only + b_only, 0.5).pvalue)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The two-sided Clopper–Pearson interval of k of n (NaN with no trials)."""
    if n == 0:
        return float("nan"), float("nan")
    from scipy.stats import beta

    alpha = 1.0 - level
    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2.0, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1.0 - alpha / 2.0, k + 1, n - k))
    return lo, hi


def trusted_rates(four: pl.DataFrame, trusted: str) -> dict[str, float]:
    """The other grader's FP and FN against the trusted one (``a`` or ``b``), with trials and intervals."""
    n11, n10, n01, n00 = (int(four[c].sum()) for c in CELLS)
    # (passed of the trusted's wrong, trusted's wrong), (failed of the trusted's right, trusted's right)
    fp_k, fp_n, fn_k, fn_n = (
        (n01, n01 + n00, n10, n11 + n10) if trusted == A else (n10, n10 + n00, n01, n11 + n01)
    )
    fp_lo, fp_hi = clopper_pearson(fp_k, fp_n)
    fn_lo, fn_hi = clopper_pearson(fn_k, fn_n)
    return {
        "fp": fp_k / fp_n if fp_n else float("nan"),
        "fp_lo": fp_lo,
        "fp_hi": fp_hi,
        "fp_trials": float(fp_n),
        "fn": fn_k / fn_n if fn_n else float("nan"),
        "fn_lo": fn_lo,
        "fn_hi": fn_hi,
        "fn_trials": float(fn_n),
    }


def summary(four: pl.DataFrame, sizes: Sequence[int], trusted: str | None = None) -> pl.DataFrame:
    """One row per G: the rollouts' agreement and each grader's silent shares (:mod:`sigmatool.graders`)."""
    n = four["n"].to_numpy()
    a_only, b_only = int(four["n10"].sum()), int(four["n01"].sum())
    rollouts = int(n.sum())
    k_a = (four["n11"] + four["n10"]).to_numpy()
    k_b = (four["n11"] + four["n01"]).to_numpy()
    all_a = (k_a == 0) | (k_a == n)
    all_b = (k_b == 0) | (k_b == n)
    rows = []
    for G in sizes:
        shares = silent_shares(four, int(G))
        used = ~np.isnan(shares["p_silent_a"])
        row: dict[str, float | int] = {
            "G": int(G),
            "prompts": int(used.sum()),
            "rollouts": rollouts,
            "a_only": a_only,
            "b_only": b_only,
            "agree_share": (rollouts - a_only - b_only) / rollouts if rollouts else float("nan"),
            "mcnemar_p": mcnemar(a_only, b_only),
        }
        for name, column in (
            ("silent_rate_a", "p_silent_a"),
            ("silent_rate_b", "p_silent_b"),
            ("silent_a_not_b", "p_silent_a_not_b"),
            ("silent_b_not_a", "p_silent_b_not_a"),
        ):
            row[name] = float(shares[column][used].mean()) if used.any() else float("nan")
        row["prompts_silent_a_only"] = int((all_a & ~all_b).sum())
        row["prompts_silent_b_only"] = int((all_b & ~all_a).sum())
        if trusted is not None:
            row.update(trusted_rates(four, trusted))
        rows.append(row)
    return pl.DataFrame(rows)


def per_prompt(four: pl.DataFrame, sizes: Sequence[int]) -> pl.DataFrame:
    """One row per prompt and G: its n, k under each grader, rollouts right under one only, silent chances."""
    base = four.select(
        PROMPT,
        "n",
        (pl.col("n11") + pl.col("n10")).alias("k_a"),
        (pl.col("n11") + pl.col("n01")).alias("k_b"),
        pl.col("n10").alias("a_only"),
        pl.col("n01").alias("b_only"),
    )
    parts = [
        base.with_columns(
            pl.lit(int(G), dtype=pl.Int64).alias("G"),
            *(pl.Series(name, x) for name, x in silent_shares(four, int(G)).items()),
        )
        for G in sizes
    ]
    return pl.concat(parts).select(PROMPT, "G", pl.exclude(PROMPT, "G")).fill_nan(None)


@dataclass(frozen=True)
class GradersResult:
    """``graders``' answer: the summary per G (or the rows per prompt), the names of A and B, the notes."""

    table: pl.DataFrame
    names: tuple[str, str]
    notes: tuple[str, ...] = ()
    rows: bool = False

    def frame(self) -> pl.DataFrame:
        return self.table

    def view(self) -> View | None:
        if self.rows:
            return None
        names = self.table.columns
        return View(
            headline=self.headline(),
            percent=(*percent(names), *(c for c in SHARES if c in names and c not in percent(names))),
            labels=labels(names),
            footer=list(self.notes),
        )

    def headline(self) -> str:
        if self.table.height == 0:
            return ""
        row = self.table.row(0, named=True)
        a, b = self.names
        said = (
            f"A = {a} and B = {b} agree on {row['agree_share']:.1%} of {row['rollouts']:,} paired rollouts: "
            f"{row['a_only']:,} right under A only, {row['b_only']:,} under B only (McNemar p = "
            f"{row['mcnemar_p']:.3g})."
        )
        at = "; ".join(
            f"at G = {r['G']}, {_pct(r['silent_rate_a'])} of groups silent under A, "
            f"{_pct(r['silent_rate_b'])} under B"
            for r in self.table.iter_rows(named=True)
        )
        return f"{said} {at[0].upper()}{at[1:]}."

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> None:
        return None

    def warnings(self) -> tuple[str, ...]:
        return ()


def _pct(x: float | None) -> str:
    """A share for the headline: a percentage, or "no value" (no prompt holds G paired rollouts)."""
    return "no value" if x is None or x != x else f"{x:.1%}"


SHARES = (
    "agree_share",
    "silent_rate_a",
    "silent_rate_b",
    "silent_a_not_b",
    "silent_b_not_a",
    "fp",
    "fp_lo",
    "fp_hi",
    "fn",
    "fn_lo",
    "fn_hi",
)


# --------------------------------------------------------------------------------------------- reading


def graded(values: pl.Series, threshold: float | None) -> tuple[pl.Series, pl.Series]:
    """(right, valid) of one grader's rewards: booleans as they are; numbers right at 1 and wrong at 0, or
    right at ≥ T with ``threshold``; anything else (null, NaN, ±inf, text) invalid."""
    if values.dtype == pl.Boolean:
        return values.fill_null(False), values.is_not_null()
    x = values.cast(pl.Float64, strict=False)
    finite = x.is_not_null() & x.is_finite().fill_null(False)
    if threshold is not None:
        return ((x >= threshold).fill_null(False) & finite), finite
    return (x == 1.0).fill_null(False), ((x == 0.0) | (x == 1.0)).fill_null(False) & finite


def read_log(path: str) -> pl.DataFrame:
    """A rollout log file, whole (CSV, TSV, JSONL, JSON or Parquet by its extension)."""
    from sigmatool.errors import DataError
    from sigmatool.load.sources import format_of, sniff_separator

    fmt = format_of(path, None)
    try:
        if fmt in ("csv", "tsv"):
            separator, _ = sniff_separator(path, fmt, None)
            return pl.read_csv(path, separator=separator, infer_schema_length=10_000)
        if fmt == "parquet":
            return pl.read_parquet(path)
        if fmt == "jsonl":
            return pl.read_ndjson(path)
        return pl.read_json(path)
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except (OSError, pl.exceptions.PolarsError) as e:
        raise DataError(f"{path}: cannot be read as {fmt} ({str(e).splitlines()[0]})") from None


def _column(frame: pl.DataFrame, name: str, path: str) -> pl.Series:
    from sigmatool.errors import DataError

    if name not in frame.columns:
        raise DataError(f"{path}: no column {name!r} (columns: {', '.join(frame.columns)})")
    return frame[name]


def paired(
    paths: Sequence[str],
    prompt_col: str,
    reward_cols: tuple[str, str],
    rollout_col: str | None,
    threshold: float | None,
) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """The paired rollouts (prompt, right under A, right under B) and notes: one log with two reward
    columns, or two logs with one each, paired on (prompt, ``rollout_col``) or else by order within each
    prompt. Pairs with an invalid reward under either grader are left out, counted in a note."""
    notes: list[str] = []
    sides = []
    for i, path in enumerate(paths if len(paths) == 2 else [paths[0], paths[0]]):
        frame = read_log(path)
        right, valid = graded(_column(frame, reward_cols[i], path), threshold)
        key = _column(frame, prompt_col, path).cast(pl.String)
        side = pl.DataFrame({PROMPT: key, f"__right{i}": right, f"__valid{i}": valid})
        if rollout_col is not None:
            side = side.with_columns(_column(frame, rollout_col, path).cast(pl.String).alias("__rollout"))
        else:
            side = side.with_columns(pl.int_range(pl.len()).over(PROMPT).cast(pl.String).alias("__rollout"))
        sides.append(side)
    if len(paths) == 1:
        both = pl.concat([sides[0], sides[1].select("__right1", "__valid1")], how="horizontal")
    else:
        both = sides[0].join(sides[1], on=[PROMPT, "__rollout"], how="inner", maintain_order="left")
        left = sides[0].height + sides[1].height - 2 * both.height
        how = f"(prompt, {rollout_col})" if rollout_col else "prompt and order within the prompt"
        notes.append(
            f"the two logs are paired by {how}: {both.height:,} pairs"
            + (f", {left:,} rollouts without a partner left out" if left else "")
        )
    valid = both["__valid0"] & both["__valid1"]
    if not valid.all():
        notes.append(f"{int((~valid).sum()):,} pairs with an invalid reward under either grader left out")
    both = both.filter(valid)
    return both.select(PROMPT, pl.col("__right0").alias(A), pl.col("__right1").alias(B)), tuple(notes)


def analyse(options: GradersOptions) -> GradersResult:
    """``graders``' answer: the logs read and paired, the summary per G or the rows per prompt."""
    from sigmatool.errors import DataError

    o = options
    pairs, notes = paired(o.paths, o.prompt_col, o.reward_cols, o.rollout_col, o.threshold)
    if pairs.height == 0:
        raise DataError(f"{', '.join(o.paths)}: no rollout graded by both graders")
    four = cells(pairs)
    names = o.reward_cols
    if len(o.paths) == 2:
        names = (f"{o.paths[0]}:{names[0]}", f"{o.paths[1]}:{names[1]}")
    if o.per_prompt:
        return GradersResult(per_prompt(four, o.sizes), names, notes, rows=True)
    return GradersResult(summary(four, o.sizes, o.trusted), names, notes)

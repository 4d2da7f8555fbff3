"""The expected silent probability of each sampled group: from a pass-rate table, or from the run itself.

Each group of size G of a prompt with pass rate p is silent (all right or all wrong, σ = 0) with probability
``P = p^G + (1 − p)^G`` (docs/theory.md §2). Two sources for p:

- a table of per-prompt pass rates (``p``, or counts ``k`` of ``n``), optionally per step;
- leave-one-step-out: the prompt's right answers k' of n' usable rollouts in the OTHER steps of the run;
- a window of K steps: the same counts from the K steps before and the K steps after it only (steps counted
  by their order in the run, so steps missing from the log are skipped), never the step itself.

With counts, P is estimated without bias by the hypergeometric form ``[C(k, G) + C(n − k, G)] / C(n, G)`` when
G ≤ n, and by the plug-in ``p̂^G + (1 − p̂)^G`` (p̂ = k/n) when G > n, where no unbiased estimate exists.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from sigmatool import kernels
from sigmatool.errors import DataError, UsageError
from sigmatool.options import PriorSpec

# The estimator and prior of the expectation from counts (None: the one rule, as every command's default).
Estimate = tuple[str, PriorSpec | None] | None
EXPECTED = "expected"
VARIANCE = "variance"  # a group's own variance term of the z-score, where the estimator gives one
EXPECTED_RIGHT, EXPECTED_WRONG = "expected_all_right", "expected_all_wrong"  # its two halves
EXPECTED_P = "expected_p"  # the pass rate the group's answers are expected at
BASIS = "basis"  # the estimator of each expectation (as a summary's ``estimator``), "rate"; null: none


def all_right(pass_at: int = 1) -> pl.Expr:
    """A group all right under pass@K: every K-subset holds a right answer, c > G − K (c = G at K = 1)."""
    return pl.col("k") > pl.col("G") - pass_at


def silent(pass_at: int = 1) -> pl.Expr:
    """A group silent under pass@K: all wrong, or all right (docs/passk.md)."""
    return (pl.col("k") == 0) | all_right(pass_at)


def _expectation_column(
    frame: pl.DataFrame, k: str, n: str, estimate: Estimate = None, pass_at: int = 1
) -> pl.DataFrame:
    """Add ``expected`` and ``basis`` from count columns ``k``/``n`` and ``G``, each distinct triple once,
    valued as every command values counts (``estimate``: the estimator and prior; by default the one rule,
    unbiased where G ≤ n and a prior fitted to these counts beyond, where it is identified)."""
    from sigmatool.estimators import valuation
    from sigmatool.kernels import Quantity

    estimator, prior = estimate or ("auto", None)
    known = pl.col(n).is_not_null() & (pl.col(n) >= 1)
    used = frame.filter(known)
    triples = used.select(k, n, "G").unique(maintain_order=True)
    cells = triples.select(
        pl.col(k).cast(pl.Int64).alias("k"), pl.col(n).cast(pl.Int64).alias("n"), pl.col("G").cast(pl.Int64)
    ).with_columns((pl.col("k") / pl.col("n")).alias("p"), pl.lit(1.0).alias("prompts"))
    counts = used.group_by(k, n).agg(pl.len().alias("prompts")).sort(k, n)
    hist = counts.select(
        pl.col(k).cast(pl.Int64).alias("k"), pl.col(n).cast(pl.Int64).alias("n"), "prompts"
    ).with_columns((pl.col("k") / pl.col("n")).alias("p"))
    val = valuation(hist, (), (), estimator, prior)
    if pass_at > 1:
        val = val.passing(pass_at)
    sizes = cells["G"].to_numpy()
    right, wrong = (
        val.values(cells, q, sizes) if cells.height else np.zeros(0)
        for q in (Quantity.ALL_RIGHT, Quantity.ALL_WRONG)
    )
    values = right + wrong
    outside = val.outside(cells, sizes).astype(np.float64)
    basis = val.cell_labels(cells, outside, np.ones(cells.height), values)
    # The pass rate a group's answers are expected at: k/n, unbiased for p whatever G.
    rate = (cells["k"] / cells["n"]).to_numpy()
    triples = triples.with_columns(
        pl.Series(EXPECTED, values, dtype=pl.Float64).fill_nan(None),
        pl.Series(BASIS, basis, dtype=pl.String),
        pl.Series(EXPECTED_RIGHT, right, dtype=pl.Float64).fill_nan(None),
        pl.Series(EXPECTED_WRONG, wrong, dtype=pl.Float64).fill_nan(None),
        pl.Series(EXPECTED_P, rate, dtype=pl.Float64),
    )
    out = frame.join(triples, on=[k, n, "G"], how="left", nulls_equal=False)
    none = pl.col(EXPECTED).is_null()
    return out.with_columns(pl.when(none).then(None).otherwise(pl.col(BASIS)).alias(BASIS))


def leave_one_step_out(groups: pl.DataFrame, estimate: Estimate = None, pass_at: int = 1) -> pl.DataFrame:
    """Groups (G ≥ 1) with ``expected`` from each prompt's counts in the other steps, and ``basis``.

    Adds ``k_other`` and ``n_other``. A prompt seen in one step only has n_other = 0 there: its groups get
    no expectation (null) and are counted by the caller.
    """
    usable = groups.filter(pl.col("G") >= 1)
    per_step = usable.group_by("prompt", "step").agg(
        pl.col("k").sum().alias("__k_step"), pl.col("G").sum().alias("__n_step")
    )
    totals = per_step.group_by("prompt").agg(
        pl.col("__k_step").sum().alias("__k_all"), pl.col("__n_step").sum().alias("__n_all")
    )
    joined = (
        usable.join(per_step, on=["prompt", "step"], how="left")
        .join(totals, on="prompt", how="left")
        .with_columns(
            (pl.col("__k_all") - pl.col("__k_step")).alias("k_other"),
            (pl.col("__n_all") - pl.col("__n_step")).alias("n_other"),
        )
        .drop("__k_step", "__n_step", "__k_all", "__n_all")
    )
    return _expectation_column(joined, "k_other", "n_other", estimate, pass_at)


def window(groups: pl.DataFrame, K: int, estimate: Estimate = None, pass_at: int = 1) -> pl.DataFrame:
    """Groups (G ≥ 1) with ``expected`` from each prompt's counts in the ``K`` steps before and after the
    group's step (by position among the run's steps; the step itself left out), and ``basis``.

    Adds ``k_other``, ``n_other`` and ``variance``, the group's term of the z-score's variance: ``(S − P̂)²``
    with S the group's silent indicator, unbiased for ``P(1 − P) + Var(P̂)`` since the step is left out of P̂.
    A prompt not seen in the window gets no expectation. At the run's ends
    the window is one-sided. Each of the 2K offsets is one shifted copy of the per-step counts, so the cost is
    linear in the run's (prompt, step) pairs.
    """
    if K < 1:
        raise UsageError(f"--window: give a whole number of steps ≥ 1, not {K}")
    usable = groups.filter(pl.col("G") >= 1)
    order = usable.select(pl.col("step").unique().sort()).with_row_index("__pos")
    per_step = (
        usable.group_by("prompt", "step")
        .agg(pl.col("k").sum().alias("__k"), pl.col("G").sum().alias("__n"))
        .join(order, on="step")
    )
    shifted = pl.concat(
        [
            per_step.select("prompt", (pl.col("__pos").cast(pl.Int64) + d).alias("__pos"), "__k", "__n")
            for d in range(-K, K + 1)
            if d != 0
        ]
    )
    near = shifted.group_by("prompt", "__pos").agg(
        pl.col("__k").sum().alias("k_other"), pl.col("__n").sum().alias("n_other")
    )
    joined = (
        usable.join(order.with_columns(pl.col("__pos").cast(pl.Int64)), on="step")
        .join(near, on=["prompt", "__pos"], how="left")
        .with_columns(pl.col("k_other").fill_null(0), pl.col("n_other").fill_null(0))
        .drop("__pos")
    )
    out = _expectation_column(joined, "k_other", "n_other", estimate, pass_at)
    # A few steps' counts make a noisy P̂ (exactly 0 or 1 when n' = G), which P̂(1 − P̂) would take as exact.
    # (S − P̂)² is unbiased for Var(S − P̂) = P(1 − P) + Var(P̂), S and P̂ being independent.
    quiet = silent(pass_at).cast(pl.Float64)
    return out.with_columns(((quiet - pl.col(EXPECTED)) ** 2).alias(VARIANCE))


def _check_rates(rates: pl.DataFrame, key_dtype: pl.DataType) -> tuple[pl.DataFrame, list[str]]:
    """The table's key columns cast to the log's key dtype, and its keys; DataError on a bad table."""
    if "prompt" not in rates.columns:
        raise DataError(f"pass-rate table: no 'prompt' column; the columns are: {', '.join(rates.columns)}")
    has_p = "p" in rates.columns
    if not has_p and not {"k", "n"} <= set(rates.columns):
        raise DataError("pass-rate table: give a 'p' column, or 'k' and 'n' columns")
    keys = ["step", "prompt"] if "step" in rates.columns else ["prompt"]
    try:
        table = rates.with_columns(pl.col("prompt").cast(key_dtype, strict=True))
        if "step" in keys:
            table = table.with_columns(pl.col("step").cast(pl.Int64, strict=True))
    except pl.exceptions.PolarsError as exc:
        raise DataError(
            f"pass-rate table: its keys do not match the log's prompt keys ({key_dtype})"
        ) from exc
    dupes = table.select(keys).is_duplicated().sum()
    if dupes:
        raise DataError(f"pass-rate table: {dupes} rows repeat a key ({', '.join(keys)})")
    if has_p:
        p = table["p"].cast(pl.Float64, strict=False)
        if (p.is_nan() | (p < 0) | (p > 1)).fill_null(False).any():
            raise DataError("pass-rate table: 'p' must lie in [0, 1]")
    else:
        k, n = table["k"].cast(pl.Float64, strict=False), table["n"].cast(pl.Float64, strict=False)
        bad = (k < 0) | (k > n) | (n < 1) | (k != k.round(0)) | (n != n.round(0))
        if bad.fill_null(False).any():
            raise DataError("pass-rate table: 'k' and 'n' must be whole numbers with 0 ≤ k ≤ n and n ≥ 1")
    return table, keys


def from_table(
    groups: pl.DataFrame, rates: pl.DataFrame, estimate: Estimate = None, pass_at: int = 1
) -> pl.DataFrame:
    """Groups (G ≥ 1) with ``expected`` from a table of pass rates keyed by prompt (or by step and prompt).

    A group whose prompt is not in the table, or has a null rate there, gets no expectation.
    """
    usable = groups.filter(pl.col("G") >= 1)
    table, keys = _check_rates(rates, usable.schema["prompt"])
    if "p" in table.columns:
        joined = usable.join(table.select(*keys, pl.col("p").cast(pl.Float64)), on=keys, how="left")
        p, sizes = joined["p"].fill_null(np.nan).to_numpy(), joined["G"].to_numpy()
        values = kernels.silent_probability(p, sizes)
        right = p**sizes
        if pass_at > 1:
            from sigmatool.kernels import Quantity
            from sigmatool.kernels.grader import Grader

            credit = Grader(pass_at=pass_at)
            values = Quantity.SILENT.plugin(p, sizes, grader=credit)
            right = Quantity.ALL_RIGHT.plugin(p, sizes, grader=credit)
        basis = pl.when(pl.col("p").is_null()).then(None).otherwise(pl.lit("rate"))
        return joined.with_columns(
            pl.Series(EXPECTED, values, dtype=pl.Float64).fill_nan(None),
            basis.alias(BASIS),
            pl.Series(EXPECTED_RIGHT, right, dtype=pl.Float64).fill_nan(None),
            pl.Series(EXPECTED_WRONG, (1 - p) ** sizes, dtype=pl.Float64).fill_nan(None),
            pl.col("p").alias(EXPECTED_P),
        ).drop("p")
    counts = table.select(
        *keys, pl.col("k").cast(pl.Int64).alias("table_k"), pl.col("n").cast(pl.Int64).alias("table_n")
    )
    joined = usable.join(counts, on=keys, how="left")
    out = _expectation_column(joined, "table_k", "table_n", estimate, pass_at)
    return out.rename({"table_k": "k_other", "table_n": "n_other"})

"""open-instruct's difficulty map from pass counts: each row's ``difficulty`` object as its
``create_difficulty_map.py`` computes it, for its difficulty curriculum to read.

From counts k of n per row (the map's ``pass_count`` and ``num_samples``):

1. a Beta(α, β) prior fitted by marginal likelihood, ``max Σ [ln B(k + α, n − k + β) − ln B(α, β)]`` over
   ``log α, log β ∈ [−10, 10]`` (L-BFGS-B from α = max(2 k̄/n̄, 10⁻³), β = max(2 (1 − k̄/n̄), 10⁻³)); Jeffreys'
   Beta(½, ½) when every answer is right or every one wrong, or the fit fails;
2. the posterior Beta(k + α, n − k + β): ``posterior_mean``, ``posterior_lower_bound`` its 10% quantile,
   ``value`` = 1 − that bound;
3. ``expected_quantile``: the expected rank of a row's difficulty 1 − p among all rows',
   ∫ f_i(x) F̄(x) dx with F̄ the rows' mixture CDF of difficulty, on 512 midpoints of [0, 1] (0.5 for one row);
4. ``bucket_index`` 0 (easiest) … K − 1, K = min(5, rows) buckets of equal size (the first ones one larger
   when the rows do not divide), in order of expected quantile, then value, then the row's id as text
   (``--id-col``, else its 0-based row number: the map's ``instance_id`` order); ``bucket_count`` K.

Each value is computed once per distinct (k, n) and the rows take theirs. A row without counts gets no
``difficulty`` (null).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import polars as pl

    from sigmatool.load import Dataset

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

LOWER_QUANTILE = 0.1
BUCKETS = 5
GRID = 512
JEFFREYS = (0.5, 0.5)
FIELDS = (
    "value",
    "posterior_mean",
    "posterior_lower_bound",
    "expected_quantile",
    "bucket_index",
    "bucket_count",
)


@dataclass(frozen=True)
class Prior:
    """The Beta prior the map smooths with, and where it came from (``empirical_bayes``, ``jeffreys_fallback``)."""

    alpha: float
    beta: float
    source: str


def fitted_prior(k: IntArray, n: IntArray, m: FloatArray) -> Prior:
    """The empirical-Bayes Beta prior of distinct counts (k, n) with ``m`` rows each (Jeffreys' as fallback)."""
    from scipy.optimize import minimize
    from scipy.special import betaln

    successes, attempts = float((m * k).sum()), float((m * n).sum())
    if attempts == 0 or successes in (0.0, attempts):
        return Prior(*JEFFREYS, "jeffreys_fallback")
    mean = successes / attempts

    def objective(log_params: FloatArray) -> float:
        a, b = math.exp(log_params[0]), math.exp(log_params[1])
        return -float((m * (betaln(k + a, n - k + b) - betaln(a, b))).sum())

    start = (math.log(max(mean * 2.0, 1e-3)), math.log(max((1.0 - mean) * 2.0, 1e-3)))
    found = minimize(objective, x0=start, method="L-BFGS-B", bounds=[(-10.0, 10.0), (-10.0, 10.0)])
    if not found.success:
        return Prior(*JEFFREYS, "jeffreys_fallback")
    return Prior(math.exp(found.x[0]), math.exp(found.x[1]), "empirical_bayes")


def posterior(k: IntArray, n: IntArray, prior: Prior) -> dict[str, FloatArray]:
    """Per distinct (k, n): the posterior mean, its lower bound, and the value 1 − bound."""
    from scipy.stats import beta

    a, b = k + prior.alpha, n - k + prior.beta
    lower = beta.ppf(LOWER_QUANTILE, a, b)
    return {
        "posterior_mean": a / (a + b),
        "posterior_lower_bound": lower,
        "value": np.clip(1.0 - lower, 0.0, 1.0),
    }


def expected_quantiles(k: IntArray, n: IntArray, m: FloatArray, prior: Prior) -> FloatArray:
    """Per distinct (k, n): its difficulty's expected quantile among all rows' (``m`` rows each)."""
    from scipy.stats import beta

    if m.sum() == 1:
        return np.full(k.size, 0.5)
    grid = (np.arange(GRID, dtype=np.float64) + 0.5) / GRID
    # The difficulty 1 − p of a row is Beta(n − k + β, k + α).
    a, b = (n - k + prior.beta)[:, None], (k + prior.alpha)[:, None]
    mixture = (m[:, None] * np.nan_to_num(beta.cdf(grid[None, :], a, b), nan=0.0, posinf=1.0)).sum(
        0
    ) / m.sum()
    pdf = np.nan_to_num(beta.pdf(grid[None, :], a, b), nan=0.0, posinf=0.0, neginf=0.0)
    return np.asarray(np.clip(pdf.dot(mixture) / GRID, 0.0, 1.0), dtype=np.float64)


def buckets(
    quantile: FloatArray, value: FloatArray, ids: list[str], count: int = BUCKETS
) -> tuple[IntArray, int]:
    """Each row's bucket (0 easiest) by (expected quantile, value, id as text), equal sizes, the first ones one
    larger; and the number of buckets."""
    K = min(count, len(ids))
    if K <= 0:
        return np.zeros(0, dtype=np.int64), 0
    order = np.lexsort((np.array(ids, dtype=str), value, quantile))
    size, extra = divmod(len(ids), K)
    widths = np.full(K, size) + (np.arange(K) < extra)
    out = np.empty(len(ids), dtype=np.int64)
    out[order] = np.repeat(np.arange(K, dtype=np.int64), widths)
    return out, K


def difficulty(k: IntArray, n: IntArray, ids: list[str]) -> tuple[dict[str, FloatArray | IntArray], Prior]:
    """Every row's difficulty fields (:data:`FIELDS`) from its counts, and the prior used."""
    pairs = np.stack([k, n], axis=1)
    distinct, inverse, m = np.unique(pairs, axis=0, return_inverse=True, return_counts=True)
    dk, dn, dm = distinct[:, 0], distinct[:, 1], m.astype(np.float64)
    inverse = inverse.reshape(-1)
    prior = fitted_prior(dk, dn, dm)
    values = posterior(dk, dn, prior)
    values["expected_quantile"] = expected_quantiles(dk, dn, dm, prior)
    rows: dict[str, FloatArray | IntArray] = {name: v[inverse] for name, v in values.items()}
    bucket, K = buckets(values["expected_quantile"][inverse], values["value"][inverse], ids)
    rows["bucket_index"] = bucket
    rows["bucket_count"] = np.full(len(ids), K, dtype=np.int64)
    return rows, prior


def difficulty_rows(ds: Dataset) -> tuple[pl.DataFrame, list[str]]:
    """Every input row with every column and open-instruct's ``difficulty`` object (null for a row without
    counts), and what to note."""
    import polars as pl

    from sigmatool.errors import UsageError
    from sigmatool.load import usable_expr, with_originals
    from sigmatool.load.dataset import k_expr, n_expr

    if ds.is_log or ds.parts:
        raise UsageError("open-instruct's map has one row per prompt: give one pass-rate column of prompts")
    full = with_originals(ds)
    if not full.has_counts:
        raise UsageError(
            "open-instruct's difficulty map is made from pass counts: give --k-col and --n-col, --samples N, "
            "or a 'k/n' or graded column"
        )
    usable = usable_expr(full) & k_expr(full).is_not_null() & n_expr(full).is_not_null()
    frame = (
        full.frame.with_row_index("__oi_row")
        .with_columns(k_expr(full).alias("__oi_k"), n_expr(full).alias("__oi_n"), usable.alias("__oi_usable"))
        .collect()
    )
    id_col = ds.options.id_col
    ids = frame[id_col].cast(pl.String) if id_col else frame["__oi_row"].cast(pl.String)
    keep = frame["__oi_usable"].to_numpy()
    k = frame["__oi_k"].fill_null(0).cast(pl.Int64).to_numpy()[keep]
    n = frame["__oi_n"].fill_null(0).cast(pl.Int64).to_numpy()[keep]
    notes = []
    if not keep.all():
        notes.append(f"{np.count_nonzero(~keep):,} rows without counts get no difficulty (null)")
    if "difficulty" in full.columns:
        notes.append("the input's column 'difficulty' is replaced by open-instruct's difficulty object")
    out = frame.select("__oi_row", *[c for c in full.columns if c != "difficulty"])
    if not keep.any():
        return out.drop("__oi_row").with_columns(pl.lit(None).alias("difficulty")), notes
    found, prior = difficulty(k, n, [str(x) for x in ids.filter(pl.Series(keep)).to_list()])
    notes.append(f"Beta prior ({prior.source}): alpha {prior.alpha:.6g}, beta {prior.beta:.6g}")
    values = pl.DataFrame({"__oi_row": frame["__oi_row"].filter(pl.Series(keep)), **found})
    values = values.select("__oi_row", pl.struct(*FIELDS).alias("difficulty"))
    out = out.join(values, on="__oi_row", how="left", maintain_order="left").drop("__oi_row")
    return out, notes

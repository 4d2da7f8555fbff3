"""Group size: the smallest G at which each prompt reaches a target fidelity, and what a per-prompt schedule saves.

Fidelity is the share of the large-group update that a group of G answers realises (docs/theory.md §3–4):
GRPO ``φ(G, p) = E[σ](p, G) / sqrt(p (1 − p))`` (times ``sqrt((G − 1)/G)`` with ``std="bessel"``), Dr. GRPO
``1 − 1/G`` at every p. A prompt's group size is the smallest integer G ≥ ``min_G`` with ``φ(G, p) ≥ φ*``
(and, with ``max_silent``, ``P_silent(p, G) ≤ S``: the larger of the two answers). A prompt is
*unreachable* when p̂ ∈ {0, 1} (no finite G gives it a signal) or when its answer exceeds ``max_G``; it is
counted, never given a number.

Columns of the summary, in order: [--by columns], ``segment``, ``p_lo``, ``p_hi``, ``prompts``,
``unreachable``, ``g_min``, ``g_median``, ``g_p90``, ``g_max``, ``mean_rollouts_schedule``,
``uniform_g_needed``, ``savings``, ``share_at_target_uniform``.

- ``segment`` is ``all`` (p_lo 0, p_hi 1) and then ``bin`` (``p_lo ≤ p < p_hi``, the last bin closed; every
  bin appears, an empty one with ``prompts`` 0 and nulls), per ``--by`` group.
- ``prompts`` and ``unreachable`` are summed weights (prompt counts without ``--weight-col``), of the
  histogram's dtype (whole numbers unless the weights are fractional).
- ``g_min``, ``g_max`` and the weighted percentiles are over the segment's reachable prompts, each weighted
  by its ``prompts``: the q-percentile is the smallest G whose weighted CDF ``Σ_{G_i ≤ G} w_i / Σ w_i`` is
  ≥ q (``g_median``: q = 0.5, ``g_p90``: q = 0.9). All are null when no prompt of the segment is reachable.
- ``mean_rollouts_schedule`` is the weighted mean G over reachable prompts: rollouts per prompt under the
  per-prompt schedule. ``uniform_g_needed`` is the smallest uniform G that brings every reachable prompt
  to the target; fidelity rises with G, so it is ``g_max``. ``savings`` = ``uniform_g_needed`` /
  ``mean_rollouts_schedule`` (uniform rollouts ÷ schedule rollouts).
- ``share_at_target_uniform`` is the weighted share of reachable prompts that the uniform G of ``uniform``
  (``--uniform``) already brings to the target, with the silent constraint if given.
- With ``law`` (``--law``) two more columns follow: ``g_median_law`` and ``g_p90_law``, the same weighted
  percentiles of the closed-form law over the same reachable prompts.

Per-prompt columns: [--by columns], ``id``, ``p``, ``group_size`` (null when unreachable),
[``group_size_law``], ``fidelity_at_group_size``, ``silent_at_group_size`` (both null when unreachable),
``reachable``. ``group_size_law`` is ``⌈1/(8 ε p (1 − p))⌉`` with ε = 1 − φ* (rounded *up*, after a
1e-9 relative allowance so that the binary rounding of 1 − 0.9 does not turn 5 into 6); null at
p ∈ {0, 1}. It is the population-std law of the paper, also when ``std="bessel"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from sigmatool import kernels
from sigmatool.aggregate import all_bins, bin_columns
from sigmatool.errors import UsageError
from sigmatool.load import Dataset, per_prompt_frame

OBJECTIVES = ("grpo", "drgrpo")
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

DEFAULT_BINS = 10
MAX_KERNEL_G = 2**31
COLUMNS = (
    "segment",
    "p_lo",
    "p_hi",
    "prompts",
    "unreachable",
    "g_min",
    "g_median",
    "g_p90",
    "g_max",
    "mean_rollouts_schedule",
    "uniform_g_needed",
    "savings",
    "share_at_target_uniform",
)
LAW_COLUMNS = ("g_median_law", "g_p90_law")
# Column headers of the table view (data formats keep the snake_case names).
LABELS = {
    "unreachable": "unreach-\nable",
    "g_median": "G\nmedian",
    "g_p90": "G\np90",
    "g_min": "G\nmin",
    "g_max": "G\nmax",
    "mean_rollouts_schedule": "mean G\nschedule",
    "uniform_g_needed": "uniform G\nneeded",
    "savings": "savings\n×",
    "share_at_target_uniform": "at target\nuniform G",
    "g_median_law": "law G\nmedian",
    "g_p90_law": "law G\np90",
}
# The law's ceiling forgives this relative excess over an integer (1/(8·(1 − 0.9)·0.25) = 5.000000000000001).
LAW_ALLOWANCE = 1e-9
# Beyond this, float64 no longer holds every integer: the law's value is reported as null.
LAW_MAX = 2.0**53
# Distinct values whose q = min(p, 1 − p) lies within this relative distance of a point where the answer
# changes are checked against the kernel one by one, so rounding cannot break minimality.
TIE_WINDOW = 1e-9
# A fidelity this close to the target (relative) is decided by a one-value kernel call (see _meets).
TIE_FIDELITY = 1e-12
# Weighted CDFs are compared with this relative allowance, so weights such as 0.1 sum to a clean quantile.
CDF_ALLOWANCE = 1e-12


@dataclass(frozen=True)
class GroupSizeOptions:
    """The target and the rules: fidelity φ*, objective, std convention, G range, silent cap, uniform G."""

    target: float = 0.9
    objective: str = "grpo"
    std: str = "population"
    min_size: int = 2
    max_size: int = 4096
    max_silent: float | None = None
    uniform: int = 8
    law: bool = False

    def __post_init__(self) -> None:
        if not 0.0 < self.target < 1.0:
            raise UsageError(f"--fidelity must lie strictly between 0 and 1, not {self.target:g}")
        if self.objective not in OBJECTIVES:
            raise UsageError(f"--objective must be grpo or drgrpo, not {self.objective!r}")
        if self.std not in kernels.STD_CONVENTIONS:
            raise UsageError(f"--std must be population or bessel, not {self.std!r}")
        if self.objective == "drgrpo" and self.std == "bessel":
            raise UsageError(
                "--std bessel applies to --objective grpo only: Dr. GRPO does not divide by the std"
            )
        if self.objective == "drgrpo" and self.law:
            raise UsageError(
                "--law is GRPO's closed form; with --objective drgrpo the exact answer ⌈1/ε⌉ is closed-form"
            )
        if self.min_size < 1:
            raise UsageError(f"--min-G must be at least 1, not {self.min_size}")
        if not self.min_size <= self.max_size <= MAX_KERNEL_G:
            raise UsageError(
                f"--max-G must lie between --min-G ({self.min_size}) and {MAX_KERNEL_G}, not {self.max_size}"
            )
        if self.max_silent is not None and not 0.0 < self.max_silent <= 1.0:
            raise UsageError(f"--max-silent must lie in (0, 1], not {self.max_silent:g}")
        if self.uniform < 1:
            raise UsageError(f"--uniform must be at least 1, not {self.uniform}")


# --------------------------------------------------------------------------------------------- numpy level


def _meets(p: FloatArray, G: IntArray, target: float, std: str) -> NDArray[np.bool_]:
    """φ(G, p) ≥ φ* for 1-D p and G, as a one-value call of ``kernels.fidelity`` decides it.

    The kernel's last bit can depend on the other values of its batch (their padding changes the order of
    the sum), so a value within TIE_FIDELITY of the target is evaluated again on its own: every decision is
    then a fixed function of (p, G), and agrees with ``kernels.fidelity(p, G) >= target``.
    """
    value = kernels.fidelity(p, G, std=std)
    for i in np.flatnonzero(np.abs(value - target) <= TIE_FIDELITY * target):
        value[i] = kernels.fidelity(p[i], G[i], std=std)
    return np.asarray(value >= target, dtype=np.bool_)


def _reaches(p: FloatArray, G: IntArray, target: float, std: str, max_G: int) -> NDArray[np.bool_]:
    """φ(G, p) ≥ φ*, False for G outside [1, max_G]."""
    inside = (G >= 1) & (G <= max_G)
    return np.asarray(inside & _meets(p, np.clip(G, 1, max_G), target, std), dtype=np.bool_)


def _settle(p: FloatArray, G: IntArray, target: float, std: str, min_G: int, max_G: int) -> IntArray:
    """Walk each G to the exact answer: φ(G) ≥ φ* and (G = min_G or φ(G − 1) < φ*); max_G + 1 if none."""
    G = G.copy()
    while True:
        up = ~_reaches(p, G, target, std, max_G) & (G <= max_G)
        down = ~up & (G > min_G) & _reaches(p, G - 1, target, std, max_G)
        if not (up.any() or down.any()):
            return G
        G = G + up.astype(np.int64) - down.astype(np.int64)


def _split(ps: FloatArray, lo: IntArray, hi: IntArray, G: IntArray, target: float, std: str) -> IntArray:
    """Per segment [lo, hi) of ``ps`` (sorted so that φ rises along it): first index with φ(G) ≥ φ*."""
    lo, hi = lo.copy(), hi.copy()
    while (active := lo < hi).any():
        at = np.flatnonzero(active)
        mid = (lo[at] + hi[at]) // 2
        ok = _meets(ps[mid], G[at], target, std)
        hi[at] = np.where(ok, mid, hi[at])
        lo[at] = np.where(ok, lo[at], mid + 1)
    return lo


def _grpo_group_sizes(p: FloatArray, target: float, std: str, min_G: int, max_G: int) -> IntArray:
    """Smallest G in [min_G, max_G] with φ(G, p) ≥ φ* for distinct p in (0, 1); max_G + 1 where none.

    For fixed G, φ is symmetric in p ↔ 1 − p and rises with q = min(p, 1 − p); it also rises with G. So along
    the values sorted by q the answer never increases, and a divide and conquer over G finds it: a node
    holds a run of sorted values whose answers lie in [G_lo, G_hi]; a bisection over the run finds where
    φ(G_mid) ≥ φ* starts, which splits it into [G_lo, G_mid] and [G_mid + 1, G_hi]. Each level is one
    vectorised bisection; there are log2(max_G) levels, and the kernel runs once per probe. Values whose q
    lies within TIE_WINDOW of a change of the answer, or of either end, are then checked (:func:`_settle`).
    """
    n = p.size
    q = np.minimum(p, 1.0 - p)
    order = np.argsort(q, kind="stable")
    ps, qs = p[order], q[order]
    answer = np.empty(n, dtype=np.int64)
    lo = np.array([0], dtype=np.int64)
    hi = np.array([n], dtype=np.int64)
    g_lo = np.array([min_G], dtype=np.int64)
    g_hi = np.array([max_G + 1], dtype=np.int64)
    while lo.size:
        done = g_lo == g_hi
        for a, b, g in zip(lo[done], hi[done], g_lo[done], strict=True):
            answer[a:b] = g
        lo, hi, g_lo, g_hi = lo[~done], hi[~done], g_lo[~done], g_hi[~done]
        if not lo.size:
            break
        g_mid = (g_lo + g_hi) // 2
        cut = _split(ps, lo, hi, g_mid, target, std)
        # [cut, hi) reach the target at g_mid: answers in [g_lo, g_mid]; [lo, cut) need more.
        lo, hi = np.concatenate([cut, lo]), np.concatenate([hi, cut])
        g_lo, g_hi = np.concatenate([g_lo, g_mid + 1]), np.concatenate([g_mid, g_hi])
        keep = lo < hi
        lo, hi, g_lo, g_hi = lo[keep], hi[keep], g_lo[keep], g_hi[keep]
    # Kernel rounding can only mislead the inference from probed to unprobed values within ~1e-13 of a
    # threshold q_G; such a threshold lies next to a change of the answer or beyond either end of the run.
    changes = np.flatnonzero(answer[1:] != answer[:-1]) + 1
    edges = np.concatenate([qs[[0, n - 1]], qs[changes], qs[changes - 1]])
    first = np.searchsorted(qs, edges * (1.0 - TIE_WINDOW), side="left")
    last = np.searchsorted(qs, edges * (1.0 + TIE_WINDOW), side="right")
    near = np.unique(np.concatenate([np.arange(a, b) for a, b in zip(first, last, strict=True)]))
    answer[near] = _settle(ps[near], answer[near], target, std, min_G, max_G)
    out = np.empty(n, dtype=np.int64)
    out[order] = answer
    return out


def _drgrpo_group_size(target: float, min_G: int, max_G: int) -> int:
    """Smallest G in [min_G, max_G] with 1 − 1/G ≥ φ*, by the kernel; max_G + 1 if none."""
    G = max(min_G, min(max_G + 1, math.ceil(1.0 / (1.0 - target))))
    while G <= max_G and float(kernels.drgrpo_fidelity(G)) < target:
        G += 1
    while G > min_G and float(kernels.drgrpo_fidelity(G - 1)) >= target:
        G -= 1
    return G


def group_sizes(
    p: ArrayLike,
    target: float,
    *,
    objective: str = "grpo",
    std: str = "population",
    min_G: int = 2,
    max_G: int = 4096,
    max_silent: float | None = None,
) -> FloatArray:
    """Smallest integer G in [min_G, max_G] with fidelity ``φ(G, p) ≥ target`` (and ``P_silent ≤ max_silent``).

    NaN where no such G exists: p ∈ {0, 1}, an answer above max_G, or p outside [0, 1]. Each distinct p is
    solved once. Returns float64 (integer-valued). docs/theory.md §4: p = 0.5 needs 7, 11, 51 at φ* = 0.90,
    0.95, 0.99.

    >>> group_sizes([0.5, 0.3, 0.1, 0.05, 0.0], 0.9).tolist()
    [7.0, 9.0, 22.0, 42.0, nan]
    """
    GroupSizeOptions(target, objective, std, min_G, max_G, max_silent)
    p_arr = np.asarray(p, dtype=np.float64)
    values, inverse = np.unique(p_arr.reshape(-1), return_inverse=True)
    interior = (values > 0.0) & (values < 1.0)
    sizes = np.full(values.shape, max_G + 1, dtype=np.int64)
    if objective == "drgrpo":
        sizes[interior] = _drgrpo_group_size(target, min_G, max_G)
    elif interior.any():
        sizes[interior] = _grpo_group_sizes(values[interior], target, std, min_G, max_G)
    if max_silent is not None and interior.any():
        silent = kernels.silent_group_size(values[interior], max_silent, max_G, min_G)
        sizes[interior] = np.maximum(sizes[interior], np.nan_to_num(silent, nan=max_G + 1).astype(np.int64))
    out = np.where(interior & (sizes <= max_G), sizes.astype(np.float64), np.nan)
    return np.asarray(out[inverse].reshape(p_arr.shape), dtype=np.float64)


def law_group_sizes(p: ArrayLike, target: float) -> FloatArray:
    """The closed-form law rounded up: ``⌈1/(8 ε p (1 − p))⌉``, ε = 1 − target; NaN at p ∈ {0, 1}.

    >>> law_group_sizes([0.5, 0.3, 0.05], 0.99).tolist()
    [50.0, 60.0, 264.0]
    """
    law = kernels.group_size_law(p, target)
    with np.errstate(invalid="ignore"):
        rounded = np.ceil(law * (1.0 - LAW_ALLOWANCE))
    return np.asarray(np.where(np.isfinite(law) & (law < LAW_MAX), rounded, np.nan), dtype=np.float64)


def fidelity_at(p: ArrayLike, G: ArrayLike, objective: str = "grpo", std: str = "population") -> FloatArray:
    """The objective's fidelity at G: ``kernels.fidelity`` (GRPO) or ``kernels.drgrpo_fidelity`` (Dr. GRPO)."""
    p_arr, G_arr = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(G, dtype=np.float64))
    out = np.full(p_arr.shape, np.nan)
    ok = np.isfinite(G_arr) & (p_arr > 0.0) & (p_arr < 1.0)
    if objective == "drgrpo":
        out[ok] = kernels.drgrpo_fidelity(G_arr[ok])
    elif ok.any():
        out[ok] = kernels.fidelity(p_arr[ok], G_arr[ok], std=std)
    return out


# --------------------------------------------------------------------------------------------- frames


def group_size_table(
    values: pl.DataFrame, options: GroupSizeOptions, *, detail: bool = False
) -> pl.DataFrame:
    """Per distinct ``p`` of ``values``: ``group_size`` (Int64, null if unreachable), ``reachable``,
    ``at_uniform``, with ``options.law`` also ``group_size_law``; with ``detail`` also
    ``fidelity_at_group_size`` and ``silent_at_group_size``.
    """
    o = options
    distinct = values.select(pl.col("p").cast(pl.Float64)).unique().sort("p")
    p = distinct["p"].to_numpy()
    G = group_sizes(
        p,
        o.target,
        objective=o.objective,
        std=o.std,
        min_G=o.min_size,
        max_G=o.max_size,
        max_silent=o.max_silent,
    )
    reachable = np.isfinite(G)
    if o.uniform >= o.min_size:
        # φ and P_silent are monotone in G, so the uniform G reaches the target exactly when G ≤ uniform.
        at_uniform = reachable & (G <= o.uniform)
    else:
        fine = fidelity_at(p, o.uniform, o.objective, o.std) >= o.target
        if o.max_silent is not None:
            fine &= kernels.silent_probability(p, o.uniform) <= o.max_silent
        at_uniform = reachable & fine
    columns = [
        _integers("group_size", G),
        pl.Series("reachable", reachable),
        pl.Series("at_uniform", at_uniform),
    ]
    if o.law:
        columns.append(_integers("group_size_law", law_group_sizes(p, o.target)))
    if detail:
        columns.append(
            pl.Series("fidelity_at_group_size", fidelity_at(p, G, o.objective, o.std)).fill_nan(None)
        )
        silent = np.where(reachable, kernels.silent_probability(p, np.where(reachable, G, 1)), np.nan)
        columns.append(pl.Series("silent_at_group_size", silent).fill_nan(None))
    return distinct.with_columns(columns)


def _integers(name: str, values: FloatArray) -> pl.Series:
    """Integer-valued floats as an Int64 column, NaN as null."""
    series: pl.Series = pl.Series(name, values, dtype=pl.Float64).fill_nan(None).cast(pl.Int64)
    return series


def _weighted_quantile(column: str, q: float) -> pl.Expr:
    """Smallest value of ``column`` over reachable rows whose weighted CDF is ≥ q (rows sorted by it)."""
    reach = pl.col("reachable")
    cdf = pl.col("prompts").filter(reach).cum_sum()
    total = pl.col("prompts").filter(reach).sum()
    return pl.col(column).filter(reach).filter(cdf >= q * total * (1.0 - CDF_ALLOWANCE)).first()


def _aggregations(law: bool) -> list[pl.Expr]:
    reach = pl.col("reachable")
    w = pl.col("prompts").filter(reach)
    g = pl.col("group_size").filter(reach)
    total = w.sum()
    aggs = [
        pl.col("prompts").sum(),
        pl.col("prompts").filter(~reach).sum().alias("unreachable"),
        g.min().alias("g_min"),
        _weighted_quantile("group_size", 0.5).alias("g_median"),
        _weighted_quantile("group_size", 0.9).alias("g_p90"),
        g.max().alias("g_max"),
        pl.when(total > 0).then((g * w).sum() / total).alias("mean_rollouts_schedule"),
        g.max().alias("uniform_g_needed"),
        pl.when(total > 0)
        .then(pl.col("prompts").filter(reach & pl.col("at_uniform")).sum() / total)
        .alias("share_at_target_uniform"),
    ]
    if law:
        aggs += [
            _weighted_quantile("group_size_law", 0.5).alias("g_median_law"),
            _weighted_quantile("group_size_law", 0.9).alias("g_p90_law"),
        ]
    return aggs


def summary_columns(options: GroupSizeOptions) -> list[str]:
    """The summary's columns after the ``--by`` columns."""
    return [*COLUMNS, *(LAW_COLUMNS if options.law else ())]


def summarize(
    hist: pl.DataFrame,
    by: Sequence[str],
    options: GroupSizeOptions,
    *,
    bins: int | None = DEFAULT_BINS,
    table: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Group-size summary: an ``all`` row and (unless ``bins`` is None or 0) one row per bin of p, per
    ``--by`` group. ``table`` is :func:`group_size_table` of ``hist`` if already computed.
    """
    table = group_size_table(hist, options) if table is None else table
    law = ["group_size_law"] if options.law else []
    rows = (
        hist.select([*by, "p", "prompts"])
        .join(table.select("p", "group_size", *law, "reachable", "at_uniform"), on="p", how="left")
        # The exact G and the law both fall as min(p, 1 − p) rises, so this order sorts each of them for the
        # quantiles; fixed, it also makes the float sums the same for every form of the same data.
        .sort(
            [*by, pl.min_horizontal("p", 1.0 - pl.col("p")), "p"],
            descending=[*[False] * len(by), True, False],
            maintain_order=True,
        )
    )
    aggs = _aggregations(options.law)
    overall = rows.group_by(list(by), maintain_order=True).agg(aggs) if by else rows.select(aggs)
    overall = overall.with_columns(
        pl.lit("all").alias("segment"),
        pl.lit(0.0).alias("p_lo"),
        pl.lit(1.0).alias("p_hi"),
        pl.lit(-1, dtype=pl.Int64).alias("bin"),
    )
    parts = [overall]
    if bins:
        binned = rows.with_columns(bin_columns(bins)).group_by([*by, "bin"], maintain_order=True).agg(aggs)
        grid = all_bins(bins, overall.select(by) if by else None)
        binned = grid.join(binned, on=[*by, "bin"], how="left", maintain_order="left").with_columns(
            pl.col("prompts").fill_null(0),
            pl.col("unreachable").fill_null(0),
            pl.lit("bin").alias("segment"),
        )
        parts.append(binned)
    names = [*by, "bin", "segment", "p_lo", "p_hi", *(agg.meta.output_name() for agg in aggs)]
    out = pl.concat([part.select(names) for part in parts], how="vertical_relaxed")
    out = out.with_columns(
        (pl.col("uniform_g_needed") / pl.col("mean_rollouts_schedule")).alias("savings"),
        # Counts stay whole numbers when the input's are (no --weight-col, or integer weights).
        pl.col("prompts", "unreachable").cast(hist.schema["prompts"]),
    )
    return out.sort([*by, "bin"], maintain_order=True).select([*by, *summary_columns(options)])


def per_prompt(ds: Dataset, table: pl.DataFrame, options: GroupSizeOptions) -> pl.LazyFrame:
    """One row per input prompt, streamed: the distinct-value ``table`` (with ``detail``) joined on p."""
    detail = [*(["group_size_law"] if options.law else []), "fidelity_at_group_size", "silent_at_group_size"]
    values = table.select("p", "group_size", *detail, "reachable").lazy()
    rows = per_prompt_frame(ds).join(values, on="p", how="left", maintain_order="left")
    return rows.select([*ds.by, "id", "p", "group_size", *detail, "reachable"])


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def headline(hist: pl.DataFrame, table: pl.DataFrame, options: GroupSizeOptions) -> str:
    """One sentence for the table view, over all prompts (whatever the ``--by`` grouping)."""
    row = summarize(hist, (), options, bins=None, table=table).row(0, named=True)
    total = float(row["prompts"])
    always = float(hist.filter(pl.col("p").is_in([0.0, 1.0]))["prompts"].sum())
    beyond = float(row["unreachable"]) - always
    lead = f"To reach {100 * options.target:g}% fidelity"
    if options.max_silent is not None:
        lead += f" with at most {100 * options.max_silent:g}% silent groups"
    why = ["always or never solved"] if always > 0 else []
    if beyond > 0:
        why.append(f"{_percent(beyond / total)} need G > {options.max_size}")
        if always > 0:
            why[0] = f"{_percent(always / total)} always or never solved"
    unreachable = f"{_percent(float(row['unreachable']) / total)} of prompts are unreachable"
    if why:
        unreachable += f" ({', '.join(why)})"
    if row["g_median"] is None:
        return f"{lead}: no prompt is reachable with G ≤ {options.max_size}; {unreachable}."
    if row["g_min"] == row["g_max"]:
        schedule = f"every reachable prompt needs the same G = {row['g_max']}, so a schedule saves nothing"
    else:
        schedule = (
            f"a per-prompt schedule needs {row['savings']:.1f}× fewer rollouts than the uniform "
            f"G = {row['uniform_g_needed']}"
        )
    return (
        f"{lead}: median G = {row['g_median']}, 90th percentile G = {row['g_p90']}; {unreachable}; "
        f"{schedule}; a uniform G = {options.uniform} brings {_percent(row['share_at_target_uniform'])} of the "
        "reachable prompts there."
    )


def footer(options: GroupSizeOptions) -> list[str]:
    """Lines under the table view: what the columns mean."""
    fid = "1 − 1/G (Dr. GRPO)" if options.objective == "drgrpo" else f"E[σ]/sqrt(p(1−p)), {options.std} std"
    return [
        f"fidelity: {fid}; G from {options.min_size} to {options.max_size} (--min-G, --max-G)",
        "g_median, g_p90: prompt-weighted percentiles over reachable prompts; uniform_g_needed = g_max",
        "savings: uniform_g_needed ÷ mean_rollouts_schedule; "
        f"share_at_target_uniform: reachable prompts already at the target with G = {options.uniform} (--uniform)",
    ]

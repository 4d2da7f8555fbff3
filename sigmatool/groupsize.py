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

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from sigmatool import kernels
from sigmatool.load import Dataset, per_prompt_frame
from sigmatool.options import GroupSizeOptions
from sigmatool.render import View
from sigmatool.segments import all_bins, with_bins

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

DEFAULT_BINS = 10
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
# Thresholds q*(G) are tabulated up to this G; the rare values that need more are walked up from there.
TABLE_MAX_G = 8192
# A value whose q lies within this relative distance of a threshold is checked by the kernel itself.
THRESHOLD_CHECK = 1e-9
# Kernel calls per threshold (the root finder's iterations, about): to weigh a table against bisection.
ROOT_STEPS = 12
# Weighted CDFs are compared with this relative allowance, so weights such as 0.1 sum to a clean quantile.
CDF_ALLOWANCE = 1e-12


# --------------------------------------------------------------------------------------------- numpy level


def _reaches(p: FloatArray, G: IntArray, target: float, std: str) -> BoolArray:
    """φ(G, p) ≥ φ* as the kernel evaluates it, for 1-D p and G."""
    return np.asarray(kernels.fidelity(p, G, std=std) >= target, dtype=np.bool_)


def _settle(p: FloatArray, G: IntArray, target: float, std: str, min_G: int, max_G: int) -> IntArray:
    """Walk each G to the exact answer: φ(G) ≥ φ* and (G = min_G or φ(G − 1) < φ*); max_G + 1 if none."""
    G = G.copy()
    while True:
        inside = G <= max_G
        up = inside & ~_reaches(p, np.minimum(G, max_G), target, std)
        lower = np.maximum(G - 1, 1)
        down = ~up & (G > min_G) & (G - 1 <= max_G) & _reaches(p, np.minimum(lower, max_G), target, std)
        if not (up.any() or down.any()):
            return G
        G = G + up.astype(np.int64) - down.astype(np.int64)


def _thresholds(G: IntArray, target: float, std: str) -> FloatArray:
    """q*(G): the smallest q in (0, ½] with φ(G, q) ≥ φ*, to 1e-13 relative; inf where φ(G, ½) < φ*.

    φ(G, ·) rises on (0, ½], so q*(G) is the root of φ(G, q) − φ*, bracketed by the law's q (where the
    large-G expansion, which overstates φ, reaches φ*: the exact φ is still below) and ½. scipy's
    vectorised bracketing solver finds all of them at once.
    """
    from scipy.optimize.elementwise import find_root

    out = np.full(G.shape, np.inf)
    top = kernels.fidelity(0.5, G, std=std) >= target
    g = G[top].astype(np.float64)
    if not g.size:
        return out
    # The law: 8 ε G q (1 − q) = 1; where it has no root below ½, start from a small q and halve below.
    disc = 1.0 - 0.5 / ((1.0 - target) * g)
    lo = np.where(disc > 0, (1.0 - np.sqrt(np.maximum(disc, 0.0))) / 2.0, 0.25)
    while (reached := kernels.fidelity(lo, g, std=std) >= target).any():
        lo = np.where(reached, lo / 2.0, lo)

    def gap(q: FloatArray, size: FloatArray) -> FloatArray:
        return np.asarray(kernels.fidelity(q, size, std=std) - target, dtype=np.float64)

    bracket = (lo, np.full(g.shape, 0.5))
    result = find_root(gap, bracket, args=(g,), tolerances={"xrtol": 1e-13, "xatol": 0.0})
    out[top] = result.bracket[1]
    return out


def _grpo_group_sizes(p: FloatArray, target: float, std: str, min_G: int, max_G: int) -> IntArray:
    """Smallest G in [min_G, max_G] with φ(G, p) ≥ φ* for distinct p in (0, 1); max_G + 1 where none.

    φ rises with G, so each value's answer can be found by bisection over G: exact by construction, and the
    cheaper way for a few distinct values (k-of-n data). For many values, φ also rises with
    q = min(p, 1 − p) at each G, so a threshold per G, q*(G), decides every value at once: the answer is
    the smallest G whose threshold lies at or below q (a ``searchsorted`` over the thresholds' running
    minimum). Thresholds are tabulated only up to the answer of the hardest value (at most
    ``TABLE_MAX_G``; beyond, bisection). The kernel itself then checks each value whose q lies within
    ``THRESHOLD_CHECK`` of the thresholds around it, so every answer is the smallest G that the kernel says
    reaches φ*.
    """
    q = np.minimum(p, 1.0 - p)
    hardest = p[np.argmin(q)]
    top = min(int(_bisect(np.array([hardest]), min_G, max_G, target, std)[0]), max_G, TABLE_MAX_G)
    span = max(top - min_G + 1, 1)
    if p.size * math.log2(max_G - min_G + 2) <= span * ROOT_STEPS:
        return _bisect(p, min_G, max_G, target, std)
    sizes = np.arange(min_G, top + 1, dtype=np.int64)
    reach = np.minimum.accumulate(_thresholds(sizes, target, std))
    # reach is non-increasing; the answer is the first G with reach ≤ q.
    index = sizes.size - np.searchsorted(reach[::-1], q, side="right")
    answer = (min_G + index).astype(np.int64)
    below = np.where(index > 0, reach[np.maximum(index - 1, 0)], np.inf)
    at = np.where(index < sizes.size, reach[np.minimum(index, sizes.size - 1)], 0.0)
    near = (np.abs(q - at) <= THRESHOLD_CHECK * q) | (np.abs(q - below) <= THRESHOLD_CHECK * q)
    if near.any():
        answer[near] = _settle(p[near], answer[near], target, std, min_G, max_G)
    beyond = answer > top
    if beyond.any() and top < max_G:
        answer[beyond] = _bisect(p[beyond], top + 1, max_G, target, std)
    return answer


def _bisect(p: FloatArray, lo_G: int, hi_G: int, target: float, std: str) -> IntArray:
    """Smallest G in [lo_G, hi_G] with φ(G, p) ≥ φ* (φ rises with G); hi_G + 1 where none."""
    lo = np.full(p.shape, lo_G, dtype=np.int64)
    hi = np.full(p.shape, hi_G + 1, dtype=np.int64)
    while (active := lo < hi).any():
        mid = (lo + hi) // 2
        ok = active & (mid <= hi_G) & _reaches(p, np.minimum(mid, hi_G), target, std)
        hi = np.where(ok, mid, hi)
        lo = np.where(active & ~ok, mid + 1, lo)
    return lo


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
        binned = with_bins(rows, bins).group_by([*by, "bin"], maintain_order=True).agg(aggs)
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
    """One row per input prompt, streamed: the distinct-value ``table`` (with ``detail``) joined on p̂."""
    detail = [*(["group_size_law"] if options.law else []), "fidelity_at_group_size", "silent_at_group_size"]
    values = table.select(pl.col("p").alias("__p"), "group_size", *detail, "reachable").lazy()
    rows = per_prompt_frame(ds)
    if ds.has_counts:
        rows = rows.with_columns((pl.col("k") / pl.col("n")).alias("__p"))
    rows = rows.join(values, on="__p", how="left", maintain_order="left")
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


def view(hist: pl.DataFrame, table: pl.DataFrame, options: GroupSizeOptions, by: Sequence[str]) -> View:
    """The table view: the headline over all prompts, short headers, what the columns mean."""
    return View(
        headline=headline(hist, table, options),
        percent=("share_at_target_uniform",),
        labels=LABELS,
        keys=list(by),
        footer=footer(options),
    )

"""Gradient budget: the share of GRPO's and Dr. GRPO's update that each difficulty segment receives.

Per prompt, GRPO's expected update weight is ``E[σ](p, G)`` and Dr. GRPO's is ``E[σ²](p, G)`` (docs/theory.md §3,
§5); at ``G = inf`` the limits ``sqrt(p (1 − p))`` and ``p (1 − p)``. A segment's share is
``Σ_segment prompts·w / Σ_all prompts·w`` within its ``--by`` group and G. Prompts with p̂ ∈ {0, 1} weigh 0
but are counted in ``prompts``. DAPO's shares equal GRPO's (silent groups weigh 0 in both), so they are not
a column.

Columns of the summary, in order: [--by columns], ``G``, ``segment``, ``p_lo``, ``p_hi``, ``prompts``,
``prompt_share``, ``grpo_share``, ``drgrpo_share``, ``grpo_over_drgrpo``, ``silent_rate``.

- ``G`` is a string label, ``"8"`` or ``"inf"``, in every format (a float column would turn ∞ into null);
  CSV readers usually parse it back as a number, ``inf`` as infinity.
- ``segment`` is ``bin`` (``p_lo ≤ p < p_hi``, the last bin closed; every bin appears, empty ones with
  ``prompts`` 0), ``extreme`` (``p < p_lo`` or ``p > p_hi``, i.e. ``p_lo = x`` and ``p_hi = 1 − x``),
  ``medium`` (``p_lo ≤ p ≤ p_hi``) or ``all`` (0 to 1), in that order within each ``--by`` group and G.
- ``grpo_over_drgrpo`` is ``grpo_share / drgrpo_share``: null when Dr. GRPO's share is 0.
- ``silent_rate`` is the prompt-weighted mean of ``P_silent(p, G)`` over the segment; null at ``G = inf``
  and for an empty segment. Shares are null when no prompt of the group carries any weight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from sigmatool import kernels
from sigmatool.aggregate import g_label
from sigmatool.errors import UsageError
from sigmatool.silent import check_unbiased, value_keys

COLUMNS = (
    "G",
    "segment",
    "p_lo",
    "p_hi",
    "prompts",
    "prompt_share",
    "grpo_share",
    "drgrpo_share",
    "grpo_over_drgrpo",
    "silent_rate",
)
DEFAULT_BINS = 10
DEFAULT_EXTREME = 0.1
DEFAULT_MEDIUM = (0.4, 0.6)


@dataclass(frozen=True)
class Segments:
    """How p is cut: ``bins`` equal-width bins, extreme = p < x or p > 1 − x, medium = lo ≤ p ≤ hi."""

    bins: int = DEFAULT_BINS
    extreme: float = DEFAULT_EXTREME
    medium: tuple[float, float] = DEFAULT_MEDIUM

    def __post_init__(self) -> None:
        if self.bins < 1:
            raise UsageError(f"--bins: give at least 1 bin, not {self.bins}")
        if not 0.0 < self.extreme < 0.5:
            raise UsageError(
                f"--extreme: give x with 0 < x < 0.5 (extreme = p < x or p > 1 − x), not {self.extreme:g}"
            )
        lo, hi = self.medium
        if not 0.0 <= lo < hi <= 1.0:
            raise UsageError(f"--medium: give lo,hi with 0 ≤ lo < hi ≤ 1, not {lo:g},{hi:g}")


def parse_medium(text: str) -> tuple[float, float]:
    """``"0.4,0.6"`` → ``(0.4, 0.6)``; the range itself is checked by :class:`Segments`."""
    parts = [part.strip() for part in text.split(",")]
    try:
        if len(parts) != 2:
            raise ValueError
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise UsageError(f"--medium: give two numbers lo,hi such as 0.4,0.6, not {text!r}") from None
    return lo, hi


def check_sizes(sizes: Sequence[float], estimator: str = "plugin") -> None:
    """Group sizes the budget can use: G ≥ 2, and no ``inf`` with the unbiased estimator."""
    if 1.0 in sizes:
        raise UsageError("--G 1: a group of one answer always has σ = 0, so there is no budget; use G ≥ 2")
    if estimator == "unbiased" and math.inf in sizes:
        raise UsageError(
            "--G inf: the large-group limit has no unbiased estimate from n logged samples; "
            "use --estimator plugin, or a G no larger than n (G = n gives the limit's plug-in value)"
        )


def budget_kernels(values: pl.DataFrame, sizes: Sequence[float], estimator: str) -> pl.DataFrame:
    """Per distinct value and G: GRPO weight ``w_grpo``, Dr. GRPO weight ``w_drgrpo`` and ``p_silent``.

    ``G`` is a Float64 column here (∞ for the large-group limits, where ``p_silent`` is null).
    """
    keys = value_keys(estimator)
    distinct = values.select(keys).unique(maintain_order=True)
    parts = []
    for G in sizes:
        if math.isinf(G):
            p = distinct["p"].to_numpy()
            grpo, drgrpo = kernels.grpo_weight_limit(p), kernels.drgrpo_weight_limit(p)
            silent = np.full(distinct.height, np.nan)
        elif estimator == "unbiased":
            k, n = distinct["k"].to_numpy(), distinct["n"].to_numpy()
            grpo = kernels.expected_sigma_unbiased(k, n, int(G))
            drgrpo = kernels.expected_sigma_squared_unbiased(k, n, int(G))
            silent = kernels.silent_probability_unbiased(k, n, int(G))
        else:
            p = distinct["p"].to_numpy()
            grpo, drgrpo = kernels.expected_sigma(p, int(G)), kernels.expected_sigma_squared(p, int(G))
            silent = kernels.silent_probability(p, int(G))
        parts.append(
            distinct.with_columns(
                pl.lit(G, dtype=pl.Float64).alias("G"),
                pl.Series("w_grpo", np.asarray(grpo, dtype=np.float64)),
                pl.Series("w_drgrpo", np.asarray(drgrpo, dtype=np.float64)),
                pl.Series("p_silent", np.asarray(silent, dtype=np.float64)).fill_nan(None),
            )
        )
    return pl.concat(parts)


def _segment_masks(p: np.ndarray, seg: Segments) -> list[tuple[str, float, float, np.ndarray]]:
    """(segment, p_lo, p_hi, mask) in output order. Bins match ``aggregate.bin_columns``."""
    index = np.clip(np.floor(p * seg.bins), 0, seg.bins - 1)
    out = [("bin", b / seg.bins, (b + 1) / seg.bins, index == b) for b in range(seg.bins)]
    x, (lo, hi) = seg.extreme, seg.medium
    out.append(("extreme", x, 1.0 - x, (p < x) | (p > 1.0 - x)))
    out.append(("medium", lo, hi, (p >= lo) & (p <= hi)))
    out.append(("all", 0.0, 1.0, np.ones_like(p, dtype=bool)))
    return out


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def _group_rows(group: pl.DataFrame, seg: Segments) -> list[dict[str, object]]:
    """The segment rows of one (--by group, G); sums are exact (fsum) so that shares add up to 1."""
    p = group["p"].to_numpy()
    prompts = group["prompts"].to_numpy().astype(np.float64)
    # The kernels give p̂ ∈ {0, 1} a weight of exactly 0, so those prompts count in `prompts` only.
    grpo = prompts * group["w_grpo"].to_numpy()
    drgrpo = prompts * group["w_drgrpo"].to_numpy()
    silent = prompts * group["p_silent"].fill_null(np.nan).to_numpy()
    finite = not np.isnan(silent).all()
    total_prompts, total_grpo, total_drgrpo = math.fsum(prompts), math.fsum(grpo), math.fsum(drgrpo)
    rows: list[dict[str, object]] = []
    for name, lo, hi, mask in _segment_masks(p, seg):
        n = math.fsum(prompts[mask])
        grpo_share = _ratio(math.fsum(grpo[mask]), total_grpo)
        drgrpo_share = _ratio(math.fsum(drgrpo[mask]), total_drgrpo)
        both = grpo_share is not None and drgrpo_share is not None
        rows.append(
            {
                "segment": name,
                "p_lo": lo,
                "p_hi": hi,
                "prompts": n,
                "prompt_share": _ratio(n, total_prompts),
                "grpo_share": grpo_share,
                "drgrpo_share": drgrpo_share,
                "grpo_over_drgrpo": _ratio(grpo_share or 0.0, drgrpo_share or 0.0) if both else None,
                "silent_rate": _ratio(math.fsum(silent[mask]), n) if finite else None,
            }
        )
    return rows


def summarize(
    hist: pl.DataFrame,
    by: Sequence[str],
    sizes: Sequence[float],
    *,
    estimator: str = "plugin",
    segments: Segments | None = None,
    bins: int = DEFAULT_BINS,
    extreme: float = DEFAULT_EXTREME,
    medium: tuple[float, float] = DEFAULT_MEDIUM,
) -> pl.DataFrame:
    """Gradient-budget shares per ``--by`` group, G and segment (bins, extreme, medium, all).

    Segments come from ``segments`` if given, else from ``bins``, ``extreme`` and ``medium``.
    """
    seg = segments or Segments(bins, extreme, medium)
    check_sizes(sizes, estimator)
    check_unbiased(hist, sizes, estimator)
    keys = value_keys(estimator)
    table = budget_kernels(hist, sizes, estimator)
    rows = hist.select([*by, *keys, *(["p"] if "p" not in keys else []), "prompts"]).join(
        table, on=keys, how="left"
    )
    records: list[dict[str, object]] = []
    for G in sizes:
        at_G = rows.filter(pl.col("G") == G)
        groups = at_G.partition_by(list(by), as_dict=True, maintain_order=True) if by else {(): at_G}
        for key, group in groups.items():
            labels = dict(zip(by, key, strict=True))
            for row in _group_rows(group.sort("p"), seg):
                records.append({**labels, "__G": G, "G": g_label(G), **row})
    schema: dict[str, pl.DataType] = {b: hist.schema[b] for b in by}
    schema |= {"__G": pl.Float64(), "G": pl.String(), "segment": pl.String()}
    schema |= dict.fromkeys(COLUMNS[2:], pl.Float64())
    out = pl.DataFrame(records, schema=schema).with_row_index("__order")
    if hist.schema["prompts"].is_integer():
        out = out.with_columns(pl.col("prompts").cast(hist.schema["prompts"]))
    # As in silent: by --by values, then G; segments keep their fixed order.
    return out.sort([*by, "__G", "__order"], maintain_order=True).select([*by, *COLUMNS])


def headline(overall: pl.DataFrame) -> str:
    """One sentence from an overall (no --by) summary: the extreme prompts' share under each method."""
    parts = []
    extreme = overall.filter(pl.col("segment") == "extreme")
    for row in extreme.iter_rows(named=True):
        label = "∞" if row["G"] == "inf" else row["G"]
        grpo, dr, ratio = row["grpo_share"], row["drgrpo_share"], row["grpo_over_drgrpo"]
        if grpo is None or dr is None:
            parts.append(f"at G={label}, no prompt carries any gradient")
            continue
        times = f" (×{ratio:.2f})" if ratio is not None else ""
        if not parts:
            parts.append(
                f"At G={label}, GRPO gives {100 * grpo:.1f}% of its gradient to extreme prompts, "
                f"against {100 * dr:.1f}% for Dr. GRPO{times}"
            )
        else:
            parts.append(f"at G={label}, {100 * grpo:.1f}% against {100 * dr:.1f}%{times}")
    return "; ".join(parts) + "." if parts else ""


def notes(overall: pl.DataFrame, full: float = 1.0) -> list[str]:
    """Lines under the table view: what the segments are, DAPO, and what a full bar means."""
    extreme = overall.filter(pl.col("segment") == "extreme").row(0, named=True)
    medium = overall.filter(pl.col("segment") == "medium").row(0, named=True)
    return [
        f"extreme: p < {extreme['p_lo']:g} or p > {extreme['p_hi']:g}; medium: {medium['p_lo']:g} ≤ p ≤ "
        f"{medium['p_hi']:g}; prompts with p̂ = 0 or 1 weigh nothing but are counted",
        "DAPO: its shares equal GRPO's (silent groups weigh nothing in either); DAPO changes the cost, "
        "not the direction",
        f"bars: a full bar is a {100 * full:.1f}% share (the 'all' rows are drawn full)",
    ]


def bar_scale(summary: pl.DataFrame) -> float:
    """The share that fills a bar in the table view: the largest share of any segment but ``all``."""
    parts = summary.filter(pl.col("segment") != "all").select(pl.max_horizontal("grpo_share", "drgrpo_share"))
    top = parts.to_series().fill_null(0.0).max()
    return float(top) if isinstance(top, float) and top > 0 else 1.0

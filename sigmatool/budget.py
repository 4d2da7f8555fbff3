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
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain

import numpy as np
import polars as pl
from numpy.typing import NDArray

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

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Weights = tuple[FloatArray, FloatArray, FloatArray]

# Values per kernel call and rows per step of the sums: E[σ] holds G + 1 terms per value, so one call on 10^7
# values would hold gigabytes; and temporaries this size are reused from the heap instead of fresh pages.
_BLOCK = 1 << 16
_EXACT_ROWS = 1 << 25  # rows a bucket sum of _ExactSums stays exact for
_TOP_26_BITS = ~np.int64((1 << 27) - 1)  # sign, exponent field and the mantissa's first 25 stored bits
_HUGE = 2013  # exponent field of 2^990: bucket sums of larger values (or inf, NaN) could overflow
_EXPONENTS = 2048  # exponent fields per cell in the dense buckets
_DENSE_BUCKETS = 1 << 21  # beyond this many (cell, exponent) buckets, sparse sums per block


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


def _kernel_values(columns: Sequence[FloatArray], G: float, estimator: str) -> Weights:
    """GRPO weight, Dr. GRPO weight and P_silent (NaN at G = inf) of each value."""
    if math.isinf(G):
        p = columns[0]
        return kernels.grpo_weight_limit(p), kernels.drgrpo_weight_limit(p), np.full(p.size, np.nan)
    if estimator == "unbiased":
        k, n = columns
        return (
            kernels.expected_sigma_unbiased(k, n, int(G)),
            kernels.expected_sigma_squared_unbiased(k, n, int(G)),
            kernels.silent_probability_unbiased(k, n, int(G)),
        )
    p = columns[0]
    return (
        kernels.expected_sigma(p, int(G)),
        kernels.expected_sigma_squared(p, int(G)),
        kernels.silent_probability(p, int(G)),
    )


def _kernel_blocks(columns: Sequence[FloatArray], G: float, estimator: str) -> Iterator[Weights]:
    """``_kernel_values`` of each block of ``_BLOCK`` values, in order.

    Blocks are computed a few ahead on polars' thread count (numpy releases the GIL); each block's values
    depend on that block only, so the result is the same on any number of threads.
    """
    workers = pl.thread_pool_size()
    with ThreadPoolExecutor(workers) as pool:
        pending: deque[Future[Weights]] = deque()
        for start in range(0, columns[0].size, _BLOCK):
            block = [column[start : start + _BLOCK] for column in columns]
            pending.append(pool.submit(_kernel_values, block, G, estimator))
            if len(pending) > 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _kernel_keys(G: float, estimator: str) -> list[str]:
    """The value columns the kernels read at G: p, or (k, n) for the unbiased estimator at finite G."""
    return ["p"] if math.isinf(G) else value_keys(estimator)


def _pieces(p: FloatArray, seg: Segments) -> IntArray:
    """Each value's piece, 4 · bin + 2 · extreme + medium: every segment is a union of pieces.

    Bins match ``aggregate.bin_columns``.
    """
    # Truncation then clipping is floor then clipping, for any p that is not NaN.
    index = np.clip((p * seg.bins).astype(np.int64), 0, seg.bins - 1)
    x, (lo, hi) = seg.extreme, seg.medium
    extreme = (p < x) | (p > 1.0 - x)
    medium = (p >= lo) & (p <= hi)
    return np.asarray(4 * index + 2 * extreme + medium, dtype=np.int64)


def _segments(seg: Segments) -> list[tuple[str, float, float, list[int]]]:
    """(segment, p_lo, p_hi, pieces) in output order."""
    every = range(4 * seg.bins)
    x, (lo, hi) = seg.extreme, seg.medium
    out = [("bin", b / seg.bins, (b + 1) / seg.bins, [4 * b + i for i in range(4)]) for b in range(seg.bins)]
    out.append(("extreme", x, 1.0 - x, [piece for piece in every if piece & 2]))
    out.append(("medium", lo, hi, [piece for piece in every if piece & 1]))
    out.append(("all", 0.0, 1.0, list(every)))
    return out


class _ExactSums:
    """Exact sums per cell, read out correctly rounded: what ``math.fsum`` of the cell's values gives.

    A value's bits split into ``hi`` (sign, exponent field and first 25 stored mantissa bits) and
    ``lo = x − hi``. With E its binary exponent, ``hi`` is a multiple of 2^(E−25) below 2^(E+1) and ``lo`` one
    of 2^(E−52) below 2^(E−25) (subnormals alike, with E = −1022), so a float64 sum of up to 2^25 halves
    sharing an exponent field needs at most 52 bits and is exact. One bincount per half over (cell, exponent
    field) thus gives exact partial sums, and ``math.fsum`` of a cell's partial sums is the correctly rounded
    sum of its values, whatever the row order or blocking. Values of 2^990 or more, inf and NaN are kept as
    they are, as terms of their own.
    """

    def __init__(self, cells: int) -> None:
        self.cells = cells
        self.dense = cells * _EXPONENTS <= _DENSE_BUCKETS
        self.sums = np.zeros((2, cells * _EXPONENTS if self.dense else 0), dtype=np.float64)
        self.rows = 0
        self.parts: list[tuple[IntArray, FloatArray]] = []

    def add(self, x: FloatArray, base: IntArray) -> None:
        """Add values ``x`` whose cells are ``base // _EXPONENTS`` (``base``: their cells' first buckets)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        # In-place steps: fresh temporaries of each block would cost more in page faults than in arithmetic.
        exponent = x.view(np.int64) >> 52
        exponent &= _EXPONENTS - 1
        huge = np.flatnonzero(exponent >= _HUGE)
        if huge.size:
            self.parts.append((base[huge] // _EXPONENTS, x[huge]))
            x = x.copy()
            x[huge], exponent[huge] = 0.0, 0
        hi = x.view(np.int64) & _TOP_26_BITS
        halves = (hi.view(np.float64), x - hi.view(np.float64))
        exponent += base
        if self.dense:
            if self.rows + x.size > _EXACT_ROWS:
                self._flush()
            for total, half in zip(self.sums, halves, strict=True):
                total += np.bincount(exponent, weights=half, minlength=total.size)
            self.rows += x.size
            return
        buckets, index = np.unique(exponent, return_inverse=True)
        for half in halves:
            sums = np.asarray(np.bincount(index, weights=half, minlength=buckets.size), dtype=np.float64)
            used = np.flatnonzero(sums)
            self.parts.append((buckets[used] // _EXPONENTS, sums[used]))

    def _flush(self) -> None:
        for total in self.sums:
            used = np.flatnonzero(total)
            self.parts.append((used // _EXPONENTS, total[used]))
            total[:] = 0.0
        self.rows = 0

    def terms(self) -> list[list[float]]:
        """Per cell, floats whose exact sum is the exact sum of the cell's values."""
        self._flush()
        cells = np.concatenate([cell for cell, _ in self.parts])
        values = np.concatenate([value for _, value in self.parts])
        order = np.argsort(cells, kind="stable")
        bounds = np.searchsorted(cells[order], np.arange(self.cells + 1)).tolist()
        ordered: list[float] = values[order].tolist()
        return [ordered[bounds[c] : bounds[c + 1]] for c in range(self.cells)]


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def _group_index(hist: pl.DataFrame, by: Sequence[str]) -> tuple[IntArray | None, list[tuple[object, ...]]]:
    """Each row's --by group (None without --by) and the groups' labels."""
    if not by:
        return None, [()]
    runs = hist.select(pl.struct(by).rle().alias("runs")).to_series()
    lengths = runs.struct.field("len").to_numpy()
    values = runs.struct.field("value").struct.unnest()
    # Ranks, not runs: a group whose rows are not contiguous is still one group.
    group_of_run = values.select(pl.struct(by).rank("dense")).to_series().to_numpy().astype(np.int64) - 1
    labels: list[tuple[object, ...]] = [()] * (int(group_of_run.max()) + 1 if values.height else 0)
    for group, label in zip(group_of_run.tolist(), values.rows(), strict=True):
        labels[group] = label
    return np.repeat(group_of_run, lengths), labels


def _group_rows(
    terms: Sequence[list[list[float]] | None], group: int, seg: Segments
) -> list[dict[str, object]]:
    """The segment rows of one (--by group, G) from the exact per-piece terms of prompts, GRPO, Dr. GRPO
    and silent weight (None at G = inf); fsum makes the shares add up to 1."""
    first = 4 * seg.bins * group

    def total(which: int, pieces: Sequence[int]) -> float:
        cells = terms[which]
        assert cells is not None
        return math.fsum(chain.from_iterable(cells[first + piece] for piece in pieces))

    every = range(4 * seg.bins)
    total_prompts, total_grpo, total_drgrpo = total(0, every), total(1, every), total(2, every)
    rows: list[dict[str, object]] = []
    for name, lo, hi, pieces in _segments(seg):
        n = total(0, pieces)
        grpo_share = _ratio(total(1, pieces), total_grpo)
        drgrpo_share = _ratio(total(2, pieces), total_drgrpo)
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
                "silent_rate": _ratio(total(3, pieces), n) if terms[3] is not None else None,
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
    # Kernels run on the histogram's rows in blocks, each call evaluating a distinct value once: rows are
    # distinct (--by group, value) pairs, so a value recurs only across --by groups, never within one.
    group, labels = _group_index(hist, by)
    cells = 4 * seg.bins * len(labels)
    p = hist["p"].cast(pl.Float64).to_numpy()
    prompts = hist["prompts"].cast(pl.Float64).to_numpy()
    blocks = [slice(start, start + _BLOCK) for start in range(0, hist.height, _BLOCK)]
    base = np.empty(hist.height, dtype=np.int64)  # each row's first (cell, exponent) bucket
    prompt_sums = _ExactSums(cells)
    for block in blocks:
        cell = _pieces(p[block], seg)
        if group is not None:
            cell += group[block] * (4 * seg.bins)
        base[block] = cell * _EXPONENTS
        prompt_sums.add(prompts[block], base[block])
    prompt_terms = prompt_sums.terms()
    records: list[dict[str, object]] = []
    for G in sizes:
        values = [hist[key].cast(pl.Float64).to_numpy() for key in _kernel_keys(G, estimator)]
        sums = [_ExactSums(cells) for _ in range(2 if math.isinf(G) else 3)]
        for block, part in zip(blocks, _kernel_blocks(values, G, estimator), strict=True):
            # The kernels give p̂ ∈ {0, 1} a weight of exactly 0, so those prompts count in `prompts` only.
            for total, w in zip(sums, part, strict=False):
                total.add(prompts[block] * w, base[block])
        terms: list[list[list[float]] | None] = [prompt_terms, *(total.terms() for total in sums)]
        if math.isinf(G):
            terms.append(None)
        for index, label in enumerate(labels):
            for row in _group_rows(terms, index, seg):
                records.append({**dict(zip(by, label, strict=True)), "__G": G, "G": g_label(G), **row})
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

"""Identified bounds on a summary's rates: the smallest and largest value over every pass-rate distribution F
whose implied k-histogram reproduces the observed one within sampling error (``--bounds``; docs/prior.md).

A summary row is a ``--by`` group, a G and a segment of prompts chosen by their observed p̂ = k/n. Its rate
is the mean of a per-prompt quantity f over the segment (``silent_rate``) or the segment's share of the
group's total of f (``grpo_share``). Under F, a prompt of the group has n samples with the observed share
ρ_n, and k ~ Bin(n, p), so the segment's mass at p is ``m(p) = Σ_n ρ_n Σ_{k: k/n ∈ segment} Bin(k; n, p)``;
the rate is ``∫ f m dF / ∫ m dF`` (a mean) or ``∫ f m dF / ∫ f dF`` (a share), a linear-fractional function
of F bounded by one pair of linear programs per row over the library's tolerance region
(:func:`sigmatool.prior.region`). The estimate of every estimator targets the same quantity, so an estimate
outside its bounds is one that no F consistent with the data supports.

A column read on its 1/n grid row by row has bare rates beside the counts (k and n null): each is its own
known value, no draw from F. With weights w_b and values f(p_b), they add constants to both sums, and since F
is a distribution a constant c is ``∫ c dF``: the rate is ``(W ∫ f m dF + S) / (W ∫ m dF + V)`` with W the
weight of the counts, S the bare rates' weighted f inside the segment and V their weight there (a share:
``(W ∫ f m dF + S) / (W ∫ f dF + S_all)``), still one linear-fractional program. A group of bare rates alone
has its rate exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.kernels import Quantity
from sigmatool.kernels.grader import Grader
from sigmatool.segments import group_index

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
Inside = Callable[[FloatArray], BoolArray]


@dataclass(frozen=True)
class Cut:
    """A summary row: its ``--by`` group (index), its G, and which p̂ belong to its segment (None: all)."""

    group: int
    G: float
    inside: Inside | None = None


@dataclass(frozen=True)
class Bounded:
    """A bounded column: the per-prompt quantity f at G, a share (else a mean), and an extra p̂ filter."""

    column: str
    quantity: Callable[[float], str | None]  # None: the rate is not reported at this G
    share: bool = False
    where: Inside | None = None


def _both(a: Inside | None, b: Inside | None) -> Inside | None:
    if a is None or b is None:
        return a or b
    return lambda p: np.asarray(a(p) & b(p), dtype=np.bool_)


class _Group:
    """One --by group's tolerance region and the binomial rows of every k of each n it holds, and its bare
    rates (``bare_p``, ``bare_w``: rates off the column's grid, k and n null)."""

    def __init__(self, k: FloatArray, n: FloatArray, w: FloatArray, level: float) -> None:
        from sigmatool.prior import region
        from sigmatool.prior.cells import binomial_rows

        bare = np.isnan(n)
        self.bare_p, self.bare_w = k[bare], w[bare]  # k holds the rate of a bare row (see bound_columns)
        k, n, w = k[~bare], n[~bare], w[~bare]
        self.k, self.n, self.w = k, n, w
        self.rows: list[tuple[float, FloatArray, FloatArray]] = []
        self.region = region(k, n, w, level) if k.size else None
        if self.region is None:
            return
        for size in np.unique(n).tolist():
            ks = np.arange(int(size) + 1)
            pmf = binomial_rows(int(size), self.region.grid)
            self.rows.append((float(w[n == size].sum() / w.sum()), ks / size, pmf))

    def mass(self, inside: Inside | None) -> FloatArray:
        """m(p) on the grid: the chance that a prompt of true rate p shows a p̂ inside the segment."""
        assert self.region is not None
        if inside is None:
            return np.ones(self.region.grid.size)
        return np.asarray(sum(rho * (inside(p_hat) @ pmf) for rho, p_hat, pmf in self.rows), dtype=np.float64)

    def observed(self, inside: Inside | None) -> float:
        """The prompts of the group whose p̂ lies in the segment (bare rates by their own)."""
        if inside is None:
            return float(self.w.sum() + self.bare_w.sum())
        return float(self.w[inside(self.k / self.n)].sum() + self.bare_w[inside(self.bare_p)].sum())


def _row(group: _Group, cut: Cut, spec: Bounded, grader: Grader | None = None) -> tuple[float, float]:

    G = None if not np.isfinite(cut.G) else int(cut.G)
    quantity = spec.quantity(cut.G)
    if quantity is None:
        return np.nan, np.nan
    inside = _both(cut.inside, spec.where)
    if group.observed(inside) <= 0:
        return np.nan, np.nan
    if spec.share and cut.inside is None:
        return 1.0, 1.0
    if group.bare_w.size:
        return _mixed_row(group, cut, spec, quantity, G, inside, grader)
    assert group.region is not None
    f = Quantity(quantity).plugin(group.region.grid, G, grader=grader)
    if spec.share:
        if cut.inside is None:
            return 1.0, 1.0
        return group.region.ratio(f * group.mass(inside), f)
    if inside is None:
        return group.region.linear(f)
    m = group.mass(inside)
    return group.region.ratio(f * m, m)


def _mixed_row(
    group: _Group,
    cut: Cut,
    spec: Bounded,
    quantity: str,
    G: int | None,
    inside: Inside | None,
    grader: Grader | None,
) -> tuple[float, float]:
    """:func:`_row` of a group with bare rates beside its counts: their known values are constants in both
    sums of the linear-fractional program (see the module's docstring)."""
    fb = Quantity(quantity).plugin(group.bare_p, G, grader=grader)
    wb = group.bare_w
    ib = np.ones(wb.size, dtype=np.bool_) if inside is None else inside(group.bare_p)
    s_in, v_in, s_all = float((wb * fb)[ib].sum()), float(wb[ib].sum()), float((wb * fb).sum())
    if group.region is None:  # bare rates alone: the rate itself
        value = s_in / (s_all if spec.share else v_in) if (s_all if spec.share else v_in) > 0 else np.nan
        return value, value
    W = float(group.w.sum())
    f = Quantity(quantity).plugin(group.region.grid, G, grader=grader)
    m = group.mass(inside)
    numerator = W * f * m + s_in
    denominator = W * f + s_all if spec.share else W * m + v_in
    return group.region.ratio(numerator, denominator)


def bound_columns(
    hist: pl.DataFrame,
    by: Sequence[str],
    cuts: Sequence[Cut],
    specs: Sequence[Bounded],
    level: float,
    grader: Grader | None = None,
) -> tuple[pl.DataFrame, BoolArray]:
    """``{column}_lo`` and ``{column}_hi`` of every spec for every cut, and whether each cut is identified.

    A cut is identified when it covers the whole group, its rates (those without a ``where`` filter) are
    means, and each f is a polynomial of degree ≤ the largest n of the group (docs/theory.md §7).
    """
    from sigmatool.prior import identified

    index, labels = group_index(hist, by)
    w = hist["prompts"].cast(pl.Float64).to_numpy()
    n = hist["n"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    # A bare rate (no counts, n null) carries its rate where the counts carry k.
    k = np.where(
        np.isnan(n), hist["p"].cast(pl.Float64).to_numpy(), hist["k"].cast(pl.Float64).fill_null(0).to_numpy()
    )
    groups = [
        _Group(k[index == g], n[index == g], w[index == g], level) for g in range(max(labels.height, 1))
    ]
    out: dict[str, list[float]] = {name: [] for s in specs for name in (f"{s.column}_lo", f"{s.column}_hi")}
    known = np.zeros(len(cuts), dtype=np.bool_)
    for i, cut in enumerate(cuts):
        if i and cuts[i - 1].group != cut.group:
            done = groups[cuts[i - 1].group].region
            if done is not None:
                done.programs.clear()  # one group's linear programs alive at a time
        group = groups[cut.group]
        for spec in specs:
            lo, hi = _row(group, cut, spec, grader)
            out[f"{spec.column}_lo"].append(lo)
            out[f"{spec.column}_hi"].append(hi)
        G = None if not np.isfinite(cut.G) else int(cut.G)
        # Only the rates over the whole segment count: a rate over a filtered part of it (``where``) is
        # never identified and says so by being a derived column.
        if group.region is None:  # bare rates alone: every rate is exact
            known[i] = cut.inside is None
            continue
        known[i] = cut.inside is None and all(
            not s.share and identified(str(s.quantity(cut.G)), G, group.region.n_max)
            for s in specs
            if s.where is None and s.quantity(cut.G) is not None
        )
    frame = pl.DataFrame({name: np.asarray(v, dtype=np.float64) for name, v in out.items()}).fill_nan(None)
    return frame, known


def row_groups(summary: pl.DataFrame, hist: pl.DataFrame, by: Sequence[str]) -> NDArray[np.int64]:
    """Each summary row's --by group, numbered as :func:`sigmatool.segments.group_index` numbers hist's."""
    if not by:
        return np.zeros(summary.height, dtype=np.int64)
    _, labels = group_index(hist, by)
    found = summary.select(by).join(
        labels.with_row_index("__group"), on=list(by), how="left", nulls_equal=True, maintain_order="left"
    )
    return np.asarray(found["__group"].cast(pl.Int64).to_numpy(), dtype=np.int64)


def bin_of(lo: float, hi: float) -> Inside:
    """p̂ in the bin [lo, hi) of :mod:`sigmatool.segments` (the last bin, hi = 1, closed)."""
    return lambda p: np.asarray((p >= lo) & ((p < hi) | (hi >= 1.0)), dtype=np.bool_)

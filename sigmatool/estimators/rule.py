"""The one rule that picks the estimator of every (prompt, G) cell, and the valuation a run is built with.

A number sigmatool prints answers one question: a quantity at one G over a set of prompts. Its value per
prompt comes from that prompt's own data and that G alone (:class:`PerCell`): the definition itself for pass
rates with no counts; for counts k of n, the unbiased estimate where G ≤ n and, beyond n, the posterior mean
under the NPMLE prior of the prompt's --by group where the group identifies one. No number depends on the
other G asked, on the command that prints it, or on other groups' rows (docs/prior.md, "One rule for every
cell"). :func:`valuation` builds a run's valuation: this rule by default, or the estimator or prior named.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.estimators.checks import check_estimator
from sigmatool.estimators.value import (
    NOT_IDENTIFIED,
    BoolArray,
    FloatArray,
    PerColumn,
    Sizes,
    Valuation,
    _size,
    bare_rows,
    bare_weights,
    mixed_labels,
    rows_bare_weights,
)
from sigmatool.kernels import Quantity
from sigmatool.load.loaded import distinct
from sigmatool.options import COLUMN, PriorSpec, by_columns, check_prior, parse_prior
from sigmatool.segments import group_index

if TYPE_CHECKING:
    from sigmatool.prior.model import Prior

# A prior answers by default beyond a prompt's n only where this many prompts of its --by group were sampled
# twice or more: with one sample each, the counts identify the mean of p and nothing else (docs/prior.md).
PRIOR_PROMPTS = 30


@dataclass(frozen=True, eq=False)
class PerCell(Valuation):
    """The default rule (``--estimator auto``), applied to each (prompt, G) cell on its own:

    - pass rates with no counts: f(p) itself, the quantity's definition (the plug-in value is exact);
    - counts k of n with G ≤ n: the unbiased estimate, a group drawn from the n logged samples;
    - counts with G > n (G = ∞ included): the posterior mean under the NPMLE prior fitted to the prompt's
      --by group, where that group identifies one (:data:`PRIOR_PROMPTS` prompts sampled twice or more,
      some answers right and some wrong); elsewhere NaN, *not identified*: the summaries give the bounds.

    A column read on its 1/n grid row by row mixes the two: a rate off the grid (k and n null) is valued
    by its own rate, f(p), and the rows of counts by their cells; the prior is fitted to the rows of
    counts alone. So a prompt's value at G depends on its own (k, n) or rate, its group's counts and G,
    never on the other G asked, the command, the n of other groups or another row's reading. ``beyond`` False (``--prior none``) leaves every G > n
    cell unidentified. The prior is fitted when a G > n cell is first asked about.
    """

    hist: pl.DataFrame = field(default_factory=pl.DataFrame, repr=False)
    beyond: bool = True
    found: pl.DataFrame = field(default_factory=pl.DataFrame, repr=False)  # by, __identified, __why
    _fit: list[Valuation] = field(default_factory=list, repr=False)
    _missed: set[bool] = field(default_factory=set, repr=False)  # whether a cell beyond n had no value

    @classmethod
    def of(
        cls, hist: pl.DataFrame, by: Sequence[str], beyond: bool = True, grid: FloatArray | None = None
    ) -> PerCell:
        """The rule on one column's histogram (--by columns, ``p``, ``prompts`` and maybe ``k``, ``n``);
        ``grid`` the NPMLE's grid of rates as read (--denoise)."""
        return cls("auto", PriorSpec("auto" if beyond else "none"), tuple(by), hist=hist, beyond=beyond,
                   found=_identifies(hist, tuple(by), beyond), bare=bare_weights(hist, by),
                   grid=grid)  # fmt: skip

    @property
    def counts(self) -> bool:
        return "n" in self.hist.columns

    @property
    def keyed(self) -> bool:
        return self.counts

    @property
    def label(self) -> str:
        if not self.counts:
            return "plug-in"
        said = "unbiased, npmle beyond n" if self.beyond else "unbiased to n"
        return f"{said}; plug-in off the grid" if self.bare.height else said

    def fitted(self) -> Valuation:
        """The NPMLE prior of each --by group, fitted on first use (the values beyond n)."""
        if not self._fit:
            self._fit.append(_fitted(self.hist, self.by, PriorSpec("npmle", default=True), grid=self.grid))
        return self._fit[0]

    def _groups(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Each frame row's line of :attr:`found` (its --by group's)."""
        keys = [c for c in self.found.columns if not c.startswith("__")]
        if not keys:
            return self.found.select(pl.all().gather(np.zeros(frame.height, dtype=np.int64)))
        return frame.select(keys).join(
            self.found, on=keys, how="left", nulls_equal=True, maintain_order="left"
        )

    def identified(self, frame: pl.DataFrame) -> BoolArray:
        """Whether each frame row's --by group has a prior to answer beyond n."""
        return self._groups(frame)["__identified"].fill_null(False).to_numpy().astype(np.bool_)

    def values(
        self, frame: pl.DataFrame, quantity: str, G: Sizes | None = None, std: str = "population"
    ) -> FloatArray:
        """f of each frame row by the rule: exact for rates, unbiased for G ≤ n, the prior's beyond, or NaN."""
        q = Quantity(quantity)
        bare = bare_rows(frame)
        if not self.counts or bare.all():
            return q.plugin(frame["p"].cast(pl.Float64).to_numpy(), _size(G), std, self.grader)
        if bare.any():
            # A bare rate beside counts is valued by its own rate; the rows of counts by the rule.
            out = q.plugin(frame["p"].cast(pl.Float64).to_numpy(), _size(G), std, self.grader)
            rows = np.flatnonzero(~bare)
            at = None if G is None else np.broadcast_to(np.asarray(G), (frame.height,))[rows]
            out[rows] = self.values(frame[rows], quantity, at, std)
            return out
        G = G if q.needs_size else None
        sizes = None if G is None else np.broadcast_to(np.asarray(G, dtype=np.int64), (frame.height,))
        beyond = self.outside(frame, G)
        out = np.full(frame.height, np.nan)
        below = np.flatnonzero(~beyond)
        if below.size and sizes is not None:
            k, n = (frame[c].cast(pl.Float64).to_numpy()[below] for c in ("k", "n"))
            out[below] = q.unbiased(k, n, sizes[below], std, self.grader)
            beyond = beyond | np.isnan(out)  # a quantity of degree above n (Knapsack RL's G + 3) has none
        known = self.identified(frame) if beyond.any() else np.zeros(frame.height, dtype=np.bool_)
        if (beyond & ~known).any():
            self._missed.add(True)
        rows = np.flatnonzero(beyond & known)
        if rows.size:
            out[rows] = self._posterior(frame[rows], quantity, None if sizes is None else sizes[rows], std)
        return out

    def _posterior(
        self, frame: pl.DataFrame, quantity: str, sizes: NDArray[np.int64] | None, std: str
    ) -> FloatArray:
        """The prior's posterior means of ``frame``'s rows, each distinct (--by group, k, n, G) once: a
        histogram kept by more columns than the prior's groups (bins, other keys) repeats them."""
        keys = [*self.by, "k", "n"]
        cells = frame.select(keys).with_columns(
            pl.Series("__G", np.zeros(frame.height) if sizes is None else sizes)
        )
        distinct = cells.unique(maintain_order=True)
        fitted = self.fitted().with_grader(self.grader)
        if distinct.height == cells.height:
            return fitted.values(frame, quantity, sizes, std)
        found = fitted.values(distinct, quantity, None if sizes is None else distinct["__G"].to_numpy(), std)
        index = cells.join(distinct.with_row_index("__i"), on=[*keys, "__G"], how="left", nulls_equal=True,
                           maintain_order="left")["__i"].to_numpy()  # fmt: skip
        return np.asarray(found[index], dtype=np.float64)

    def cell_labels(
        self, cells: pl.DataFrame, outside: FloatArray, prompts: FloatArray, value: FloatArray
    ) -> list[str]:
        """Per summary row, what made its number: from the weight of its prompts beyond n and its value."""
        if not self.counts:
            return ["plug-in"] * len(prompts)
        weights = rows_bare_weights(cells, self.bare, len(prompts))
        beyond, total, x = (np.asarray(a, dtype=np.float64) for a in (outside, prompts, value))
        # Whole columns at once: a 200,000-group budget --by names 2.6·10⁶ rows (0.4 s of CPU less than a loop).
        names = np.array(["unbiased + prior npmle", "prior npmle", "unbiased", NOT_IDENTIFIED], dtype=object)
        which = np.where(beyond >= total - weights[0], 1, 0)
        which = np.where(beyond <= 0, 2, which)
        which = np.where(~np.isfinite(x) & (beyond > 0), 3, which)
        return mixed_labels(list(names[which].tolist()), weights)

    def refit_all(self, weights: FloatArray, advance: Callable[[int], None] | None = None) -> list[Valuation]:
        """The prior beyond n refitted to each replicate's weights (when it was used); unbiased values stay."""
        if not self._fit:
            return [self] * np.asarray(weights).shape[0]
        return [replace(self, _fit=[fit]) for fit in self._fit[0].refit_all(weights, advance)]

    def stacked(self, replicas: Sequence[Valuation], key: str) -> Valuation:
        """Replicates stacked under ``key`` (:meth:`Valuation.stacked`): each keeps its own prior beyond n."""
        fits = [replica._fit[0] for replica in replicas if isinstance(replica, PerCell) and replica._fit]
        inner = [self._fit[0].stacked(fits, key)] if self._fit and len(fits) == len(replicas) else []
        return replace(self, by=(*self.by, key), _fit=inner, _located=[])

    def notes(self) -> list[str]:
        """The prior's shape where it answered beyond n, and why a group's cells beyond n are not identified."""
        lines = [f"beyond n (G > n): {line}" for line in (self._fit[0].notes() if self._fit else [])]
        return lines

    def why_not(self) -> list[str]:
        """Why each --by group without a prior has none, once some cell beyond n was asked and had no value."""
        keys = [c for c in self.found.columns if not c.startswith("__")]
        lines: list[str] = []
        if not self._missed:
            return lines
        for row in self.found.filter(~pl.col("__identified")).iter_rows(named=True):
            where = ", ".join(f"{key}={row[key]}" for key in keys)
            lines.append(f"{where + ': ' if where else ''}{row['__why']}")
        return lines


def _identifies(hist: pl.DataFrame, by: tuple[str, ...], beyond: bool) -> pl.DataFrame:
    """Per --by group of a histogram of counts: whether a default prior may answer beyond n, and why not.
    Bare rates beside counts (k, n null) say nothing of a prior: only the rows of counts are summed."""
    if "n" not in hist.columns:
        return pl.DataFrame()
    w = pl.col("prompts").cast(pl.Float64)
    stats = hist.group_by(list(by), maintain_order=True) if by else hist.group_by(pl.lit(0).alias("__all"))
    found = stats.agg(
        (w * pl.col("n").is_not_null()).sum().alias("__counted"),
        (w * (pl.col("n") >= 2)).sum().alias("__twice"),
        (w * pl.col("k")).sum().alias("__right"),
        (w * (pl.col("n") - pl.col("k"))).sum().alias("__wrong"),
    )
    twice, right, wrong = (pl.col(c) for c in ("__twice", "__right", "__wrong"))
    why = (
        pl.when(pl.col("__counted") == 0)
        .then(None)  # bare rates alone: no cell of theirs lies beyond n
        .when(pl.lit(not beyond))
        .then(pl.lit("--prior none: no prior answers beyond the logged samples"))
        .when(right == 0)
        .then(pl.lit("no answer was ever right, so no prior can tell how small p is"))
        .when(wrong == 0)
        .then(pl.lit("every answer was right, so no prior can tell how close p is to 1"))
        .when(twice < PRIOR_PROMPTS)
        .then(
            pl.format(
                "{} prompt(s) sampled twice or more, fewer than the {} a prior needs (one sample "
                "per prompt tells only the mean of p)",
                twice.cast(pl.Int64),
                pl.lit(PRIOR_PROMPTS),
            )
        )
        .otherwise(None)
    )
    found = found.with_columns(why.alias("__why"))
    return found.with_columns(pl.col("__why").is_null().alias("__identified")).select(
        *by, "__identified", "__why"
    )


def valuation(
    hist: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str] = (),
    sizes: Sequence[float] = (),
    estimator: str = "auto",
    prior: str | PriorSpec | Valuation | None = None,
    measured: tuple[float, float] | None = None,
) -> Valuation:
    """The estimator for ``hist``: ``auto`` is the rule of :class:`PerCell`; a prior (``beta``, ``npmle``,
    ``A,B``) is fitted to each ``--by`` group; ``plugin`` and ``unbiased`` as named. With ``measured``
    (--denoise's FP, FN), the NPMLE is a prior on the true p with likelihood Bin(k; n, FP + D·p): fitted on
    the grid of rates FP + D·p over its usual grid of p.

    With ``by`` led by the ``column`` key (several pass-rate columns), each column is valued apart, as its
    own run would value it (:class:`PerColumn`). Streamed rows (a LazyFrame: pass rates, no counts) take
    the plug-in value, which is exact there. ``sizes`` only checks that the unbiased estimator exists at
    each G asked; no value depends on it.
    """
    if isinstance(prior, Valuation):
        return prior
    frame = distinct(hist)
    spec = parse_prior(prior) if isinstance(prior, str) else prior or PriorSpec()
    if frame is None:  # streamed rows: each column's plug-in values, named in its headline
        plain = "plugin" if estimator == "auto" else estimator
        return PerColumn(plain, spec, tuple(by)) if by_columns(by) else Valuation(plain)
    grid = None if measured is None else measured_grid(*measured)
    if by_columns(by):
        return _per_column(frame, tuple(by[1:]), sizes, estimator, spec, grid)
    return _one(frame, tuple(by), sizes, estimator, spec, grid=grid)


def measured_grid(fp: float, fn: float) -> FloatArray:
    """The NPMLE's grid of rates as a verifier of (FP, FN) reads them: FP + D·p over the grid of true p."""
    from sigmatool.prior.cells import p_grid

    return np.asarray(fp + (1.0 - fp - fn) * p_grid(), dtype=np.float64)


def _per_column(
    hist: pl.DataFrame,
    by: tuple[str, ...],
    sizes: Sequence[float],
    estimator: str,
    spec: PriorSpec,
    grid: FloatArray | None = None,
) -> PerColumn:
    """Each column's valuation on its own rows, behind one :class:`PerColumn`."""
    names = hist[COLUMN].unique(maintain_order=True).to_list()
    mixed = bool(bare_rows(hist).any())  # some column of bare rates beside columns of counts
    parts = tuple(
        (name, _one(hist.filter(pl.col(COLUMN) == name), by, sizes, estimator, spec, mixed, grid))
        for name in names
    )
    index, _ = group_index(hist, (COLUMN,))
    posterior = any(part.posterior for _, part in parts)
    kind = "posterior" if posterior else "auto" if any(part.keyed for _, part in parts) else estimator
    return PerColumn(kind, spec, (COLUMN, *by), parts=parts, index=index)


def _one(
    hist: pl.DataFrame,
    by: tuple[str, ...],
    sizes: Sequence[float],
    estimator: str,
    spec: PriorSpec,
    _stacked: bool = False,
    grid: FloatArray | None = None,
) -> Valuation:
    """The valuation of one pass-rate column's histogram: the rule of :class:`PerCell` by default, a prior
    fitted to each --by group when one is named."""
    if "n" in hist.columns and hist["n"].null_count() == hist.height:
        hist = hist.drop("k", "n")  # a column of bare rates stacked beside columns of counts
    if "n" not in hist.columns and (spec.active or estimator == "unbiased") and _stacked:
        # Beside columns of counts, a column of bare rates is valued at its rates under any estimator
        # (f(p), the definition), as a bare rate beside counts in one column is.
        return Valuation("plugin")
    counted = hist["n"].drop_nulls() if "n" in hist.columns else None
    n_min = int(counted.min()) if counted is not None and counted.len() else None  # type: ignore[arg-type]
    bare = bare_weights(hist, by)
    if not spec.active:
        if estimator == "auto":
            return PerCell.of(hist, by, beyond=spec.kind == "auto", grid=grid)
        check_estimator(hist, sizes, estimator)
        return Valuation(estimator, short=_short(n_min, sizes), bare=bare)
    check_prior(
        spec, has_counts="n" in hist.columns, estimator="plugin" if estimator == "auto" else estimator
    )
    return replace(_fitted(hist, by, spec, _short(n_min, sizes), grid), bare=bare)


def _fitted(
    hist: pl.DataFrame,
    by: tuple[str, ...],
    spec: PriorSpec,
    short: int | None = None,
    grid: FloatArray | None = None,
) -> Valuation:
    """The posterior valuation: ``spec``'s prior fitted to each --by group of ``hist``'s counts (its bare
    rates, k and n null, are valued by their own rate and fitted to nothing); an NPMLE on ``grid`` when
    given (--denoise: :func:`measured_grid`)."""
    bare = bare_rows(hist)
    counted_rows = None
    if bare.any():
        counted_rows = np.flatnonzero(~bare)
        hist = hist.filter(pl.Series(~bare))
    # One cell per (--by group, k, n): a histogram kept by more columns than ``by`` (the sparkline's prior
    # over all prompts of a --by run) has a (k, n) in several rows, which one cell must hold.
    keys = [*by, "k", "n"]
    hist = hist.group_by(keys, maintain_order=True).agg(pl.col("prompts").sum())
    group, labels = group_index(hist, by)
    weights = hist["prompts"].cast(pl.Float64).to_numpy()
    local = np.zeros(hist.height, dtype=np.int64)
    for g in range(max(labels.height, 1)):
        rows = group == g
        local[rows] = np.arange(int(rows.sum()))
    cells = hist.select([*by, "k", "n"]).with_columns(
        pl.Series("__group", group), pl.Series("__local", local)
    )
    k, n = (hist[c].to_numpy() for c in ("k", "n"))
    priors = tuple(
        _fit(k[group == g], n[group == g], weights[group == g], spec.fit_kind, grid)
        for g in range(max(labels.height, 1))
    )
    return Valuation(
        "posterior", spec, by, cells, priors, labels, short=short, counted_rows=counted_rows, grid=grid
    )


# Priors fitted in this process, by their cells: a report values each input in the run that compares them
# and again for that input's own headline, and the same cells give the same prior, fitted once.
_FITS: dict[tuple[object, bytes, bytes, bytes, bytes], Prior] = {}
_FITS_KEPT = 64


def _fit(
    k: NDArray[np.int64],
    n: NDArray[np.int64],
    w: NDArray[np.float64],
    kind: object,
    grid: FloatArray | None = None,
) -> Prior:
    """:func:`sigmatool.prior.fit_prior` of these cells (an NPMLE on ``grid`` when given), or the prior
    already fitted to the same cells."""
    from sigmatool.prior import fit_prior

    on = grid if kind == "npmle" else None  # a Beta is fitted to the rates as read
    key = (kind, k.tobytes(), n.tobytes(), w.tobytes(), b"" if on is None else on.tobytes())
    if key not in _FITS:
        if len(_FITS) >= _FITS_KEPT:
            del _FITS[next(iter(_FITS))]  # the oldest
        _FITS[key] = fit_prior(k, n, w, kind=kind, grid=on)  # type: ignore[arg-type]
    return _FITS[key]


def _short(n_min: int | None, sizes: Sequence[float]) -> int | None:
    """The fewest logged samples n when some finite G asked exceeds it (the plug-in is biased there), else
    None. G = inf asks for the large-group weights themselves, which no n identifies (docs/prior.md)."""
    return n_min if n_min is not None and any(n_min < G < math.inf for G in sizes) else None

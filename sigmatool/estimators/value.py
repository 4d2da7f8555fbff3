"""The value of each distinct (k, n) — or p̂ — under the chosen estimator: plug-in, unbiased, or posterior mean.

The plug-in estimator evaluates each formula at p̂ = k/n; the unbiased one draws the group from the n logged
samples (docs/theory.md §2); under a prior each per-prompt quantity becomes its posterior mean given (k, n)
(docs/theory.md §7), with the prior fitted to each ``--by`` group's histogram. Every analysis asks this one
place for its per-prompt values, once per distinct value of the histogram.

With several pass-rate columns (``--col a --col b``: the groups are led by the ``column`` key), each column is
valued as a run with that one ``--col`` values it (:class:`PerColumn`): its own choice of the default prior
and its own fitted priors, never one fitted to another column's counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.kernels import Quantity
from sigmatool.kernels.grader import Grader
from sigmatool.options import COLUMN, PriorSpec
from sigmatool.progress import nothing

if TYPE_CHECKING:
    from sigmatool.prior import Prior

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
Sizes = float | int | NDArray[np.generic]


# How a summary row names the estimator behind it where the data give it no value.
NOT_IDENTIFIED = "not identified"

# Below this, a posterior's normaliser Σ_i m_i Bin(k; n, p_i) has lost digits to underflow in linear space.
_LINEAR_FLOOR = 1e-250


def _size(G: Sizes | None) -> int | NDArray[np.generic]:
    # G is None only for the quantities that take none (the limits and "interior").
    return int(G) if isinstance(G, (int, float)) else np.asarray(G if G is not None else 0)


def plugin_values(
    p: FloatArray, quantity: str, G: Sizes | None = None, std: str = "population"
) -> FloatArray:
    """f at p (the plug-in estimate), f a :class:`~sigmatool.kernels.Quantity` or its name."""
    return Quantity(quantity).plugin(p, _size(G), std)


def bare_rows(frame: pl.DataFrame) -> BoolArray:
    """The rows of a histogram that hold a bare pass rate among rows of counts (k and n null: a rate off the
    1/n grid of its column, :class:`sigmatool.load.dataset.Grid`); none in a histogram of one kind."""
    if "n" not in frame.columns or not frame["n"].null_count():
        return np.zeros(frame.height, dtype=np.bool_)
    return np.asarray(frame["n"].is_null().to_numpy(), dtype=np.bool_)


def bare_weights(hist: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Per --by group of a histogram, the prompts of its bare rates (``__bare``) and all its prompts
    (``__all``); empty when no row is bare. What a summary row's label says of how its number was made."""
    if not bare_rows(hist).any():
        return pl.DataFrame()
    w = pl.col("prompts").cast(pl.Float64)
    sums = [(w * pl.col("n").is_null()).sum().alias("__bare"), w.sum().alias("__all")]
    if not by:
        return hist.select(sums)
    return hist.group_by(list(by), maintain_order=True).agg(sums)


def rows_bare_weights(cells: pl.DataFrame, bare: pl.DataFrame, rows: int) -> tuple[FloatArray, FloatArray]:
    """Per summary row (``cells``: their keys, ``rows`` of them), the prompts of bare rates in its --by group
    and all the group's prompts (``bare``: :func:`bare_weights`' table; zeros without bare rates)."""
    if bare.height == 0:
        return np.zeros(rows), np.zeros(rows)
    keys = [c for c in bare.columns if not c.startswith("__") and c in cells.columns]
    found = (
        cells.select(keys).join(bare, on=keys, how="left", nulls_equal=True, maintain_order="left")
        if keys
        else bare.select(pl.all().gather(np.zeros(rows, dtype=np.int64)))
    )
    bare_w, all_w = (found[c].fill_null(0.0).cast(pl.Float64).to_numpy() for c in ("__bare", "__all"))
    return np.asarray(bare_w, dtype=np.float64), np.asarray(all_w, dtype=np.float64)


def mixed_labels(labels: list[str], weights: tuple[FloatArray, FloatArray]) -> list[str]:
    """``labels`` of summary rows, saying where bare rates were valued by their own rate beside them
    (``weights``: :func:`rows_bare_weights`): ``plug-in`` where the row's --by group is all bare rates,
    ``… + plug-in`` where it mixes them with counts (a row not identified stays so)."""
    out = []
    for label, b, total in zip(labels, weights[0].tolist(), weights[1].tolist(), strict=True):
        if b <= 0 or label in (NOT_IDENTIFIED, "plug-in"):
            out.append(label)
        elif b >= total:
            out.append("plug-in")
        else:
            out.append(f"{label} + plug-in")
    return out


def _kernel(
    frame: pl.DataFrame,
    quantity: str,
    G: Sizes | None,
    unbiased: bool,
    std: str,
    grader: Grader | None = None,
) -> FloatArray:
    """f at p̂ (plug-in), or its unbiased estimate from (k, n); quantities with no unbiased form take p̂."""
    q = Quantity(quantity)
    p = frame["p"].cast(pl.Float64).to_numpy()
    bare = bare_rows(frame) if unbiased else np.zeros(0, dtype=np.bool_)
    if bare.any():
        # A bare rate is its own value: f(p) exactly; the rows of counts take the unbiased estimate.
        out = q.plugin(p, _size(G), std, grader)
        rows = np.flatnonzero(~bare)
        size = _size(G)
        at = size if np.ndim(size) == 0 else np.broadcast_to(size, (frame.height,))[rows]
        out[rows] = _kernel(frame[rows], quantity, at, unbiased, std, grader)
        return out
    if unbiased and q in (Quantity.GRPO_LIMIT, Quantity.DRGRPO_LIMIT):
        return np.full(frame.height, np.nan)  # the large-group limits: no n samples give them unbiased
    if not unbiased or not q.has_unbiased:
        return q.plugin(p, _size(G), std, grader)
    k, n = (frame[c].cast(pl.Float64).to_numpy() for c in ("k", "n"))
    return q.unbiased(k, n, _size(G), std, grader)


@dataclass(frozen=True, eq=False)
class Valuation:
    """How a histogram row's value becomes a per-prompt number: ``plugin``, ``unbiased`` or ``posterior``.

    With a prior, ``cells`` are the fitted histogram's rows (``--by`` columns, ``k``, ``n``, its group
    ``__group`` and its position ``__local`` within the group) and ``priors`` one fitted prior per group.
    """

    estimator: str = "plugin"
    prior: PriorSpec = field(default_factory=PriorSpec)
    by: tuple[str, ...] = ()
    cells: pl.DataFrame = field(default_factory=pl.DataFrame)
    priors: tuple[Prior, ...] = ()
    labels: pl.DataFrame = field(default_factory=pl.DataFrame)
    short: int | None = None  # the fewest logged samples n, when some G asked is larger (see bias_note)
    grader: Grader | None = None  # --grader-error: every value reads the rewards this verifier gives
    credited: bool = False  # --pass-at given: the answers name the credit they are for (each its pass@K)
    # --denoise: the NPMLE's grid of rates as read, FP + D·p over the grid of true p (None: the usual grid)
    grid: FloatArray | None = field(default=None, repr=False)
    # Per --by group, the prompts of bare rates beside counts (:func:`bare_weights`), for the labels; and
    # under a prior, the histogram rows of counts its cells are (None: every row), for the refits.
    bare: pl.DataFrame = field(default_factory=pl.DataFrame, repr=False)
    counted_rows: IntArray | None = field(default=None, repr=False)
    _responsibilities: dict[int, FloatArray] = field(default_factory=dict, repr=False)
    _matrices: dict[int, tuple[FloatArray, FloatArray]] = field(default_factory=dict, repr=False)
    _located: list[tuple[pl.DataFrame, tuple[IntArray, IntArray]]] = field(default_factory=list, repr=False)

    @property
    def label(self) -> str:
        """The estimator in words, for captions and headlines: ``plug-in``, ``unbiased`` or ``prior npmle``
        (``; plug-in off the grid`` where bare rates sit beside the counts)."""
        said = self._label
        return f"{said}; plug-in off the grid" if self.bare.height and said != "plug-in" else said

    @property
    def _label(self) -> str:
        if self.posterior:
            return f"prior {self.prior.label}"
        return "unbiased" if self.estimator == "unbiased" else "plug-in"

    @property
    def posterior(self) -> bool:
        """Whether values are posterior means under fitted priors."""
        return bool(self.priors)

    @property
    def keyed(self) -> bool:
        """Whether a row's value depends on its --by group (and not on its p̂ alone): rows are then matched
        by their group and counts."""
        return self.posterior

    def outside(self, frame: pl.DataFrame, G: Sizes | None) -> BoolArray:
        """The rows whose cell at G lies beyond their logged samples (G > n; no G: the large-group limits),
        for the estimators that answer differently there: the unbiased one (not at all) and the one rule
        (:class:`PerCell`); none for the plug-in and a prior, which answer anywhere alike."""
        if self.estimator not in ("unbiased", "auto") or "n" not in frame.columns:
            return np.zeros(frame.height, dtype=np.bool_)
        n = frame["n"].cast(pl.Float64).to_numpy()
        return np.asarray(n < (np.inf if G is None else np.asarray(G, dtype=np.float64)), dtype=np.bool_)

    def cell_labels(
        self, cells: pl.DataFrame, outside: FloatArray, prompts: FloatArray, value: FloatArray
    ) -> list[str]:
        """The estimator behind each summary row (``cells``: the rows' keys), from the weight of its prompts
        valued beyond n, its prompts and its value: a row with prompts beyond n and no value is not
        identified."""
        labels = [
            NOT_IDENTIFIED if beyond > 0 and not math.isfinite(x) else self._label
            for beyond, x in zip(outside.tolist(), value.tolist(), strict=True)
        ]
        return mixed_labels(labels, rows_bare_weights(cells, self.bare, len(labels)))

    def why_not(self) -> list[str]:
        """Why some cells have no value (:meth:`PerCell.why_not`)."""
        return []

    def label_at(self, frame: pl.DataFrame, G: Sizes | None) -> str:
        """The estimator behind a number over all of ``frame``'s prompts at G (:meth:`cell_labels`)."""
        w = frame["prompts"].cast(pl.Float64).to_numpy()
        outside = np.array([float((w * self.outside(frame, G)).sum())])
        return self.cell_labels(frame.head(1), outside, np.array([w.sum()]), np.array([0.0]))[0]

    def _group_cells(self, g: int) -> tuple[IntArray, IntArray]:
        rows = self.cells.filter(pl.col("__group") == g)
        return rows["k"].to_numpy().astype(np.int64), rows["n"].to_numpy().astype(np.int64)

    def _r(self, g: int) -> FloatArray:
        """Posterior weights of the prior's components for each cell of group g (computed once)."""
        if g not in self._responsibilities:
            self._responsibilities[g] = self.priors[g].responsibilities(*self._group_cells(g))
        return self._responsibilities[g]

    def locate(self, frame: pl.DataFrame) -> tuple[IntArray, IntArray]:
        """Each frame row's group and position among its group's cells (the frame holds --by, k, n)."""
        keys = [*self.by, "k", "n"]
        asked = frame.select(keys)
        # A bootstrap asks again and again about the same rows (other weights): join them once.
        for seen, where in self._located:
            if seen.equals(asked):
                return where
        where = self._join(asked, keys)
        self._located[:] = [*self._located[-7:], (asked, where)]
        return where

    def _join(self, asked: pl.DataFrame, keys: list[str]) -> tuple[IntArray, IntArray]:
        found = asked.join(
            self.cells.select(*keys, "__group", "__local"),
            on=keys,
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
        if found["__group"].null_count():
            raise ValueError("a (k, n) that the prior was not fitted to")
        return found["__group"].to_numpy().astype(np.int64), found["__local"].to_numpy().astype(np.int64)

    def values(
        self, frame: pl.DataFrame, quantity: str, G: Sizes | None = None, std: str = "population"
    ) -> FloatArray:
        """f of each frame row under the estimator; ``G`` a group size, or one per row. A bare rate beside
        counts (:func:`bare_rows`) is valued by its own rate under every estimator: f(p) exactly."""
        if not self.posterior:
            return _kernel(frame, quantity, G, self.estimator == "unbiased", std, self.grader)
        bare = bare_rows(frame)
        if bare.any():
            out = Quantity(quantity).plugin(
                frame["p"].cast(pl.Float64).to_numpy(), _size(G), std, self.grader
            )
            rows = np.flatnonzero(~bare)
            if rows.size:
                at = None if G is None else np.broadcast_to(np.asarray(G), (frame.height,))[rows]
                out[rows] = self.values(frame[rows], quantity, at, std)
            return out
        from sigmatool.prior.posterior import cell_means

        group, local = self.locate(frame)
        sizes = None if G is None else np.broadcast_to(np.asarray(G, dtype=np.int64), (frame.height,))
        grid = self._shared_grid() if len(self.priors) > 1 else None
        found = None if grid is None else self._grid_values(frame, group, grid, quantity, sizes, std)
        if found is not None:
            return found
        out = np.empty(frame.height, dtype=np.float64)
        for g in np.unique(group).tolist():
            rows = np.flatnonzero(group == g)
            k, n = (a[local[rows]] for a in self._group_cells(g))
            r = self._r(g)[local[rows]]
            size = None if sizes is None else sizes[rows]
            out[rows] = cell_means(
                self.priors[g], k, n, quantity, size, std, responsibilities=r, grader=self.grader
            )
        return out

    def _shared_grid(self) -> FloatArray | None:
        """The one grid of p every prior's point masses sit on (no Beta component), or None."""
        first = self.priors[0].atoms
        for prior in self.priors:
            if prior.beta_a.size or not (prior.atoms is first or np.array_equal(prior.atoms, first)):
                return None
        return first

    def _grid_values(
        self,
        frame: pl.DataFrame,
        group: IntArray,
        grid: FloatArray,
        quantity: str,
        sizes: IntArray | None,
        std: str,
    ) -> FloatArray | None:
        """:meth:`values` for priors on one grid (the NPMLE's, and its bootstrap replicates'), every group at
        once: the posterior mean of f for group g and cell (k, n) is ``Σ_i m_gi L_i f_i / Σ_i m_gi L_i`` with
        ``L_i = Bin(k; n, p_i)``, two matrix products over (groups × grid) and (grid × distinct cells).
        None where some posterior's normaliser is too small for linear space (the log-space path then)."""
        from sigmatool.prior.cells import binomial_pmf

        masses = np.stack([prior.atom_mass for prior in self.priors])
        pairs = np.stack([frame[c].cast(pl.Int64).to_numpy() for c in ("k", "n")])
        keys, inverse = np.unique(pairs, axis=1, return_inverse=True)
        cell = inverse.ravel()
        L = binomial_pmf(keys[0], keys[1], grid)  # distinct cells × grid
        norm = (masses @ L.T)[group, cell]
        if not (norm > _LINEAR_FLOOR).all():
            return None
        q = Quantity(quantity)
        out = np.empty(frame.height, dtype=np.float64)
        given = np.zeros(frame.height, dtype=np.int64) if sizes is None else sizes
        at = grid if self.grader is None else self.grader.true_rate(grid)  # rates as read, read back
        for size in np.unique(given).tolist():
            rows = np.flatnonzero(given == size)
            f = q.plugin(at, None if sizes is None else int(size), std, self.grader)
            out[rows] = ((masses * f[None, :]) @ L.T)[group[rows], cell[rows]] / norm[rows]
        return out

    def stacked(self, replicas: Sequence[Valuation], key: str) -> Valuation:
        """One valuation of a histogram stacked from bootstrap replicates: replicate r's rows carry ``key`` = r
        (the last ``--by`` column) and are valued under ``replicas[r]`` (this valuation's refits)."""
        if not self.posterior:
            return replace(self, by=(*self.by, key), _located=[])
        groups, count, height = len(self.priors), len(replicas), self.cells.height
        replicate = np.repeat(np.arange(count, dtype=np.int64), height)
        # A prior that is not refitted (a fixed Beta) is the same in every replicate: one set of priors.
        same = all(replica is self for replica in replicas)
        cells = self.cells[np.tile(np.arange(height), count)].with_columns(
            pl.Series(key, replicate),
            pl.col("__group") + pl.Series(replicate * (0 if same else groups)),
        )
        cells = cells.select(*self.by, key, "k", "n", "__group", "__local")
        priors = self.priors if same else tuple(prior for replica in replicas for prior in replica.priors)
        return Valuation(
            self.estimator,
            self.prior,
            (*self.by, key),
            cells,
            priors,
            self.labels,
            short=self.short,
            grader=self.grader,
            credited=self.credited,
            grid=self.grid,
            bare=self.bare,
        )

    def _matrix(self, g: int) -> tuple[FloatArray, FloatArray]:
        """The p grid and the binomial matrix of group g's cells on it (computed once for every replicate)."""
        if g not in self._matrices:
            from sigmatool.prior.cells import Cells, binomial_matrix, p_grid

            k, n = self._group_cells(g)
            grid = p_grid() if self.grid is None else self.grid
            self._matrices[g] = (grid, binomial_matrix(Cells(k, n, np.ones(k.size)), grid))
        return self._matrices[g]

    def refit(self, weights: FloatArray) -> Valuation:
        """The priors refitted to other prompt weights on the same cells (a bootstrap replicate), as
        :func:`sigmatool.prior.fit_prior` fits them (see :meth:`refit_all`)."""
        return self.refit_all(np.asarray(weights, dtype=np.float64)[None, :])[0]

    def refit_all(self, weights: FloatArray, advance: Callable[[int], None] | None = None) -> list[Valuation]:
        """:meth:`refit` for each row of ``weights`` (replicates × histogram rows): each group's Beta fitted
        again, or its NPMLE refitted as the estimate is fitted (:func:`sigmatool.prior.refit.npmle_refits`).
        ``advance`` is told of each fit."""
        advance = advance or nothing
        if not self.posterior or self.prior.kind == "fixed":
            return [self] * weights.shape[0]
        if self.counted_rows is not None:
            weights = weights[:, self.counted_rows]  # the rows of counts, which the priors were fitted to
        from sigmatool.prior import fit_prior
        from sigmatool.prior.model import grid_prior
        from sigmatool.prior.refit import npmle_refits

        group = self.cells["__group"].to_numpy()
        fitted: list[list[Prior]] = []
        for g in range(len(self.priors)):
            k, n = self._group_cells(g)
            w = weights[:, group == g]
            if self.prior.kind == "beta":
                fitted.append([fit_prior(k[r > 0], n[r > 0], r[r > 0], kind="beta") for r in w])
                advance(len(w))
                continue
            grid, L = self._matrix(g)
            masses = npmle_refits(L, w, self.priors[g], advance)
            fitted.append([grid_prior(grid, mass) for mass in masses])
        return [self._with(tuple(priors)) for priors in zip(*fitted, strict=True)]

    def _with(self, priors: tuple[Prior, ...]) -> Valuation:
        return Valuation(
            self.estimator,
            self.prior,
            self.by,
            self.cells,
            priors,
            self.labels,
            short=self.short,
            grader=self.grader,
            credited=self.credited,
            grid=self.grid,
            bare=self.bare,
            counted_rows=self.counted_rows,
            _matrices=self._matrices,
            _located=self._located,
        )

    def with_grader(self, grader: Grader | None) -> Valuation:
        """The same valuation with every value read through ``grader`` (None or plain: none)."""
        grader = None if grader is None or grader.plain else grader
        return self if grader == self.grader else replace(self, grader=grader)

    @property
    def pass_at(self) -> int:
        """The K of the pass@K credit every value reads (1: each answer's own reward)."""
        return 1 if self.grader is None else self.grader.pass_at

    def passing(self, K: int) -> Valuation:
        """The same valuation under pass@K credit, through the same verifier (a fitted prior is shared). Its
        grader is set even at K = 1, so that it is :attr:`credited`."""
        graded = self.grader or Grader()
        return self._graded_by(replace(graded, pass_at=K))

    def _graded_by(self, grader: Grader) -> Valuation:
        return replace(self, grader=grader, credited=True)

    def one(self) -> Valuation:
        """The same valuation under pass@1 credit, through the same verifier: each answer's own reward
        (a prompt's pass rate, its chance of a hit in G answers)."""
        return self.with_grader(None if self.grader is None else replace(self.grader, pass_at=1))

    def group_sizes(self, frame: pl.DataFrame, target: float, **rules: object) -> FloatArray:
        """Per frame row, the smallest G reaching ``target`` under its posterior (docs/theory.md §7); NaN if none."""
        from sigmatool.prior import posterior_group_size

        bare = bare_rows(frame)
        if bare.any():
            from sigmatool.prior.groupsize import rate_group_size

            out = np.empty(frame.height, dtype=np.float64)
            out[bare] = rate_group_size(
                frame["p"].cast(pl.Float64).to_numpy()[bare],
                target,
                grader=self.grader,
                **rules,  # type: ignore[arg-type]
            )
            rows = np.flatnonzero(~bare)
            if rows.size:
                out[rows] = self.group_sizes(frame[rows], target, **rules)
            return out
        group, local = self.locate(frame)
        out = np.empty(frame.height, dtype=np.float64)
        for g in np.unique(group).tolist():
            rows = np.flatnonzero(group == g)
            k, n = (a[local[rows]] for a in self._group_cells(g))
            out[rows] = posterior_group_size(
                self.priors[g],
                k,
                n,
                target,
                grader=self.grader,
                **rules,  # type: ignore[arg-type]
            )
        return out

    def bias_note(self) -> str:
        """For a headline: which estimator answers at G > n and why, or that the plug-in is biased there."""
        if self.short is None:
            return ""
        if self.posterior and self.prior.default:
            return (
                f"Under the NPMLE prior, the default where G > n = {self.short} samples: the plug-in p̂ is "
                "biased there (--prior none gives it)."
            )
        if self.posterior:
            return ""
        return (
            f"The plug-in p̂ is biased at G > n = {self.short} samples (it reads a never-solved prompt as "
            "impossible): use --prior npmle."
        )

    def part(self, column: str) -> Valuation:
        """The valuation of one pass-rate column (with a single column, this one)."""
        return self

    def headlines(self, overall: pl.DataFrame, line: Callable[[pl.DataFrame, Valuation], str]) -> str:
        """The headline of a table view: ``line`` of the summary over all prompts and this valuation (with
        several pass-rate columns, one line per column: :meth:`PerColumn.headlines`)."""
        return line(overall, self)

    def notes(self) -> list[str]:
        """One line per --by group on the fitted prior: its shape, its fit, and what it does to p̂ ∈ {0, 1}."""
        lines = []
        for g, prior in enumerate(self.priors):
            where = ""
            if self.by:
                row = self.labels.row(g, named=True)
                where = " for " + ", ".join(f"{key}={value}" for key, value in row.items())
            lines.append(f"prior {self.prior.label}{where}: {describe(prior, self.grid)}")
        return lines


def describe(prior: Prior, grid: FloatArray | None = None) -> str:
    """The fitted prior in a phrase: parameters or support, log-likelihood, p̂ = 0 and 1 moved inside; on a
    ``grid`` of rates as read (--denoise), its support and masses at the true p = 0 and 1."""
    s = prior.summary()
    if grid is not None and "a" not in s:
        on = prior.atom_mass > 0
        zero, one = (float(prior.atom_mass[prior.atoms == end].sum()) for end in (grid[0], grid[-1]))
        loglik = float(s["log_likelihood"])
        return (
            f"on the true p: {int(on.sum())} support points (mass {zero:.3g} at p = 0, {one:.3g} at p = 1); "
            f"log-likelihood {loglik:,.1f}"
        )
    if "a" in s:
        shape = f"Beta(a = {s['a']:.4g}, b = {s['b']:.4g})"
    else:
        shape = (
            f"{s['support_size']} support points (mass {float(s['mass_at_zero']):.3g} at p = 0, "
            f"{float(s['mass_at_one']):.3g} at p = 1)"
        )
    loglik, per = float(s["log_likelihood"]), float(s["log_likelihood_per_prompt"])
    moved = (
        f"expects {float(s['moved_off_zero']):,.0f} of {float(s['never_solved']):,.0f} never-solved and "
        f"{float(s['moved_off_one']):,.0f} of {float(s['always_solved']):,.0f} always-solved prompts to have "
        "0 < p < 1"
    )
    return f"{shape}; log-likelihood {loglik:,.1f} ({per:.4f} per prompt); {moved}"


@dataclass(frozen=True, eq=False)
class PerColumn(Valuation):
    """Several pass-rate columns, each valued apart: ``parts`` holds each column's own valuation (as a run
    with that one --col makes it, on its rows alone and by the other --by columns), and every frame asked
    about carries the ``column`` key that says whose rows are whose. ``index`` is each histogram row's part
    (to split a bootstrap replicate's weights).
    """

    parts: tuple[tuple[str, Valuation], ...] = ()
    index: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)

    @property
    def label(self) -> str:
        """The columns' estimators in words, each once (``prior npmle``, or ``prior npmle / plug-in``)."""
        return " / ".join(dict.fromkeys(part.label for _, part in self.parts))

    @property
    def posterior(self) -> bool:
        """Whether some column's values are posterior means (its rows are then matched by (k, n))."""
        return any(part.posterior for _, part in self.parts)

    @property
    def keyed(self) -> bool:
        return any(part.keyed for _, part in self.parts)

    def outside(self, frame: pl.DataFrame, G: Sizes | None) -> BoolArray:
        out = np.zeros(frame.height, dtype=np.bool_)
        for rows, part in self._split(frame):
            out[rows] = part.outside(
                frame[rows], None if G is None else np.broadcast_to(G, (frame.height,))[rows]
            )
        return out

    def cell_labels(
        self, cells: pl.DataFrame, outside: FloatArray, prompts: FloatArray, value: FloatArray
    ) -> list[str]:
        """Each summary row's estimator, by its column's valuation."""
        out = [""] * len(prompts)
        names = cells[COLUMN]
        for name in names.unique(maintain_order=True).to_list():
            rows = np.flatnonzero((names == name).to_numpy())
            found = self.part(name).cell_labels(cells[rows], outside[rows], prompts[rows], value[rows])
            for i, label in zip(rows.tolist(), found, strict=True):
                out[i] = label
        return out

    def why_not(self) -> list[str]:
        return [f"--col {name}: {line}" for name, part in self.parts for line in part.why_not()]

    def _split(self, frame: pl.DataFrame) -> list[tuple[IntArray, Valuation]]:
        """The frame's rows of each column that has some, with that column's valuation."""
        names = frame[COLUMN]
        found = [(np.flatnonzero((names == name).to_numpy()), part) for name, part in self.parts]
        return [(rows, part) for rows, part in found if rows.size]

    def values(
        self, frame: pl.DataFrame, quantity: str, G: Sizes | None = None, std: str = "population"
    ) -> FloatArray:
        """f of each frame row under its column's valuation (no key anywhere: the estimator's, key or not)."""
        if not self.keyed:
            return super().values(frame, quantity, G, std)
        sizes = None if G is None else np.broadcast_to(np.asarray(G), (frame.height,))
        out = np.empty(frame.height, dtype=np.float64)
        for rows, part in self._split(frame):
            out[rows] = part.values(frame[rows], quantity, None if sizes is None else sizes[rows], std)
        return out

    def with_grader(self, grader: Grader | None) -> Valuation:
        """Every column's valuation read through ``grader``."""
        grader = None if grader is None or grader.plain else grader
        if grader == self.grader:
            return self
        parts = tuple((name, part.with_grader(grader)) for name, part in self.parts)
        return replace(self, grader=grader, parts=parts)

    def _graded_by(self, grader: Grader) -> Valuation:
        parts = tuple((name, part._graded_by(grader)) for name, part in self.parts)
        return replace(self, grader=grader, credited=True, parts=parts)

    def group_sizes(self, frame: pl.DataFrame, target: float, **rules: object) -> FloatArray:
        """:meth:`Valuation.group_sizes` of each frame row under its column's prior."""
        out = np.empty(frame.height, dtype=np.float64)
        for rows, part in self._split(frame):
            out[rows] = part.group_sizes(frame[rows], target, **rules)
        return out

    def refit_all(self, weights: FloatArray, advance: Callable[[int], None] | None = None) -> list[Valuation]:
        """:meth:`refit` for each row of ``weights``: each column's replicates fitted together."""
        w = np.asarray(weights, dtype=np.float64)
        fitted = [part.refit_all(w[:, self.index == i], advance) for i, (_, part) in enumerate(self.parts)]
        names = [name for name, _ in self.parts]
        return [
            replace(self, parts=tuple(zip(names, (f[r] for f in fitted), strict=True)))
            for r in range(w.shape[0])
        ]

    def stacked(self, replicas: Sequence[Valuation], key: str) -> Valuation:
        """Each column's valuation stacked from its replicates (:meth:`Valuation.stacked`)."""
        parts = tuple(
            (name, part.stacked([replica.part(name) for replica in replicas], key))
            for name, part in self.parts
        )
        return replace(self, by=(*self.by, key), parts=parts, _located=[])

    def bias_note(self) -> str:
        """None for the columns together: each column's headline carries its own (:meth:`headlines`)."""
        return ""

    def headlines(self, overall: pl.DataFrame, line: Callable[[pl.DataFrame, Valuation], str]) -> str:
        """One line per column, named, from its rows of ``overall`` (keyed by ``column``) and its valuation."""
        return "\n".join(
            f"{name}: {line(overall.filter(pl.col(COLUMN) == name).drop(COLUMN), self.part(name))}"
            for name in overall[COLUMN].unique(maintain_order=True).to_list()
        )

    def part(self, column: str) -> Valuation:
        """The valuation of one pass-rate column (streamed rows record none: the plug-in's)."""
        return dict(self.parts).get(column, Valuation(self.estimator, grader=self.grader))

    def notes(self) -> list[str]:
        """Each column's notes on its fitted priors, naming the column."""
        return [f"--col {name}: {note}" for name, part in self.parts for note in part.notes()]

"""Per-prompt value curves v(p, G) over the allowed group sizes, one row per distinct p, one column per size.

The objectives (docs/plan.md, docs/theory.md §8), for a prompt of pass rate p given a group of G answers:

- ``signal``, GRPO: ``E[σ](p, G)`` (times ``sqrt((G − 1)/G)`` with the Bessel std); Dr. GRPO:
  ``E[σ²](p, G) = p (1 − p) (1 − 1/G)``;
- ``learnable``: ``1 − P_silent(p, G) = 1 − p^G − (1 − p)^G``, the chance that the group is not silent;
- ``knapsack-rl``: ``(1 − p^G − (1 − p)^G) · p (1 − p)²``, Knapsack RL's value (Li et al. 2025);
- ``fidelity``: ``1`` when ``φ(G, p) ≥ φ*`` (GRPO: ``E[σ]/sqrt(p (1 − p))``; Dr. GRPO: ``1 − 1/G``), else 0;
- ``hit``: ``1 − E[(1 − p)^G]``, the chance that the group holds a right answer (HORA, arXiv:2605.07114):
  ``1 − C(n − k, G)/C(n, G)`` from counts at G ≤ n, as every value, by the one rule per cell.

Under pass@K credit (``--pass-at``) each quantity is pass@K's (docs/passk.md) and Dr. GRPO's fidelity
``1 − K/G``.

Every curve is 0 at G = 0 (the prompt is left out) and at p ∈ {0, 1}.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.errors import DataError
from sigmatool.estimators import Valuation
from sigmatool.kernels import Quantity
from sigmatool.options.plan import PlanOptions

FloatArray = NDArray[np.float64]


Key = tuple[str, int | None, str]  # (quantity, G, std)


# Cells × sizes valued in one call of the valuation: its joins and sums over 2^20 rows at a time.
_CALL_ROWS = 1 << 20


@dataclass(eq=False)
class Memo:
    """Every value asked of a plan's counts, by (quantity, G, std): one array over all its cells.

    A plan asks each quantity at each allowed size several times (the hulls, the uniform sums, its own sums),
    and ``--plot``'s comparison plans again at every size as the budget: without it the rule valued each
    (k, n, G) once per ask, each ask paying its joins and, beyond n, the posterior's sums. ``plan --sizes
    2..129`` on Big-Math's 65 cells (which built that comparison on every run) took 48 s of CPU; with it
    0.8 s, 3.4 s with ``--plot``. A quantity first asked at one of the plan's ``sizes`` is valued at all
    of them in one call. It holds rows × quantities × sizes floats, the size of the hulls the plan keeps
    anyway; pass rates (up to 10^7 distinct values, valued block by block at the plug-in's cost) keep none.
    """

    frame: pl.DataFrame
    valuation: Valuation
    sizes: tuple[int, ...] = ()
    found: dict[Key, FloatArray] = field(default_factory=dict)

    def values(self, quantity: Quantity, G: int | None, std: str) -> FloatArray:
        key = (quantity.value, G, std)
        if key not in self.found:
            every = self.sizes if G in self.sizes and quantity.needs_size else (G,)
            step = max(1, _CALL_ROWS // max(self.frame.height, 1))
            for start in range(0, len(every), step):
                self._value(quantity, every[start : start + step], std)
        return self.found[key]

    def _value(self, quantity: Quantity, sizes: tuple[int | None, ...], std: str) -> None:
        """The quantity at each of ``sizes`` (each cell once per size), in one call of the valuation."""
        G: int | NDArray[np.int64] | None = sizes[0]
        frame = self.frame
        if len(sizes) > 1:
            frame = pl.concat([self.frame] * len(sizes))
            G = np.repeat(np.asarray(sizes, dtype=np.int64), self.frame.height)
        values = self.valuation.values(frame, quantity, G, std).reshape(len(sizes), self.frame.height)
        values.setflags(write=False)  # shared by every ask: no caller may write into it
        for size, row in zip(sizes, values, strict=True):
            self.found[(quantity.value, size, std)] = row


@dataclass(frozen=True)
class Rows:
    """The rows a plan values: each a distinct value of the histogram (``p``, and ``k``, ``n`` when an
    estimator other than the plug-in needs them), valued by one :class:`~sigmatool.estimators.Valuation`.

    Every curve below asks :meth:`mean` for its per-prompt quantities, so the plug-in, the unbiased
    estimator and a prior's posterior mean reach the plan the same way they reach every other command.
    Rows of counts keep what they were asked in a :class:`Memo` shared with every block taken from them
    (``at``: their places in it), so each distinct (k, n, G) is valued once per plan and its re-plans.
    """

    frame: pl.DataFrame
    valuation: Valuation = field(default_factory=Valuation)
    memo: Memo | None = field(default=None, repr=False, compare=False)
    at: NDArray[np.int64] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def plugin(cls, p: FloatArray) -> Rows:
        """Pass rates valued at themselves (the plug-in estimate)."""
        return cls(pl.DataFrame({"p": np.asarray(p, dtype=np.float64)}))

    @classmethod
    def cells(cls, frame: pl.DataFrame, valuation: Valuation) -> Rows:
        """Distinct counts (``k``, ``n``, ``p``, maybe --by keys), each value asked kept (:class:`Memo`)."""
        return cls(frame, valuation, Memo(frame, valuation))

    def expect(self, sizes: tuple[int, ...]) -> None:
        """Say which sizes a plan will ask each quantity at, so that the memo values them together."""
        if self.memo is not None:
            self.memo.sizes = tuple(dict.fromkeys((*self.memo.sizes, *sizes)))

    @property
    def p(self) -> FloatArray:
        """p̂ of each row."""
        return np.asarray(self.frame["p"].cast(pl.Float64).to_numpy(), dtype=np.float64)

    @property
    def size(self) -> int:
        return self.frame.height

    def __getitem__(self, rows: slice | NDArray[np.int64]) -> Rows:
        taken = self.frame[rows] if isinstance(rows, slice) else self.frame[rows.tolist()]
        if self.memo is None:
            return Rows(taken, self.valuation)
        places = np.arange(self.size, dtype=np.int64) if self.at is None else self.at
        return Rows(taken, self.valuation, self.memo, places[rows])

    def mean(self, quantity: Quantity, G: int | None = None, std: str = "population") -> FloatArray:
        """Each row's value of the quantity under the valuation; a value the data do not identify (a size
        beyond some prompts' n with no prior to answer there) stops the plan with a line saying so."""
        if self.memo is None:
            values = self.valuation.values(self.frame, quantity, G, std)
        else:
            found = self.memo.values(Quantity(quantity), None if G is None else int(G), std)
            values = found if self.at is None else found[self.at]
        if np.isnan(values).any() and self.valuation.why_not():
            size = "the large-group limit" if G is None else f"G = {G}"
            raise DataError(
                f"the plan values every prompt at every size, and at {size} some prompts' values are not "
                f"identified by their counts ({'; '.join(self.valuation.why_not())}): give --sizes no larger "
                "than their n, --prior npmle, or --estimator plugin to assume one"
            )
        return values


def _rows(rows: Rows | FloatArray) -> Rows:
    return rows if isinstance(rows, Rows) else Rows.plugin(rows)


def expected_sigma(rows: Rows | FloatArray, G: int, std: str) -> FloatArray:
    """``E[σ](p, G)`` of each row, for one G."""
    return _rows(rows).mean(Quantity.SIGMA, G, std)


def silent(rows: Rows | FloatArray, G: int) -> FloatArray:
    """``P_silent(p, G) = p^G + (1 − p)^G`` of each row."""
    return _rows(rows).mean(Quantity.SILENT, G)


def hit(rows: Rows | FloatArray, G: int) -> FloatArray:
    """``1 − E[(1 − p)^G]``: the chance that a group of G holds a right answer (HORA's utility)."""
    return np.asarray(1.0 - _rows(rows).mean(Quantity.ALL_WRONG, G), dtype=np.float64)


def update_weight(rows: Rows | FloatArray, G: int, options: PlanOptions) -> FloatArray:
    """The expected update of the chosen rule: ``E[σ]`` (GRPO) or ``E[σ²]`` (Dr. GRPO); 0 at G = 0."""
    r = _rows(rows)
    if G == 0:
        return np.zeros(r.size, dtype=np.float64)
    if options.method == "drgrpo":
        return r.mean(Quantity.SIGMA_SQUARED, G)
    return r.mean(Quantity.SIGMA, G, options.std)


def fidelity(
    rows: Rows | FloatArray, G: int, options: PlanOptions, weight: FloatArray | None = None
) -> FloatArray:
    """``φ(G, p)``: ``E[σ] / E[sqrt(p (1 − p))]`` (GRPO) or ``1 − 1/G`` (Dr. GRPO); NaN where the G = ∞
    update is 0 (p ∈ {0, 1}, or a posterior with no mass inside) and at G = 0.

    ``weight``: the update weight at G (``update_weight``), if already known.
    """
    r = _rows(rows)
    if G == 0:
        return np.full(r.size, np.nan)
    if options.method == "drgrpo":
        inside = r.mean(Quantity.DRGRPO_LIMIT) > 0.0
        return np.where(inside, 1.0 - r.valuation.pass_at / G, np.nan)
    limit = r.mean(Quantity.GRPO_LIMIT)
    sigma = weight if weight is not None else r.mean(Quantity.SIGMA, G, options.std)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = sigma / limit
    return np.asarray(np.where(limit > 0.0, ratio, np.nan), dtype=np.float64)


def value(
    rows: Rows | FloatArray, G: int, options: PlanOptions, weight: FloatArray | None = None
) -> FloatArray:
    """The objective's per-prompt value ``v(p, G)`` (``weight``: the update weight at G, if already known)."""
    r = _rows(rows)
    if G == 0:
        return np.zeros(r.size, dtype=np.float64)
    objective = options.objective
    if objective == "signal":
        return weight if weight is not None else update_weight(r, G, options)
    if objective == "fidelity":
        with np.errstate(invalid="ignore"):
            return np.asarray(fidelity(r, G, options, weight) >= options.target, dtype=np.float64)
    if objective == "learnable":
        return np.asarray(1.0 - r.mean(Quantity.SILENT, G), dtype=np.float64)
    if objective == "hit":
        return hit(r, G)
    return r.mean(Quantity.KNAPSACK_RL, G)


def value_matrix(rows: Rows | FloatArray, sizes: tuple[int, ...], options: PlanOptions) -> FloatArray:
    """``v(p, G)`` for every row (rows) and allowed size (columns)."""
    r = _rows(rows)
    out = np.empty((r.size, len(sizes)), dtype=np.float64)
    for j, G in enumerate(sizes):
        out[:, j] = value(r, G, options)
    return out

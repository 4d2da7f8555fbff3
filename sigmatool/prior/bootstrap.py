"""Bootstrap intervals over prompts for dataset-level rates and shares, with multinomial weights on the
histogram of distinct (k, n): a replicate redraws the N prompts with replacement, which only changes how
many prompts each cell holds, so a replicate costs one pass over the distinct cells.

It covers the sampling of prompts (and of their k) for a fixed estimator; it says nothing about whether
that estimator is right for G beyond the samples, which is what the bounds are for (docs/prior.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sigmatool.errors import UsageError
from sigmatool.kernels import Quantity
from sigmatool.prior.cells import Cells, binomial_matrix, cells
from sigmatool.prior.fit import fit_prior
from sigmatool.prior.model import grid_prior
from sigmatool.prior.posterior import cell_means, check_quantity, check_std
from sigmatool.prior.refit import npmle_refits

FloatArray = NDArray[np.float64]
Statistic = Callable[[Cells], float]
ESTIMATORS = ("plugin", "unbiased", "beta", "npmle")


@dataclass(frozen=True)
class Interval:
    """Percentile bootstrap interval ``[lo, hi]`` around the full-data ``estimate``."""

    estimate: float
    lo: float
    hi: float
    level: float
    replicates: int


def prompt_draws(weights: FloatArray, groups: NDArray[np.int64], seed: int) -> Iterator[FloatArray]:
    """The bootstrap's draw, the one every interval uses: replicate after replicate, each group's prompts
    redrawn with replacement at once, as Multinomial(N_g, w / Σ_g w) counts on its rows (N_g: the group's
    weight summed and rounded, at least 1)."""
    members = [np.flatnonzero(groups == g) for g in np.unique(groups).tolist()]
    shares = [weights[rows] / weights[rows].sum() for rows in members]
    totals = [max(1, round(float(weights[rows].sum()))) for rows in members]
    rng = np.random.default_rng(seed)
    while True:
        out = np.zeros(weights.size, dtype=np.float64)
        for rows, share, total in zip(members, shares, totals, strict=True):
            out[rows] = rng.multinomial(total, share)
        yield out


def replicate_weights(c: Cells, replicates: int, seed: int) -> FloatArray:
    """Multinomial prompt counts per cell for each replicate (rows), summing to the rounded total."""
    draws = prompt_draws(c.weight, np.zeros(c.weight.size, dtype=np.int64), seed)
    return np.asarray([next(draws) for _ in range(replicates)], dtype=np.float64)


def percentile_interval(estimate: float, values: FloatArray, level: float) -> Interval:
    """The (1 − level)/2 and (1 + level)/2 quantiles of the replicate values."""
    lo, hi = np.quantile(values, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return Interval(estimate, float(lo), float(hi), level, int(values.size))


def bootstrap(
    c: Cells, statistic: Statistic, replicates: int = 1000, level: float = 0.95, seed: int = 0
) -> Interval:
    """Percentile interval of any statistic of the cells (called once per replicate)."""
    _check_replicates(replicates, level)
    weights = replicate_weights(c, replicates, seed)
    values = np.array([statistic(c.with_weight(w)) for w in weights])
    return percentile_interval(statistic(c), values, level)


def _values(c: Cells, quantity: str, G: int | None, std: str, estimator: str) -> FloatArray:
    """Per-cell values of f under the plug-in p̂ = k/n or the unbiased (hypergeometric) estimator."""
    q = Quantity(quantity)
    if estimator == "plugin":
        return q.plugin(c.k / c.n, G, std)
    if not q.has_unbiased or G is None or (q.degree(G) or 0) > int(c.n.min()):
        raise UsageError(f"no unbiased estimate of {quantity} at G = {G} from {int(c.n.min())} samples")
    return q.unbiased(c.k, c.n, G, std)


def _check_replicates(replicates: int, level: float) -> None:
    if replicates < 2 or not 0.0 < level < 1.0:
        raise UsageError(f"--ci needs a level in (0, 1) and ≥ 2 replicates, not {level:g}, {replicates}")


def _npmle_interval(
    c: Cells,
    quantity: str,
    sizes: NDArray[np.int64] | None,
    std: str,
    replicates: int,
    level: float,
    seed: int,
) -> Interval:
    """The interval with the NPMLE refitted per replicate (:func:`sigmatool.prior.refit.npmle_refits`); the
    estimate is the full data's fit, as without an interval."""
    _check_replicates(replicates, level)
    prior = fit_prior(c.k, c.n, c.weight, kind="npmle")
    grid = prior.atoms
    L = binomial_matrix(c, grid)
    weights = replicate_weights(c, replicates, seed)
    values = []
    for w, mass in zip(weights, npmle_refits(L, weights, prior), strict=True):
        joint = L * mass[None, :]
        r = joint / joint.sum(axis=1, keepdims=True)
        per_cell = cell_means(grid_prior(grid, mass), c.k, c.n, quantity, sizes, std, responsibilities=r)
        values.append(float(w @ per_cell / w.sum()))
    estimate = float(c.weight @ cell_means(prior, c.k, c.n, quantity, sizes, std) / c.total)
    return percentile_interval(estimate, np.asarray(values), level)


def bootstrap_rate(
    k: ArrayLike,
    n: ArrayLike,
    weight: ArrayLike | None,
    quantity: str,
    G: int | None = None,
    estimator: str | Sequence[float] = "npmle",
    std: str = "population",
    refit: bool = True,
    replicates: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Interval for the mean of a per-prompt quantity under an estimator (a prior is refitted per replicate
    unless ``refit`` is False, when the full-data prior's posterior means are reused)."""
    check_quantity(quantity, G)
    check_std(std)
    c = cells(k, n, weight)
    sizes = None if G is None else np.full(c.k.size, int(G), dtype=np.int64)
    if isinstance(estimator, str) and estimator in ("plugin", "unbiased"):
        per_cell = _values(c, quantity, G, std, estimator)
    elif not refit:
        prior = fit_prior(c.k, c.n, c.weight, kind=estimator)
        per_cell = cell_means(prior, c.k, c.n, quantity, sizes, std)
    elif estimator == "npmle":
        return _npmle_interval(c, quantity, sizes, std, replicates, level, seed)
    else:

        def refitted(r: Cells) -> float:
            keep = r.weight > 0
            prior = fit_prior(r.k[keep], r.n[keep], r.weight[keep], kind=estimator)
            return float(r.weight @ cell_means(prior, r.k, r.n, quantity, sizes, std) / r.total)

        return bootstrap(c, refitted, replicates, level, seed)
    weights = replicate_weights(c, replicates, seed)
    values = weights @ per_cell / weights.sum(axis=1)
    return percentile_interval(float(c.weight @ per_cell / c.total), values, level)

"""Group size under a prior: the smallest G whose posterior-expected update reaches φ* of its G = ∞ value.

For counts k of n, GRPO's group size is the smallest integer G in [min_G, max_G] with
``E[E[σ](p, G) | k, n] ≥ φ* · E[sqrt(p (1 − p)) | k, n]`` (σ with the chosen std convention); Dr. GRPO's
with ``(1 − 1/G) ≥ φ*`` where ``E[p (1 − p) | k, n] > 0``; with ``max_silent``, also
``E[P_silent(p, G) | k, n] ≤ S`` (the larger answer wins). Both sides are monotone in G (E[σ](p, G) rises
with G for every p), so a doubling search and a bisection find the answer. A cell whose posterior has no
mass inside (0, 1), or whose answer exceeds max_G, is unreachable (NaN). Under a prior, p̂ ∈ {0, 1} cells
are usually reachable: their posterior puts mass inside (0, 1). docs/theory.md §7.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sigmatool import kernels
from sigmatool.errors import UsageError
from sigmatool.kernels import Quantity
from sigmatool.kernels.grader import Grader
from sigmatool.prior.cells import cells
from sigmatool.prior.model import Prior
from sigmatool.prior.posterior import cell_means, check_std

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
Test = Callable[[IntArray, IntArray], BoolArray]


def _smallest(ok: Test, rows: IntArray, min_G: int, max_G: int) -> IntArray:
    """Per row, the smallest G in [min_G, max_G] with ok(row, G), for ok monotone in G; max_G + 1 if none."""
    answer = np.full(rows.size, max_G + 1, dtype=np.int64)
    lo = np.full(rows.size, min_G - 1, dtype=np.int64)  # largest G known to fail (or min_G − 1)
    active = np.arange(rows.size)
    G = min_G
    while active.size:
        passed = ok(rows[active], np.full(active.size, G, dtype=np.int64))
        answer[active[passed]] = G
        lo[active[~passed]] = G
        active = active[~passed]
        if G == max_G:
            break
        G = min(2 * G, max_G)
    hi = answer.copy()
    search = np.flatnonzero((hi <= max_G) & (hi - lo > 1))
    while search.size:
        mid = (lo[search] + hi[search]) // 2
        passed = ok(rows[search], mid)
        hi[search] = np.where(passed, mid, hi[search])
        lo[search] = np.where(passed, lo[search], mid)
        search = search[hi[search] - lo[search] > 1]
    return np.asarray(hi, dtype=np.int64)


Mean = Callable[[Quantity, "IntArray | None", "IntArray | None"], FloatArray]


def credit_fidelity(G: ArrayLike, K: int = 1) -> FloatArray:
    """Dr. GRPO's fidelity under pass@K credit, ``1 − K/G`` (``kernels.drgrpo_fidelity`` at K = 1)."""
    if K == 1:
        return kernels.drgrpo_fidelity(G)
    size = np.asarray(G, dtype=np.float64)
    return np.asarray(np.where(size >= K, 1.0 - K / size, np.nan), dtype=np.float64)


def _sizes(
    mean: Mean,
    count: int,
    target: float,
    min_G: int,
    max_G: int,
    objective: str,
    max_silent: float | None,
    K: int = 1,
) -> IntArray:
    """Per cell (``count`` of them), the smallest G reaching the target, max_G + 1 where none does;
    ``mean(quantity, cells, G)`` is each cell's expected quantity (all cells for None); under pass@K credit
    Dr. GRPO's fidelity is 1 − K/G at every p (docs/passk.md)."""
    limit = mean(Quantity.GRPO_LIMIT, None, None)
    rows = np.flatnonzero(limit > 0.0)
    sizes = np.full(count, max_G + 1, dtype=np.int64)
    if objective == "grpo":

        def reaches(r: IntArray, G: IntArray) -> BoolArray:
            return np.asarray(mean(Quantity.SIGMA, r, G) >= target * limit[r])

        sizes[rows] = _smallest(reaches, rows, min_G, max_G)
    else:
        drgrpo = _smallest(lambda r, G: credit_fidelity(G, K) >= target, rows[:1], min_G, max_G)
        sizes[rows] = drgrpo[0] if drgrpo.size else max_G + 1
    if max_silent is not None:

        def quiet(r: IntArray, G: IntArray) -> BoolArray:
            return np.asarray(mean(Quantity.SILENT, r, G) <= max_silent)

        sizes[rows] = np.maximum(sizes[rows], _smallest(quiet, rows, min_G, max_G))
    return sizes


def rate_group_size(
    p: ArrayLike,
    target: float,
    min_G: int = 2,
    max_G: int = 4096,
    objective: str = "grpo",
    std: str = "population",
    max_silent: float | None = None,
    grader: Grader | None = None,
) -> FloatArray:
    """:func:`posterior_group_size` of bare pass rates (no counts: each its own value, f(p) exactly), by the
    same search; NaN where none reaches the target (p ∈ {0, 1} among them).

    >>> rate_group_size([0.5, 0.3, 0.1, 0.0], 0.9).tolist()
    [7.0, 9.0, 22.0, nan]
    """
    _check(target, objective, min_G, max_G, max_silent)
    check_std(std)
    values = np.asarray(p, dtype=np.float64).ravel()

    def mean(quantity: Quantity, r: IntArray | None, G: IntArray | None) -> FloatArray:
        at = values if r is None else values[r]
        return np.asarray(quantity.plugin(at, 0 if G is None else G, std, grader), dtype=np.float64)

    K = 1 if grader is None else grader.pass_at
    sizes = _sizes(mean, values.size, target, min_G, max_G, objective, max_silent, K)
    return np.where(sizes <= max_G, sizes.astype(np.float64), np.nan)


def _check(target: float, objective: str, min_G: int, max_G: int, max_silent: float | None) -> None:
    if not 0.0 < target < 1.0:
        raise UsageError(f"--fidelity must lie strictly between 0 and 1, not {target:g}")
    if objective not in ("grpo", "drgrpo"):
        raise UsageError(f"--method must be grpo or drgrpo, not {objective!r}")
    if not 1 <= min_G <= max_G:
        raise UsageError(f"--max-G must be at least --min-G ({min_G}) and --min-G at least 1, not {max_G}")
    if max_silent is not None and not 0.0 < max_silent <= 1.0:
        raise UsageError(f"--max-silent must lie in (0, 1], not {max_silent:g}")


def posterior_group_size(
    prior: Prior,
    k: ArrayLike,
    n: ArrayLike,
    target: float,
    min_G: int = 2,
    max_G: int = 4096,
    objective: str = "grpo",
    std: str = "population",
    max_silent: float | None = None,
    grader: Grader | None = None,
) -> FloatArray:
    """Smallest G in [min_G, max_G] reaching the target under the posterior of each (k, n); NaN if none;
    with a grader, of the rewards it gives (:mod:`sigmatool.kernels.grader`)."""
    _check(target, objective, min_G, max_G, max_silent)
    check_std(std)
    k_arr, n_arr = np.broadcast_arrays(np.asarray(k), np.asarray(n))
    cells(k_arr, n_arr)  # checks the counts
    keys, inverse = np.unique(
        np.stack([n_arr.ravel(), k_arr.ravel()]).astype(np.int64), axis=1, return_inverse=True
    )
    ck, cn = keys[1], keys[0]

    def mean(quantity: Quantity, r: IntArray | None, G: IntArray | None) -> FloatArray:
        at = slice(None) if r is None else r
        return cell_means(prior, ck[at], cn[at], quantity, G, std, grader=grader)

    K = 1 if grader is None else grader.pass_at
    sizes = _sizes(mean, ck.size, target, min_G, max_G, objective, max_silent, K)
    out = np.where(sizes <= max_G, sizes.astype(np.float64), np.nan)
    return np.asarray(out[inverse.ravel()].reshape(k_arr.shape), dtype=np.float64)

"""Posterior means of per-prompt quantities under a prior, for counts k of n (docs/theory.md §7).

Every function takes ``k`` and ``n`` (broadcast; whole numbers 0 ≤ k ≤ n, n ≥ 1) and evaluates each distinct
(k, n) once: a point mass contributes ``f(p_i)``, a Beta component the closed form under its posterior
``Beta(a + k, b + n − k)``, weighted by the component's posterior weight.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sigmatool import kernels
from sigmatool.errors import UsageError
from sigmatool.kernels import QUANTITIES, Quantity
from sigmatool.kernels.grader import Grader
from sigmatool.prior.cells import cells
from sigmatool.prior.model import Prior

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def check_quantity(quantity: str, G: int | None) -> Quantity:
    """The quantity named, or a UsageError for an unknown one or a G missing where one is needed."""
    if quantity not in QUANTITIES:
        raise UsageError(f"unknown quantity {quantity!r}; choose from {', '.join(QUANTITIES)}")
    q = Quantity(quantity)
    if q.needs_size and (G is None or int(G) != G or G < 1):
        raise UsageError(f"{quantity} needs a whole group size G ≥ 1, not {G!r}")
    return q


def check_std(std: str) -> None:
    """UsageError unless std is population or bessel."""
    if std not in kernels.STD_CONVENTIONS:
        raise UsageError(f"--std must be population or bessel, not {std!r}")


def cell_means(
    prior: Prior,
    k: IntArray,
    n: IntArray,
    quantity: str,
    G: IntArray | None,
    std: str = "population",
    responsibilities: FloatArray | None = None,
    grader: Grader | None = None,
) -> FloatArray:
    """Posterior mean of f for 1-D distinct cells; ``G`` is one group size per cell (or None); with a
    grader, of f through it (:mod:`sigmatool.kernels.grader`).

    ``responsibilities`` are ``prior.responsibilities(k, n)`` when already computed (many f, one prior).
    """
    q = Quantity(quantity)
    r = prior.responsibilities(k, n) if responsibilities is None else responsibilities
    m = prior.atoms.size
    out = np.empty(k.size, dtype=np.float64)
    sizes = np.zeros(k.size, dtype=np.int64) if G is None else np.asarray(G, dtype=np.int64)
    distinct = np.unique(sizes)
    at_atoms = None
    if m:
        # f at every atom some cell weighs, for every G in one call; elsewhere every cell's weight is exactly
        # 0, and so is the term (the same bits). Big-Math's NPMLE holds 26 of its 801 grid points: a plan
        # over sizes 2..1025 spent 12 s of CPU on f at all of them, one call per G.
        held = np.any(r[:, :m] != 0.0, axis=0)
        at_atoms = np.zeros((distinct.size, m))
        # A prior fitted to counts graded by a noisy verifier (--denoise) holds rates as read: mapped back.
        atoms = prior.atoms[held] if grader is None else grader.true_rate(prior.atoms[held])
        at_atoms[:, held] = q.plugin(atoms[None, :], None if G is None else distinct[:, None], std, grader)
    for i, g in enumerate(distinct.tolist()):
        rows = np.flatnonzero(sizes == g)
        g_or_none = None if G is None else int(g)
        value = r[rows, :m] @ np.ascontiguousarray(at_atoms[i]) if at_atoms is not None else 0.0
        if prior.beta_a.size:
            A = prior.beta_a[None, :] + k[rows, None]
            B = prior.beta_b[None, :] + (n - k)[rows, None]
            value = value + (r[rows, m:] * q.beta(A, B, g_or_none, std, grader)).sum(axis=1)
        out[rows] = value
    return out


def posterior_mean(
    prior: Prior, k: ArrayLike, n: ArrayLike, quantity: str, G: int | None = None, std: str = "population"
) -> FloatArray:
    """``E[f(p) | k, n]`` for each element of the broadcast (k, n), f one of QUANTITIES."""
    check_quantity(quantity, G)
    check_std(std)
    k_arr, n_arr = np.broadcast_arrays(np.asarray(k), np.asarray(n))
    cells(k_arr, n_arr)  # checks the counts
    pairs = np.stack([n_arr.ravel(), k_arr.ravel()]).astype(np.int64)
    keys, inverse = np.unique(pairs, axis=1, return_inverse=True)
    sizes = None if G is None else np.full(keys.shape[1], int(G), dtype=np.int64)
    values = cell_means(prior, keys[1], keys[0], quantity, sizes, std)
    return np.asarray(values[inverse.ravel()].reshape(k_arr.shape), dtype=np.float64)


def posterior_silent(prior: Prior, k: ArrayLike, n: ArrayLike, G: int) -> tuple[FloatArray, FloatArray]:
    """``(E[p^G | k, n], E[(1 − p)^G | k, n])``: all-right and all-wrong probabilities; their sum is silent."""
    return posterior_mean(prior, k, n, Quantity.ALL_RIGHT, G), posterior_mean(
        prior, k, n, Quantity.ALL_WRONG, G
    )


def posterior_expected_sigma(
    prior: Prior, k: ArrayLike, n: ArrayLike, G: int, std: str = "population"
) -> FloatArray:
    """``E[E[σ](p, G) | k, n]``: the posterior-expected GRPO weight at group size G."""
    return posterior_mean(prior, k, n, Quantity.SIGMA, G, std)


def posterior_expected_sigma_squared(prior: Prior, k: ArrayLike, n: ArrayLike, G: int) -> FloatArray:
    """``E[p (1 − p) | k, n] (1 − 1/G)``: the posterior-expected Dr. GRPO weight at group size G."""
    return posterior_mean(prior, k, n, Quantity.SIGMA_SQUARED, G)


def posterior_weight_limits(prior: Prior, k: ArrayLike, n: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """``(E[sqrt(p (1 − p)) | k, n], E[p (1 − p) | k, n])``: GRPO's and Dr. GRPO's G = ∞ weights."""
    return posterior_mean(prior, k, n, Quantity.GRPO_LIMIT), posterior_mean(
        prior, k, n, Quantity.DRGRPO_LIMIT
    )


def expected_rate(
    prior: Prior,
    k: ArrayLike,
    n: ArrayLike,
    weight: ArrayLike | None,
    quantity: str,
    G: int | None = None,
    std: str = "population",
) -> float:
    """Dataset-level rate: the weighted mean over prompts of the posterior mean of f."""
    check_quantity(quantity, G)
    check_std(std)
    c = cells(k, n, weight)
    sizes = None if G is None else np.full(c.k.size, int(G), dtype=np.int64)
    return float(c.weight @ cell_means(prior, c.k, c.n, quantity, sizes, std) / c.total)

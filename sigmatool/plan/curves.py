"""Per-prompt value curves v(p, G) over the allowed group sizes, one row per distinct p, one column per size.

The objectives (docs/plan.md, docs/theory.md §8), for a prompt of pass rate p given a group of G answers:

- ``signal``, GRPO: ``E[σ](p, G)`` (times ``sqrt((G − 1)/G)`` with the Bessel std); Dr. GRPO:
  ``E[σ²](p, G) = p (1 − p) (1 − 1/G)``;
- ``learnable``: ``1 − P_silent(p, G) = 1 − p^G − (1 − p)^G``, the chance that the group is not silent;
- ``knapsack-rl``: ``(1 − p^G − (1 − p)^G) · p (1 − p)²``, Knapsack RL's value (Li et al. 2025);
- ``fidelity``: ``1`` when ``φ(G, p) ≥ φ*`` (GRPO: ``E[σ]/sqrt(p (1 − p))``; Dr. GRPO: ``1 − 1/G``), else 0.

Every curve is 0 at G = 0 (the prompt is left out) and at p ∈ {0, 1}.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from sigmatool import kernels
from sigmatool.options.plan import PlanOptions

FloatArray = NDArray[np.float64]


def expected_sigma(p: FloatArray, G: int, std: str) -> FloatArray:
    """``E[σ](p, G)`` for 1-D p and one G (the kernel)."""
    return kernels.expected_sigma(p, G, std)


def silent(p: FloatArray, G: int) -> FloatArray:
    """``P_silent(p, G) = p^G + (1 − p)^G``, as ``kernels.silent_probability`` evaluates it."""
    with np.errstate(divide="ignore"):
        return np.asarray(np.power(p, G) + np.exp(G * np.log1p(-p)), dtype=np.float64)


def update_weight(p: FloatArray, G: int, options: PlanOptions) -> FloatArray:
    """The expected update of the chosen rule: ``E[σ]`` (GRPO) or ``E[σ²]`` (Dr. GRPO); 0 at G = 0."""
    if G == 0:
        return np.zeros(p.shape, dtype=np.float64)
    if options.method == "drgrpo":
        return np.asarray(p * (1.0 - p) * (1.0 - 1.0 / G), dtype=np.float64)
    return expected_sigma(p, G, options.std)


def fidelity(p: FloatArray, G: int, options: PlanOptions, weight: FloatArray | None = None) -> FloatArray:
    """``φ(G, p)``: ``E[σ] / sqrt(p (1 − p))`` (GRPO) or ``1 − 1/G`` (Dr. GRPO); NaN at p ∈ {0, 1} and G = 0.

    ``weight``: the update weight at G (``update_weight``), if already known.
    """
    interior = (p > 0.0) & (p < 1.0)
    if G == 0:
        return np.full(p.shape, np.nan)
    if options.method == "drgrpo":
        return np.where(interior, 1.0 - 1.0 / G, np.nan)
    sigma = weight if weight is not None else expected_sigma(p, G, options.std)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = sigma / np.sqrt(p * (1.0 - p))
    return np.asarray(np.where(interior, ratio, np.nan), dtype=np.float64)


def value(p: FloatArray, G: int, options: PlanOptions, weight: FloatArray | None = None) -> FloatArray:
    """The objective's per-prompt value ``v(p, G)`` (``weight``: the update weight at G, if already known)."""
    if G == 0:
        return np.zeros(p.shape, dtype=np.float64)
    objective = options.objective
    if objective == "signal":
        return weight if weight is not None else update_weight(p, G, options)
    if objective == "fidelity":
        with np.errstate(invalid="ignore"):
            return np.asarray(fidelity(p, G, options, weight) >= options.target, dtype=np.float64)
    learnable = 1.0 - silent(p, G)
    if objective == "learnable":
        return learnable
    return np.asarray(learnable * p * (1.0 - p) ** 2, dtype=np.float64)


def value_matrix(p: FloatArray, sizes: tuple[int, ...], options: PlanOptions) -> FloatArray:
    """``v(p, G)`` for every p (rows) and allowed size (columns)."""
    out = np.empty((p.size, len(sizes)), dtype=np.float64)
    for j, G in enumerate(sizes):
        out[:, j] = value(p, G, options)
    return out

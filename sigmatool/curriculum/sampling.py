"""Drawing a step's B distinct prompts with given weights: inclusion probabilities and systematic sampling.

A step draws B distinct prompts. Prompt i is drawn with probability ``π_i = min(1, c w_i)``, c chosen so
that ``Σ π_i = B`` (the prompts whose weight would ask for more than one draw are drawn surely, and the
rest share what is left in proportion to their weights). Randomized systematic sampling (Goodman and
Kish, 1950) realises these π exactly with exactly B distinct prompts: lay the prompts in random order on a
line, each taking a segment of length π_i, and take the prompts under the points u, u + 1, …, u + B − 1
for u uniform in [0, 1). Every expectation a step's row reports is therefore ``Σ_i π_i f_i / B``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def inclusion(x: FloatArray, m: FloatArray, B: int) -> FloatArray:
    """Per distinct value, the inclusion probability π of each of its ``m`` prompts, selection weight ``x``
    each (≥ 0), such that ``Σ m π = B`` and ``π = min(1, c x)``. Raises ValueError when fewer than B
    prompts have a positive weight.

    >>> inclusion(np.array([4.0, 1.0, 1.0]), np.array([1.0, 2.0, 2.0]), 3).tolist()
    [1.0, 0.5, 0.5]
    """
    positive = x > 0
    available = float(m[positive].sum())
    if available < B - 1e-9:
        raise ValueError(
            f"only {available:,.0f} prompts have a positive weight, fewer than the {B:,} a step draws"
        )
    order = np.argsort(-x, kind="stable")
    xs, ms = x[order], m[order]
    capped = np.concatenate([[0.0], np.cumsum(ms)[:-1]])  # prompts of the values before j, all drawn surely
    rest = np.cumsum((ms * xs)[::-1])[::-1]  # Σ_{i ≥ j} m_i x_i
    with np.errstate(divide="ignore", invalid="ignore"):
        c = (B - capped) / rest
        fits = (rest > 0) & (c * xs <= 1.0 + 1e-12) & (capped <= B)
    j = int(np.argmax(fits)) if fits.any() else xs.size
    out = np.zeros_like(x)
    top = order[:j]
    out[top] = 1.0
    if j < xs.size:
        out[order[j:]] = np.minimum(c[j] * xs[j:], 1.0)
    return out


def systematic(pi: FloatArray, B: int, rng: np.random.Generator) -> IntArray:
    """B distinct indices of ``pi`` (per prompt, summing to B, each ≤ 1), index i drawn with probability
    ``pi[i]`` exactly: randomized systematic sampling. Returned in the random order they were laid out in.
    """
    order = rng.permutation(pi.size)
    ends = np.cumsum(pi[order])
    ends *= B / ends[-1]  # Σ π = B up to rounding: the last segment ends at B exactly
    points = rng.random() + np.arange(B, dtype=np.float64)
    picked = np.searchsorted(ends, points, side="right")
    return np.asarray(order[np.minimum(picked, pi.size - 1)], dtype=np.int64)

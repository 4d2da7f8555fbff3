"""The NPMLE refitted to each bootstrap replicate, as :func:`sigmatool.prior.fit.fit_npmle` fits it.

Where the full data's NPMLE is unique (its fit does not reproduce the histogram), a replicate's is found by
support reduction from the full data's masses, a few steps each; a replicate whose fit reproduces its own
histogram, and every replicate of data whose fit does, takes the interior-point start and EM, as the
estimate does there (:func:`sigmatool.prior.batched.batched_masses`, all such replicates together).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from sigmatool.prior.batched import batched_masses
from sigmatool.prior.fit import refit_masses
from sigmatool.prior.model import Prior

FloatArray = NDArray[np.float64]


def _nothing(done: int) -> None:
    pass


def npmle_refits(
    L: FloatArray, weights: FloatArray, full: Prior, advance: Callable[[int], None] = _nothing
) -> FloatArray:
    """The NPMLE's masses (rows) for each row of ``weights`` (replicates × cells of ``L``, prompt counts),
    given the full data's fit ``full``; ``advance`` is told of each finished fit."""
    out = np.zeros((weights.shape[0], L.shape[1]), dtype=np.float64)
    spread = np.full(weights.shape[0], full.reproduced)
    if not full.reproduced:
        for i, row in enumerate(weights):
            mass = refit_masses(L, row / row.sum(), full.atom_mass)
            if mass is None:
                spread[i] = True
                continue
            out[i] = mass
            advance(1)
    if spread.any():
        out[spread] = batched_masses(L, weights[spread], advance=advance)
    return out

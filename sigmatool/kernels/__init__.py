"""Numerical kernels: the quantities of docs/theory.md as pure numpy functions of (p, G) or (k, n, G).

Every kernel takes scalars or arrays, broadcasts them, and returns a float64 ndarray (0-d for scalar
input). An element outside the domain (a probability outside [0, 1], NaN, a non-integer or negative count,
k > n, G < 1) becomes NaN; only a bad *option* (``std``, ``cap``, ``max_G``, ``min_G``) raises
``ValueError``. Kernels that sum over group outcomes evaluate each distinct input once.

Notation: ``p`` success probability; ``G`` group size; ``k`` right answers out of ``n`` logged samples
(``p̂ = k / n``); ``σ = sqrt(k (G − k)) / G`` the population group std. The modules follow the sections of
docs/theory.md: :mod:`.silent` (§1–2), :mod:`.update` (§3), :mod:`.size` (§4), :mod:`.beta` (§7);
:mod:`.quantity` names every per-prompt quantity once, with its plug-in, unbiased and Beta forms.
"""

from __future__ import annotations

from sigmatool.kernels._common import MAX_SUMMED_G, STD_CONVENTIONS
from sigmatool.kernels.quantity import QUANTITIES, Quantity
from sigmatool.kernels.silent import (
    all_right_probability,
    all_right_probability_unbiased,
    all_wrong_probability,
    all_wrong_probability_unbiased,
    bessel_factor,
    dapo_expected_draws,
    dapo_still_silent_probability,
    group_std,
    hypergeometric_pmf,
    silent_probability,
    silent_probability_unbiased,
)
from sigmatool.kernels.size import group_size_law, silent_group_size
from sigmatool.kernels.update import (
    drgrpo_fidelity,
    drgrpo_weight_limit,
    expected_sigma,
    expected_sigma_squared,
    expected_sigma_squared_unbiased,
    expected_sigma_unbiased,
    fidelity,
    fidelity_expansion,
    grpo_weight_limit,
)

__all__ = [
    "MAX_SUMMED_G",
    "QUANTITIES",
    "STD_CONVENTIONS",
    "Quantity",
    "all_right_probability",
    "all_right_probability_unbiased",
    "all_wrong_probability",
    "all_wrong_probability_unbiased",
    "bessel_factor",
    "dapo_expected_draws",
    "dapo_still_silent_probability",
    "drgrpo_fidelity",
    "drgrpo_weight_limit",
    "expected_sigma",
    "expected_sigma_squared",
    "expected_sigma_squared_unbiased",
    "expected_sigma_unbiased",
    "fidelity",
    "fidelity_expansion",
    "group_size_law",
    "group_std",
    "grpo_weight_limit",
    "hypergeometric_pmf",
    "silent_group_size",
    "silent_probability",
    "silent_probability_unbiased",
]

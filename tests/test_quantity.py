"""The vocabulary of per-prompt quantities: each form checked against an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from sigmatool.kernels import Quantity

WITH_G = [q for q in Quantity if q.needs_size]


def _brute(q: Quantity, p: float, G: int) -> float:
    """f(p) from its definition, by enumerating the G answers' count of right ones."""
    j = np.arange(G + 1)
    pmf = stats.binom.pmf(j, G, p)
    silent = p**G + (1 - p) ** G
    definitions = {
        Quantity.ALL_RIGHT: p**G,
        Quantity.ALL_WRONG: (1 - p) ** G,
        Quantity.SILENT: silent,
        Quantity.SIGMA: float(pmf @ (np.sqrt(j * (G - j)) / G)),
        Quantity.SIGMA_SQUARED: float(pmf @ (j * (G - j) / G**2)),
        Quantity.KNAPSACK_RL: (1 - silent) * p * (1 - p) ** 2,
    }
    return definitions[q]


@pytest.mark.parametrize("q", WITH_G, ids=lambda q: q.value)
@pytest.mark.parametrize(("p", "G"), [(0.3, 4), (0.05, 8), (0.9, 3)])
def test_plugin_form_is_the_definition(q: Quantity, p: float, G: int) -> None:
    assert _brute(q, p, G) == pytest.approx(float(q.plugin(p, G)), rel=1e-12)


@pytest.mark.parametrize("q", WITH_G, ids=lambda q: q.value)
@pytest.mark.parametrize(("n", "G", "p"), [(10, 4, 0.3), (12, 8, 0.7), (9, 2, 0.5)])
def test_unbiased_form_averages_to_the_plugin_form(q: Quantity, n: int, G: int, p: float) -> None:
    k = np.arange(n + 1)
    mean = float(stats.binom.pmf(k, n, p) @ q.unbiased(k, np.full(n + 1, n), G))
    assert float(q.plugin(p, G)) == pytest.approx(mean, rel=1e-10, abs=1e-14)


def test_unbiased_form_is_nan_beyond_its_degree() -> None:
    assert math.isnan(float(Quantity.KNAPSACK_RL.unbiased(3, 6, 4)))


@pytest.mark.parametrize("q", list(Quantity), ids=lambda q: q.value)
@pytest.mark.parametrize(("A", "B", "G"), [(2.5, 1.5, 4), (0.7, 3.0, 6)])
def test_beta_form_is_the_integral_over_the_beta(q: Quantity, A: float, B: float, G: int) -> None:
    def integrand(p: float) -> float:
        return float(q.plugin(p, G)) * float(stats.beta.pdf(p, A, B))

    expected, _ = integrate.quad(integrand, 0.0, 1.0, limit=200)
    assert expected == pytest.approx(float(q.beta(A, B, G)), rel=1e-7, abs=1e-12)


@pytest.mark.parametrize(("q", "degree"), [(Quantity.SILENT, 16), (Quantity.SIGMA_SQUARED, 2)])
def test_degree_decides_what_n_samples_identify(q: Quantity, degree: int) -> None:
    assert degree == q.degree(16)


def test_limits_are_not_polynomials() -> None:
    assert None is Quantity.GRPO_LIMIT.degree(None)

"""The plan's value curves against the kernels, exact fractions and docs/theory.md's reference values."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sigmatool import kernels
from sigmatool.plan import curves, plan_options

FEW = settings(max_examples=75, deadline=None)
any_p = st.floats(min_value=0.0, max_value=1.0, allow_subnormal=False)
rational_p = st.fractions(min_value=0, max_value=1, max_denominator=64)


def exact_expected_sigma(p: Fraction, G: int) -> float:
    """Σ_k C(G, k) p^k (1 − p)^(G−k) sqrt(k (G − k)) / G with exact binomial weights, summed with fsum."""
    terms = (
        float(math.comb(G, k) * p**k * (1 - p) ** (G - k)) * math.sqrt(k * (G - k)) / G for k in range(G + 1)
    )
    return math.fsum(terms)


@FEW
@given(p=rational_p, G=st.integers(min_value=1, max_value=40))
def test_the_kernel_equals_the_exact_binomial_sum(p: Fraction, G: int) -> None:
    expected = exact_expected_sigma(p, G)
    result = float(curves.expected_sigma(np.array([float(p)]), G, "population")[0])
    assert expected == pytest.approx(result, rel=1e-14, abs=1e-300)


def test_bessel_std_scales_by_the_bessel_factor_as_the_kernel_does() -> None:
    p = np.linspace(0.0, 1.0, 21)
    expected = kernels.expected_sigma(p, 8, std="bessel")
    np.testing.assert_allclose(expected, curves.expected_sigma(p, 8, "bessel"), rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize(("p", "G", "phi"), [(0.5, 8, 0.9278), (0.05, 8, 0.5390)])
def test_fidelity_matches_the_reference_values(p: float, G: int, phi: float) -> None:
    assert phi == round(float(curves.fidelity(np.array([p]), G, plan_options())[0]), 4)


def test_drgrpo_fidelity_is_one_minus_one_over_the_size_inside_and_nan_at_the_ends() -> None:
    result = curves.fidelity(np.array([0.0, 0.3, 1.0]), 8, plan_options(method="drgrpo"))
    assert [True, False, True] == np.isnan(result).tolist()
    assert 0.875 == result[1]


def test_silent_probability_is_the_kernels() -> None:
    p = np.linspace(0.0, 1.0, 101)
    assert kernels.silent_probability(p, 16).tolist() == curves.silent(p, 16).tolist()


@pytest.mark.parametrize(
    ("p", "G", "expected"), [(Fraction(1, 2), 4, Fraction(7, 64)), (Fraction(1, 4), 2, Fraction(27, 512))]
)
def test_knapsack_rl_value_by_hand(p: Fraction, G: int, expected: Fraction) -> None:
    value = curves.value(np.array([float(p)]), G, plan_options(objective="knapsack-rl"))[0]
    assert float(expected) == pytest.approx(value, rel=1e-15)


@FEW
@given(p=rational_p, G=st.integers(min_value=1, max_value=64))
def test_knapsack_rl_value_is_non_silent_probability_times_info_gain(p: Fraction, G: int) -> None:
    expected = (1 - p**G - (1 - p) ** G) * p * (1 - p) ** 2
    value = curves.value(np.array([float(p)]), G, plan_options(objective="knapsack-rl"))[0]
    assert float(expected) == pytest.approx(value, rel=1e-12, abs=1e-300)


@FEW
@given(p=rational_p, G=st.integers(min_value=1, max_value=64))
def test_learnable_value_is_one_minus_the_silent_probability(p: Fraction, G: int) -> None:
    expected = 1 - p**G - (1 - p) ** G
    value = curves.value(np.array([float(p)]), G, plan_options(objective="learnable"))[0]
    assert float(expected) == pytest.approx(value, rel=1e-12, abs=1e-15)


def test_drgrpo_signal_is_the_expected_group_variance() -> None:
    p = np.linspace(0.0, 1.0, 11)
    expected = kernels.expected_sigma_squared(p, 8)
    assert expected.tolist() == curves.value(p, 8, plan_options(method="drgrpo")).tolist()


@pytest.mark.parametrize("objective", ["signal", "learnable", "knapsack-rl", "fidelity"])
def test_every_objective_is_zero_at_size_zero(objective: str) -> None:
    values = curves.value(np.array([0.2, 0.5]), 0, plan_options(objective=objective))
    assert [0.0, 0.0] == values.tolist()


@pytest.mark.parametrize("objective", ["signal", "learnable", "knapsack-rl", "fidelity"])
def test_never_or_always_solved_prompts_are_worth_nothing(objective: str) -> None:
    values = curves.value_matrix(np.array([0.0, 1.0]), (2, 8, 64, 100), plan_options(objective=objective))
    assert [[0.0] * 4] * 2 == values.tolist()


@FEW
@given(p=st.floats(min_value=0.001, max_value=0.999), target=st.floats(min_value=0.5, max_value=0.99))
def test_fidelity_value_is_the_kernel_fidelity_reaching_the_target(p: float, target: float) -> None:
    options = plan_options(objective="fidelity", target=target)
    phi = float(kernels.fidelity(p, 16))
    if abs(phi - target) > 1e-12:  # away from the knife edge, where the last bit decides
        assert float(phi >= target) == curves.value(np.array([p]), 16, options)[0]

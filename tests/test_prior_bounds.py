"""The bounds' linear programs (sigmatool.prior.bounds) against scipy: binomial rows and the χ² quantile against
scipy.stats, and every bound against scipy.optimize.linprog solving the whole grid's program from scratch."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import linprog

from sigmatool.kernels import Quantity
from sigmatool.prior import p_grid, region
from sigmatool.prior.bounds import KEPT_PROGRAMS, Region, bounds, chi2_quantile
from sigmatool.prior.cells import binomial_rows

TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


@pytest.mark.parametrize("n", [1, 2, 8, 64, 300])
def test_binomial_rows_are_scipys_pmf(n: int) -> None:
    grid = p_grid()
    expected = stats.binom.pmf(np.arange(n + 1)[:, None], n, grid[None, :])
    assert 0.0 == pytest.approx(float(np.abs(binomial_rows(n, grid) - expected).max()), abs=1e-13)


@pytest.mark.parametrize("df", [1, 2, 3, 8, 9, 64, 65, 130, 1001])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99, 0.999])
def test_chi2_quantile_is_scipys(df: int, level: float) -> None:
    assert stats.chi2.ppf(level, df) == pytest.approx(chi2_quantile(level, df), rel=1e-11)


def _linprog(space: Region, numerator: np.ndarray, denominator: np.ndarray) -> tuple[float, float]:
    """min and max of numerator·π / denominator·π by Charnes–Cooper over the whole grid, written out
    independently (variables y, d⁺, d⁻, t; the deviations' box as rows), solved by scipy from scratch."""
    con = space.constraints
    K, P = con.A.shape
    rs = con.radius * np.r_[con.s, con.s]
    A_eq = np.vstack(
        [
            np.hstack([con.A, -np.eye(K), np.eye(K), -con.h[:, None]]),
            np.r_[np.ones(P), np.zeros(2 * K), -1.0],
            np.r_[denominator, np.zeros(2 * K + 1)],
        ]
    )
    b_eq = np.r_[np.zeros(K + 1), 1.0]
    A_ub = np.vstack(
        [
            np.r_[np.zeros(P), 1.0 / con.s, 1.0 / con.s, -con.l1],
            np.hstack([np.zeros((2 * K, P)), np.eye(2 * K), -rs[:, None]]),
        ]
    )
    cost = np.r_[numerator, np.zeros(2 * K + 1)]
    ends = []
    for sign in (1.0, -1.0):
        found = linprog(sign * cost, A_ub=A_ub, b_ub=np.zeros(2 * K + 1), A_eq=A_eq, b_eq=b_eq, options=TIGHT)
        assert found.status == 0
        ends.append(sign * float(found.fun))
    return ends[0], ends[1]


def _exact(index: list[int], mass: list[float], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The k-histogram of 10^12 prompts that atoms at these grid points imply for n samples."""
    p = p_grid()[index]
    k = np.arange(n + 1)
    return k, 1e12 * (np.array(mass)[None, :] * stats.binom.pmf(k[:, None], n, p[None, :])).sum(axis=1)


@pytest.fixture(scope="module")
def small() -> Region:
    """300 prompts with 8 samples each: a wide region."""
    k = np.random.default_rng(3).binomial(8, np.random.default_rng(4).beta(0.6, 0.7, 300))
    return region(k, 8, None)


@pytest.fixture(scope="module")
def tight() -> Region:
    """10^12 prompts, 16 samples each, from atoms off the coarse grid the programs start from: a region so
    narrow that the coarse grid holds no F in it, and the programs fall back on the whole grid."""
    k, w = _exact([3, 205, 421, 613, 797], [0.2, 0.3, 0.1, 0.25, 0.15], 16)
    return region(k, 16, w)


@pytest.mark.parametrize("fixture", ["small", "tight"])
@pytest.mark.parametrize(
    ("quantity", "G"), [("silent", 4), ("silent", 40), ("sigma", 8), ("grpo_limit", None)]
)
def test_a_mean_is_scipys_linear_program(
    fixture: str, quantity: str, G: int | None, request: pytest.FixtureRequest
) -> None:
    space: Region = request.getfixturevalue(fixture)
    f = Quantity(quantity).plugin(space.grid, G)
    expected = _linprog(space, f, np.ones(space.grid.size))
    assert expected == pytest.approx(space.linear(f), abs=1e-9)


@pytest.mark.parametrize("fixture", ["small", "tight"])
@pytest.mark.parametrize(("lo", "hi"), [(0.0, 0.1), (0.3, 0.5), (0.9, 1.0)])
def test_a_share_is_scipys_linear_program(
    fixture: str, lo: float, hi: float, request: pytest.FixtureRequest
) -> None:
    space: Region = request.getfixturevalue(fixture)
    f = Quantity("sigma").plugin(space.grid, 8)
    inside = (space.grid >= lo) & (space.grid <= hi)
    expected = _linprog(space, f * inside, f)
    assert expected == pytest.approx(space.ratio(f * inside, f), abs=1e-9)


def test_a_region_answers_again_from_its_kept_programs(small: Region) -> None:
    f = Quantity("silent").plugin(small.grid, 4)
    first = small.linear(f)
    small.linear(Quantity("silent").plugin(small.grid, 16))
    assert first == pytest.approx(small.linear(f), abs=1e-12)


def test_bounds_print_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    bounds([0, 2, 3, 5], 5, [3, 4, 4, 2], "silent", 8)
    assert ("", "") == capfd.readouterr()


def test_the_narrow_region_needs_the_whole_grid(tight: Region) -> None:
    tight.linear(Quantity("silent").plugin(tight.grid, 4))
    program = next(iter(tight.programs.values()))
    assert tight.grid.size + 2 * 17 + 1 == program.columns.size


def test_a_region_keeps_only_its_last_programs(small: Region) -> None:
    f = Quantity("silent").plugin(small.grid, 4)
    for lo in np.linspace(0.0, 0.9, KEPT_PROGRAMS):
        small.ratio(f * (small.grid >= lo), (small.grid >= lo).astype(np.float64))
    assert KEPT_PROGRAMS == len(small.programs)

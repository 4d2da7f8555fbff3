"""A shuffled dataloader's batches: the kept count of m distinct prompts (sigmatool.kernels.shuffled),
against every subset and every reward of small datasets."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from sigmatool.kernels.shuffled import kept_law, short_after, short_mean

Q = [
    Fraction(1, 10),
    Fraction(3, 10),
    Fraction(1, 2),
    Fraction(7, 10),
    Fraction(9, 10),
    Fraction(2, 5),
    Fraction(1),
]


def _enumerated(m: int, T: int) -> tuple[float, float]:
    """(P(S_m < T), E[S_m; S_m < T]) over every m-subset (equally likely) and every reward vector."""
    subsets = list(itertools.combinations(range(len(Q)), m))
    short, mean = Fraction(0), Fraction(0)
    for subset in subsets:
        for kept in itertools.product((0, 1), repeat=m):
            chance = Fraction(1, len(subsets))
            for i, x in zip(subset, kept, strict=True):
                chance *= Q[i] if x else 1 - Q[i]
            if sum(kept) < T:
                short += chance
                mean += chance * sum(kept)
    return float(short), float(mean)


@pytest.mark.parametrize(("m", "T"), [(1, 1), (2, 2), (3, 2), (4, 3), (5, 5), (7, 6)])
def test_the_kept_count_of_distinct_prompts_is_the_enumerations(m: int, T: int) -> None:
    law = kept_law([float(q) for q in Q], [1] * len(Q))
    short, mean = _enumerated(m, T)
    assert float(short_after(law, [m], T)[0]) == pytest.approx(short, rel=1e-12, abs=1e-15)
    assert short_mean(law, m, T) == pytest.approx(mean, rel=1e-12, abs=1e-15)


def test_prompts_that_share_a_value_are_one_binomial() -> None:
    # Laws trimmed where they fall below 1e-16 of their peak: the same answers, whatever the grouping.
    shared = kept_law([0.3, 0.8], [40, 25])
    apart = kept_law([0.3] * 40 + [0.8] * 25, [1] * 65)
    for m, T in ((10, 4), (30, 16), (60, 31)):
        assert short_after(shared, [m], T)[0] == pytest.approx(short_after(apart, [m], T)[0], rel=1e-9)

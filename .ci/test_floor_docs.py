"""At the dependency floors every documented example runs and prints what the docs show, to float rounding.

Older numpy and polars releases round some sums and logarithms differently in the last of 17 digits, so
this compares numbers to 1e-12 relative and all other text exactly; tests/test_docs.py compares every
character with the releases `make install` brings.
"""

from __future__ import annotations

import math
import re

import pytest

from tests.test_docs import EXAMPLES, run_example

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def same_to_rounding(shown: str, printed: str) -> bool:
    """The same text with the same numbers, each equal to 1e-12 relative."""
    if NUMBER.split(shown.rstrip()) != NUMBER.split(printed.rstrip()):
        return False
    pairs = zip(NUMBER.findall(shown), NUMBER.findall(printed), strict=True)
    return all(math.isclose(float(a), float(b), rel_tol=1e-12) for a, b in pairs)


def test_rounding_is_all_that_is_forgiven() -> None:
    assert same_to_rounding("8,0.27265698133276445,x", "8,0.2726569813327645,x")
    assert not same_to_rounding("8,0.2726,x", "8,0.2727,x")
    assert not same_to_rounding("8,0.2726,x", "8,0.2726,y")


@pytest.mark.parametrize(("command", "shown"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES])
def test_documented_example_prints_what_the_docs_show(command: str, shown: list[str]) -> None:
    code, out = run_example(command)
    assert (0, len(shown)) == (code, len(out))
    assert [] == [(s, o) for s, o in zip(shown, out, strict=True) if not same_to_rounding(s, o)]

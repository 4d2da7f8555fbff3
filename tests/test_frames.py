"""Short columns go through Python lists, long ones through numpy: the same column either way."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sigmatool.frames import SHORT, frame, series

DTYPES = st.sampled_from([np.float64, np.int64, np.bool_])


@given(hnp.arrays(DTYPES, st.integers(0, 50)))
def test_a_short_column_is_the_one_numpy_gives(values: np.ndarray) -> None:
    got = series("x", values)
    assert got.equals(pl.Series("x", values), null_equal=True)
    assert got.dtype == pl.Series("x", values).dtype


@pytest.mark.parametrize("size", [SHORT, SHORT + 1])
def test_both_sides_of_the_cut_keep_nan_and_infinities(size: int) -> None:
    values = np.linspace(-1.0, 1.0, size)
    values[:3] = [np.nan, np.inf, -np.inf]
    got = series("x", values)
    assert got.dtype == pl.Float64
    assert got.null_count() == 0
    np.testing.assert_array_equal(got.to_numpy(), values)


def test_a_frame_keeps_its_columns_in_order() -> None:
    built = frame({"b": np.array([1, 2]), "a": ["x", "y"], "c": np.array([0.5, np.nan])})
    assert built.columns == ["b", "a", "c"]
    assert built.schema == pl.Schema({"b": pl.Int64, "a": pl.String, "c": pl.Float64})

"""Per-prompt rows meet their value's table on what the user gave, and a row left without one is a bug."""

from __future__ import annotations

import polars as pl
import pytest

from sigmatool.errors import SigmaError
from sigmatool.joins import UnmatchedRowsError, counts_key, join_frame, join_values

TABLE = pl.DataFrame({"k": [1, 2, 1], "n": [2, 4, 4], "value": [10.0, 20.0, 30.0]})
RATES = pl.DataFrame({"p": [0.25, 0.5, 0.7], "value": [1.0, 2.0, 3.0]})


def test_rows_meet_their_counts_in_row_order() -> None:
    rows = pl.LazyFrame({"k": [2, 1, 1, 2], "n": [4, 4, 2, 4]})
    assert [20.0, 30.0, 10.0, 20.0] == join_values(rows, TABLE, ["k", "n"]).collect()["value"].to_list()


def test_rows_meet_their_own_rate_in_row_order() -> None:
    rows = pl.LazyFrame({"p": [0.7, 0.25, 0.7, 0.5]})
    assert [3.0, 1.0, 3.0, 2.0] == join_values(rows, RATES, ["p"]).collect()["value"].to_list()


def test_a_rate_a_bit_away_from_the_tables_is_a_bug() -> None:
    rows = pl.LazyFrame({"p": [0.5, 0.7000000000000001]})
    with pytest.raises(UnmatchedRowsError, match=r"p = 0\.7000000000000001"):
        join_values(rows, RATES, ["p"]).collect(engine="streaming")


def test_counts_missing_from_the_table_are_a_bug() -> None:
    rows = pl.LazyFrame({"k": [1, 3], "n": [2, 4]})
    with pytest.raises(UnmatchedRowsError, match="k = 3"):
        join_values(rows, TABLE, ["k", "n"]).collect(engine="streaming")


def test_the_bug_is_not_a_problem_for_the_user_to_fix() -> None:
    assert not issubclass(UnmatchedRowsError, SigmaError)


def test_a_row_that_needs_no_value_gets_none() -> None:
    rows = pl.LazyFrame({"p": [0.5, None, 0.3], "usable": [True, False, False]})
    out = join_values(rows, RATES, ["p"], needed=pl.col("usable")).collect()
    assert [2.0, None, None] == out["value"].to_list()


def test_the_error_can_be_the_callers() -> None:
    rows = pl.LazyFrame({"p": [0.3]})
    with pytest.raises(ValueError, match="without a value"):
        join_values(rows, RATES, ["p"], error=ValueError).collect()


def test_a_batch_in_memory_is_checked_too() -> None:
    with pytest.raises(UnmatchedRowsError):
        join_frame(pl.DataFrame({"p": [0.5, 0.3]}), RATES, ["p"])


def test_many_distinct_rates_are_found_by_search() -> None:
    table = pl.DataFrame({"p": [i / 100_000 for i in range(100_000)]}).with_columns(
        (pl.col("p") * 2).alias("double")
    )
    rows = table.select("p").reverse().lazy()
    out = join_values(rows, table, ["p"]).collect(engine="streaming")
    assert (out["p"] * 2).to_list() == out["double"].to_list()


def test_every_count_pair_has_its_own_key() -> None:
    pairs = pl.DataFrame([(k, n) for n in range(17) for k in range(n + 1)], schema=["k", "n"], orient="row")
    keys = pairs.select(counts_key(pl.col("k"), pl.col("n"), 16))["k"]
    assert pairs.height == keys.n_unique()


@pytest.mark.parametrize(("k", "n"), [(0, 17), (5, 4), (-1, 4)])
def test_a_pair_outside_the_table_has_no_key(k: int, n: int) -> None:
    key = pl.select(counts_key(pl.lit(k), pl.lit(n), 16)).item()
    assert key is None

"""Many distinct pass rates stream as rows: the same answers as the histogram, within 1e-15."""

from __future__ import annotations

import io
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from sigmatool import groupsize, silent
from sigmatool.load import dataset, histogram, rows, streams
from sigmatool.options import BudgetOptions, GroupSizeOptions, InputOptions, Segments, SilentOptions
from tests.conftest import BIGMATH, invoke

RELATIVE = 1e-15
# The checking pass's sums against the exact ones: the mean's own rounding (half a unit in the last place, up
# to 2^-53 relative) and the rows' powers' rounding errors, of either sign, averaged.
TWO_ROUNDINGS = 2.0**-52


@pytest.fixture(scope="module")
def continuous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(4)
    size = 60_000
    p = np.concatenate([rng.random(size - 6), [0.0, 1.0, 0.0, 0.5, 1e-9, 1 - 1e-9]])
    path = tmp_path_factory.mktemp("rows") / "continuous.parquet"
    pl.DataFrame({"pass_rate": p, "source": rng.choice(["a", "b", "c"], size)}).write_parquet(path)
    return path


def test_distinct_rates_stream(continuous: Path) -> None:
    with dataset(InputOptions(paths=(str(continuous),))) as ds:
        assert streams(ds)


def test_few_distinct_rates_make_a_histogram() -> None:
    with dataset(InputOptions(paths=(str(BIGMATH),))) as ds:
        assert not streams(ds)


@pytest.mark.parametrize(("by", "bins"), [((), None), (("source",), None), ((), 10), (("source",), 7)])
def test_silent_summary_is_the_histograms(continuous: Path, by: tuple[str, ...], bins: int | None) -> None:
    with dataset(InputOptions(paths=(str(continuous),), by=by)) as ds:
        from_rows = silent.summarize(rows(ds).frame, by, [2, 8, 100], cap=4, bins=bins)
        from_histogram = silent.summarize(histogram(ds).frame, by, [2, 8, 100], cap=4, bins=bins)
    assert_frame_equal(from_histogram, from_rows, check_exact=False, rel_tol=RELATIVE, abs_tol=0.0)


def test_silent_per_prompt_is_the_histograms(continuous: Path) -> None:
    with dataset(InputOptions(paths=(str(continuous),))) as ds:
        from_rows = silent.per_prompt(ds, rows(ds).frame, [4, 8]).collect()
        from_histogram = silent.per_prompt(ds, histogram(ds).frame, [4, 8]).collect()
    assert_frame_equal(from_histogram, from_rows, check_exact=False, rel_tol=RELATIVE, abs_tol=0.0)


def test_bad_values_stop_streamed_rows_as_they_stop_the_histogram(tmp_path: Path) -> None:
    p = np.random.default_rng(1).random(30_000).astype(object)
    p[[7, 20_000]] = [1.5, "abc"]
    path = tmp_path / "bad.csv"
    pl.DataFrame({"pass_rate": p.astype(str)}).write_csv(path)
    result = invoke("silent", path, "--format", "csv")
    assert 1 == result.exit_code
    assert "outside [0, 1] at row 8" in result.stderr
    assert "not a number at row 20001" in result.stderr


def test_skipped_and_null_rows_are_noted_alike(tmp_path: Path) -> None:
    values = [repr(float(x)) for x in np.random.default_rng(2).random(30_000)]
    values[3], values[4] = "", "7"
    path = tmp_path / "gaps.csv"
    path.write_text("pass_rate\n" + "\n".join(values) + "\n")
    result = invoke("silent", path, "--skip-invalid", "--format", "csv")
    assert 0 == result.exit_code
    assert "skipped 1 row(s) with an invalid value" in result.stderr
    assert "skipped 1 row(s) with a null 'pass_rate'" in result.stderr
    assert [29_998] == pl.read_csv(io.StringIO(result.stdout))["prompts"].to_list()


@pytest.mark.parametrize(
    ("by", "bins", "options"),
    [
        ((), 10, GroupSizeOptions(0.9)),
        (("source",), 7, GroupSizeOptions(0.95, law=True)),
        (("source",), None, GroupSizeOptions(0.9, min_size=4, uniform=3, max_silent=0.2, max_size=300)),
        ((), 3, GroupSizeOptions(0.9, std="bessel", max_size=64, law=True)),
    ],
)
def test_groupsize_summary_is_the_histograms(
    continuous: Path, by: tuple[str, ...], bins: int | None, options: GroupSizeOptions
) -> None:
    with dataset(InputOptions(paths=(str(continuous),), by=by)) as ds:
        from_rows = groupsize.summarize(rows(ds).frame, by, options, bins=bins)
        from_histogram = groupsize.summarize(histogram(ds).frame, by, options, bins=bins)
    assert_frame_equal(from_histogram, from_rows, check_exact=False, rel_tol=RELATIVE, abs_tol=0.0)


@pytest.mark.parametrize("streamed", [True, False])
def test_the_overall_summary_is_the_summary_without_by_or_bins(continuous: Path, streamed: bool) -> None:
    # The table view's headline comes from the same sums as the table: it must be the plain summary.
    from sigmatool import budget

    with dataset(InputOptions(paths=(str(continuous),), by=("source",))) as ds:
        values = rows(ds).frame if streamed else histogram(ds).frame
        got_silent = silent.summaries(values, ("source",), SilentOptions((2, 8, 100), cap=4, bins=7)).overall
        want_silent = silent.summarize(values, (), [2, 8, 100], cap=4)
        got_budget = budget.summaries(
            values, ("source",), BudgetOptions((8, float("inf")), segments=Segments(5))
        ).overall
        want_budget = budget.summarize(values, (), [8, float("inf")], bins=5)
    assert_frame_equal(want_silent, got_silent, check_exact=False, rel_tol=RELATIVE, abs_tol=0.0)
    assert_frame_equal(want_budget, got_budget, check_exact=False, rel_tol=RELATIVE, abs_tol=0.0)


@pytest.mark.parametrize(("topics", "stream"), [(50_000, True), (10, False)])
def test_many_distinct_rates_in_many_groups_stream(tmp_path: Path, topics: int, stream: bool) -> None:
    # Continuous rates: in 50,000 topics nearly every (topic, p) pair is new, and the histogram would be as
    # large as the input; in 10 topics, 1,001 distinct rates (no grid of n ≤ 128) make at most 10,010 rows.
    rng = np.random.default_rng(5)
    size = 40_000
    frame = pl.DataFrame(
        {"topic": rng.integers(0, topics, size), "pass_rate": rng.integers(0, 1001, size) / 1000}
    )
    path = tmp_path / "topics.parquet"
    frame.write_parquet(path)
    with dataset(InputOptions(paths=(str(path),), by=("topic",))) as ds:
        assert streams(ds) is stream
        from_rows = silent.summarize(rows(ds).frame, ("topic",), [4, 8])
        from_histogram = silent.summarize(histogram(ds).frame, ("topic",), [4, 8])
    assert_frame_equal(from_histogram, from_rows, check_exact=False, rel_tol=RELATIVE, abs_tol=0.0)


def test_rates_on_a_grid_never_stream_however_many_groups(tmp_path: Path) -> None:
    # k/64 rates are counts of 64 (the unbiased estimator reads them), which streamed rows do not carry.
    rng = np.random.default_rng(5)
    frame = pl.DataFrame(
        {"topic": rng.integers(0, 50_000, 40_000), "pass_rate": rng.integers(0, 65, 40_000) / 64}
    )
    frame.write_parquet(tmp_path / "topics.parquet")
    with dataset(InputOptions(paths=(str(tmp_path / "topics.parquet"),), by=("topic",))) as ds:
        assert not streams(ds)


def test_batches_made_ahead_come_in_their_order() -> None:
    from sigmatool.sums import ahead

    assert list(range(100)) == list(ahead(iter(range(100)), depth=3))


def test_an_error_while_making_batches_is_raised_to_their_user() -> None:
    from sigmatool.sums import ahead

    def failing() -> Iterator[int]:
        yield 1
        raise ValueError("unreadable batch")

    got: list[int] = []
    with pytest.raises(ValueError, match="unreadable batch"):
        got.extend(ahead(failing()))
    assert [1] == got


def test_a_user_that_stops_early_stops_the_maker() -> None:
    import threading

    from sigmatool.sums import ahead

    made = []

    def endless() -> Iterator[int]:
        n = 0
        while True:
            made.append(n)
            yield n
            n += 1

    for item in ahead(endless(), depth=2):
        if item == 5:
            break
    assert not [t for t in threading.enumerate() if t.name == "sigmatool-batches"]
    assert len(made) <= 5 + 1 + 2 + 1  # what was used, the queue's depth, and the one being made


def test_the_checking_pass_sums_plain_rates(continuous: Path) -> None:
    from sigmatool.load import Totals

    asked = silent.totals_asked(SilentOptions((2, 8, 100)), ())
    assert isinstance(asked, Totals)
    with dataset(InputOptions(paths=(str(continuous),))) as ds:
        assert rows(ds, totals=asked).totals is not None


def test_a_summary_from_the_checking_pass_is_the_streamed_rows(continuous: Path) -> None:
    options = SilentOptions((2, 8, 100), cap=4)
    with dataset(InputOptions(paths=(str(continuous),))) as ds:
        checked = rows(ds, totals=silent.totals_asked(options, ()))
        fused = silent.summaries(checked.frame, (), options, totals=checked.totals).table
        streamed = silent.summarize(checked.frame, (), [2, 8, 100], cap=4)
    assert_frame_equal(streamed, fused, check_exact=False, rel_tol=RELATIVE, abs_tol=0.0)


def exact_mean_of_powers(values: np.ndarray, G: int, complement: bool = False) -> Fraction:
    """The exact mean of x^G (of (1 − x)^G with ``complement``) over float64 values in [0, 1], in integers:
    each value is n / 2^e, so each power is n^G / 2^(eG), all put over the largest such denominator."""
    ratios = [float(x).as_integer_ratio() for x in values]
    if complement:
        ratios = [(d - n, d) for n, d in ratios]
    shifts = [d.bit_length() - 1 for _, d in ratios]
    top = max(shifts) * G
    total = sum(n**G << (top - e * G) for (n, _), e in zip(ratios, shifts, strict=True))
    return Fraction(total, (1 << top) * len(values))


@pytest.mark.parametrize("G", [2, 8, 100])
def test_the_checking_pass_sums_are_the_exact_sums(continuous: Path, G: int) -> None:
    # polars' powers of each row (repeated products below G = 10) and the fixed-point sums, against the
    # exact powers of the rows' p and 1 − p, added up as fractions.
    p = pl.read_parquet(continuous)["pass_rate"].to_numpy()
    with dataset(InputOptions(paths=(str(continuous),))) as ds:
        checked = rows(ds, totals=silent.totals_asked(SilentOptions((G,)), ()))
        summary = silent.summaries(checked.frame, (), SilentOptions((G,)), totals=checked.totals).table
    for column, complement in (("all_right_rate", False), ("all_wrong_rate", True)):
        exact = exact_mean_of_powers(p, G, complement)
        assert abs(Fraction(summary[column][0]) - exact) <= TWO_ROUNDINGS * exact


@pytest.mark.parametrize("G", [2, 5, 8, 9, 10, 100])
def test_each_rows_powers_in_the_checking_pass_are_within_their_roundings(G: int) -> None:
    # Below G = 10 repeated products (G − 1 roundings), from 10 up pow (one), each against the exact power
    # of p, and of 1 − p as rounded to float64; below float64's normal range, within G of its least step.
    from sigmatool.sums import FIXED_POINT

    rng = np.random.default_rng(G)
    p = np.concatenate([rng.random(1500) + rng.random(1500) * 2.0**-60, rng.random(300) ** 6])
    asked = silent.totals_asked(SilentOptions((G,)), ())
    assert asked is not None
    scaled = pl.LazyFrame({"p": p}).select(expr.alias(name) for name, expr in asked.stages[0]).collect()
    roundings = Fraction(max(G - 1, 1) if G < 10 else 1, 2**53)
    for column, base in ((f"all_right.{G}", p), (f"all_wrong.{G}", 1.0 - p)):
        got = scaled[f"{column}.scaled"].to_numpy() / FIXED_POINT
        for value, x in zip(got, base, strict=True):
            exact = Fraction(float(x)) ** G
            assert abs(Fraction(float(value)) - exact) <= max(roundings * exact, Fraction(G, 2**1074))


def test_fixed_point_sums_are_correctly_rounded_in_any_order() -> None:
    # Values of mean 0.5 and of mean 1e-4, in several batches and shuffled: the same bits, those of the
    # correctly rounded sum.
    import math

    from sigmatool.sums import fixed_point_stages, fixed_point_sums, fixed_point_total, with_stages

    rng = np.random.default_rng(11)
    for values in (rng.random(50_000), rng.random(50_000) ** 3 * 4e-4):
        totals = set()
        for order in (values, rng.permutation(values)):
            batches = pl.concat([pl.LazyFrame({"x": part}) for part in np.array_split(order, 7)])
            parts = with_stages(batches, fixed_point_stages([("x", pl.col("x"))]))
            totals.add(float(fixed_point_total(parts.select(fixed_point_sums("x")).collect(), "x")))
        assert {math.fsum(values)} == totals


@pytest.mark.parametrize("bad", [1.5, float("nan"), None, -0.0 - 1e-9])
def test_an_unusable_row_leaves_the_sums_to_the_checks(tmp_path: Path, bad: float | None) -> None:
    from sigmatool.load.rows import checked_totals

    p: list[float | None] = list(np.random.default_rng(3).random(30_000))
    p[17] = bad
    path = tmp_path / "rates.parquet"
    pl.DataFrame({"pass_rate": p}, schema={"pass_rate": pl.Float64}).write_parquet(path)
    asked = silent.totals_asked(SilentOptions((8,)), ())
    assert asked is not None
    with dataset(InputOptions(paths=(str(path),))) as ds:
        assert checked_totals(ds, asked) is None


def test_only_plain_plugin_summaries_are_asked_of_the_checking_pass() -> None:
    assert [None, None, None] == [
        silent.totals_asked(SilentOptions((8,), bins=4), ()),
        silent.totals_asked(SilentOptions((8,)), ("source",)),
        silent.totals_asked(SilentOptions((8, float("inf"))), ()),
    ]


def test_sums_of_small_values_from_the_checking_pass_are_the_exact_sums(tmp_path: Path) -> None:
    # p ≤ 1/2 at G = 40: every value below 2^-40, so no whole part after scaling by 2^26; the remainders'
    # float sum is then the sum, within a rounding or so.
    p = np.random.default_rng(6).random(60_000) / 2
    path = tmp_path / "low.parquet"
    pl.DataFrame({"pass_rate": p}).write_parquet(path)
    with dataset(InputOptions(paths=(str(path),))) as ds:
        checked = rows(ds, totals=silent.totals_asked(SilentOptions((40,)), ()))
        summary = silent.summaries(checked.frame, (), SilentOptions((40,)), totals=checked.totals).table
    exact = exact_mean_of_powers(p, 40)
    assert abs(Fraction(summary["all_right_rate"][0]) - exact) <= TWO_ROUNDINGS * exact

"""Analyses return results; views and figures only format them.

Every value a view shows was computed beforehand: no view, and no result, carries a callable (a closure
that would compute again when the table is drawn). Each output column is declared once, and the table
view and the report both head it with that declaration.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pytest

from sigmatool import budget, columns, estimators, groupsize, load, silent
from sigmatool import examplerun as er
from sigmatool import track as tr
from sigmatool.options import BeyondOptions, BudgetOptions, GroupSizeOptions, InputOptions, SilentOptions
from sigmatool.render import View
from sigmatool.report.page import cell, table
from sigmatool.track import summary_frame
from sigmatool.track import view as track_view

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "toy_pass_rates.csv"
BY = ("source",)


def callables(value: object, path: str = "") -> Iterator[str]:
    """The paths of every callable held in ``value``'s dataclass fields, lists, tuples and dicts."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from callables(getattr(value, f.name), f"{path}.{f.name}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from callables(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from callables(item, f"{path}[{key!r}]")
    elif callable(value):
        yield path


@pytest.fixture(scope="module")
def hist() -> pl.DataFrame:
    inputs = InputOptions((str(SAMPLE),), k_col="k", n_col="n", by=BY)
    with load.dataset(inputs) as ds:
        return load.histogram(ds).frame


# The results' shape and views, at every G a plain value (the small run identifies no prior beyond its n).
PLUGIN = "plugin"


def _silent(hist: pl.DataFrame, by: tuple[str, ...]) -> silent.SilentResult:
    options = SilentOptions((4.0, 8.0), PLUGIN, bins=3 if not by else None)
    val = estimators.valuation(hist, by, options.sizes, PLUGIN)
    return silent.analyse(hist, by, options, val, BeyondOptions(), spark=True, figure=True)


def _budget(hist: pl.DataFrame, by: tuple[str, ...]) -> budget.BudgetResult:
    options = BudgetOptions((8.0, float("inf")), PLUGIN)
    return budget.analyse(hist, by, options, estimators.valuation(hist, by, options.sizes, PLUGIN))


def _groupsize(hist: pl.DataFrame, by: tuple[str, ...]) -> groupsize.GroupSizeResult:
    return groupsize.analyse(hist, by, GroupSizeOptions(), estimators.valuation(hist, by), figure=True)


ANALYSES: dict[
    str, tuple[Callable[[pl.DataFrame, tuple[str, ...]], typing.Any], Callable[[typing.Any], View]]
] = {
    "silent": (_silent, silent.SilentResult.view),
    "budget": (_budget, budget.BudgetResult.view),
    "groupsize": (_groupsize, groupsize.GroupSizeResult.view),
}


@pytest.fixture(scope="module")
def tracked() -> tr.TrackResult:
    rows, _ = er.generate(er.RunSpec(prompts=32, steps=4, batch=16, group_size=4, drift=0.1, seed=3))
    log = rows.lazy().select(
        "step",
        pl.col("uid").alias("group"),
        pl.col("prompt_id").alias("prompt"),
        pl.col("acc").alias("right"),
        pl.lit(True).alias("usable"),
    )
    return tr.track(log)


@pytest.mark.parametrize("by", [(), BY])
@pytest.mark.parametrize("name", ANALYSES)
def test_a_result_holds_no_callable(hist: pl.DataFrame, name: str, by: tuple[str, ...]) -> None:
    analyse, _ = ANALYSES[name]
    assert [] == list(callables(analyse(hist, by)))


@pytest.mark.parametrize("by", [(), BY])
@pytest.mark.parametrize("name", ANALYSES)
def test_a_view_holds_no_callable(hist: pl.DataFrame, name: str, by: tuple[str, ...]) -> None:
    analyse, view = ANALYSES[name]
    assert [] == list(callables(view(analyse(hist, by))))


@pytest.mark.parametrize("summary", [False, True])
def test_the_track_view_holds_no_callable(tracked: tr.TrackResult, summary: bool) -> None:
    assert [] == list(callables(track_view(tracked, summary)))


def test_the_track_result_holds_no_callable(tracked: tr.TrackResult) -> None:
    assert [] == list(callables(tracked))


def test_a_view_has_no_field_for_a_callable() -> None:
    hints = typing.get_type_hints(View)
    assert [] == [name for name, hint in hints.items() if "Callable" in str(hint)]


def test_the_walk_finds_a_callable() -> None:
    # The walk itself must be able to fail: a closure in a nested field is found.
    assert [".footer[0]"] == list(callables(View(footer=[lambda: "late"])))  # type: ignore[list-item]


def test_the_silent_sparkline_is_the_curve_over_all_prompts(hist: pl.DataFrame) -> None:
    result = _silent(hist, ())
    assert result.spark is not None
    assert (
        tuple(silent.summarize(hist, (), silent.grid((4.0, 8.0)), estimator=PLUGIN)["silent_rate"])
        == result.spark.y
    )


def test_the_silent_sparkline_is_over_all_prompts_with_by(hist: pl.DataFrame) -> None:
    result = _silent(hist, BY)
    assert result.spark is not None
    assert (
        tuple(silent.summarize(hist, (), silent.grid((4.0, 8.0)), estimator=PLUGIN)["silent_rate"])
        == result.spark.y
    )


def test_the_silent_figure_curve_is_per_by_group(hist: pl.DataFrame) -> None:
    result = _silent(hist, BY)
    assert result.curve is not None
    expected = silent.summarize(hist, BY, silent.grid((4.0, 8.0)), estimator=PLUGIN)
    assert expected.equals(result.curve.summary)


def test_no_sparkline_unless_asked(hist: pl.DataFrame) -> None:
    options = SilentOptions((8.0,))
    result = silent.analyse(hist, (), options, estimators.valuation(hist, (), options.sizes))
    assert result.spark is None


def test_the_groupsize_figure_histogram_is_the_data(hist: pl.DataFrame) -> None:
    result = _groupsize(hist, ())
    assert result.curve is not None
    assert hist["prompts"].sum() == result.curve.hist["prompts"].sum()


def test_the_track_band_is_measured_against_expected(tracked: tr.TrackResult) -> None:
    compared = tracked.steps.filter(pl.col("compared_groups") > 0)
    assert compared["compared_silent_fraction"].to_list() == tracked.band["measured_silent"].to_list()


# ------------------------------------------------------------------------------------------ one declaration per column


@pytest.mark.parametrize("name", ANALYSES)
def test_the_table_view_heads_columns_with_their_declaration(hist: pl.DataFrame, name: str) -> None:
    analyse, view = ANALYSES[name]
    result = analyse(hist, ())
    shown = view(result).labels
    declared = {
        c: columns.COLUMNS[c].short or columns.COLUMNS[c].label
        for c in result.summary.columns
        if c in columns.COLUMNS
    }
    assert declared == {c: shown[c] for c in declared}


@pytest.mark.parametrize("name", ANALYSES)
def test_every_summary_column_is_declared(hist: pl.DataFrame, name: str) -> None:
    analyse, _ = ANALYSES[name]
    assert [] == [c for c in analyse(hist, ()).summary.columns if c not in columns.COLUMNS]


@pytest.mark.parametrize("name", ANALYSES)
def test_the_report_heads_columns_with_their_declaration(hist: pl.DataFrame, name: str) -> None:
    analyse, _ = ANALYSES[name]
    summary = analyse(hist, ()).summary
    expected = tuple(" ".join(columns.COLUMNS[c].label.replace("-\n", "").split()) for c in summary.columns)
    assert expected == table(summary).headings


@pytest.mark.parametrize("name", ANALYSES)
def test_the_report_shows_as_percentages_what_the_table_does(hist: pl.DataFrame, name: str) -> None:
    analyse, view = ANALYSES[name]
    result = analyse(hist, ())
    in_report = {c for c in result.summary.columns if cell(0.25, c) == "25.00 %"}
    assert set(view(result).percent) == in_report


def test_the_track_tables_head_columns_with_their_declaration(tracked: tr.TrackResult) -> None:
    shown = track_view(tracked).labels
    assert columns.COLUMNS["compared_silent_fraction"].label == shown["compared_silent_fraction"]


def test_the_track_run_table_shows_shares_as_percentages(tracked: tr.TrackResult) -> None:
    assert {"compared_silent_fraction", "expected_silent_fraction", "mean_bias", "min_gap"} == set(
        track_view(tracked, summary=True).percent
    ) & set(summary_frame(tracked).columns)


# A valuation made without the G asked (the report values each input once) still warns of the plug-in's bias
# where a result's numbers lie beyond the logged samples: the warning is read off the result's own rows.
EIGHT = Path(__file__).resolve().parents[1] / "sample_data" / "bigmath_8_samples.csv"
BIASED = "The plug-in p̂ is biased at G > n = 8 samples"


@pytest.fixture(scope="module")
def eight() -> pl.DataFrame:
    inputs = InputOptions((str(EIGHT),), k_col="k", n_col="n", weight_col="count")
    with load.dataset(inputs) as ds:
        return load.histogram(ds).frame


def _plugin(hist: pl.DataFrame) -> estimators.Valuation:
    return estimators.valuation(hist, (), (), PLUGIN)


def test_silent_beyond_the_samples_warns_of_the_plugins_bias(eight: pl.DataFrame) -> None:
    result = silent.analyse(eight, (), SilentOptions((4.0, 256.0), PLUGIN), _plugin(eight))
    assert [BIASED] == [w[: len(BIASED)] for w in result.warnings()]


def test_silent_within_the_samples_warns_of_nothing(eight: pl.DataFrame) -> None:
    assert () == silent.analyse(eight, (), SilentOptions((4.0, 8.0), PLUGIN), _plugin(eight)).warnings()


def test_budget_beyond_the_samples_warns_of_the_plugins_bias(eight: pl.DataFrame) -> None:
    result = budget.analyse(eight, (), BudgetOptions((16.0,)), _plugin(eight))
    assert [BIASED] == [w[: len(BIASED)] for w in result.warnings()]


def test_budget_at_infinite_g_alone_warns_of_nothing(eight: pl.DataFrame) -> None:
    # G = ∞ asks for the large-group weights themselves, which no n identifies (docs/prior.md).
    assert () == budget.analyse(eight, (), BudgetOptions((float("inf"),)), _plugin(eight)).warnings()


def test_groupsize_sizing_beyond_the_samples_warns_of_the_plugins_bias(eight: pl.DataFrame) -> None:
    result = groupsize.analyse(eight, (), GroupSizeOptions(), _plugin(eight))
    assert [BIASED] == [w[: len(BIASED)] for w in result.warnings()]

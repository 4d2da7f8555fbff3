"""Figures with many series: past a handful of columns or --by groups, the first ones in the table's order are
drawn, and the caption names them and how many the tables hold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool import budget, silent
from sigmatool.figures import budget_figure, difficulty_figure, groupsize_figure, silent_figure
from sigmatool.figures.plot import Plot
from sigmatool.figures.style import MAX_SERIES, group_looks
from sigmatool.load import read_histogram
from sigmatool.options import InputOptions

# Given out of alphabetical order: "the order given" is this one.
NAMES = ["zeta", "alpha", "mu", "beta", "omega", "kappa", "delta", "gamma", "pi"]


@pytest.fixture(scope="module")
def hist(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    rates = {name: rng.binomial(8, rng.beta(0.8, 0.8, 400)) / 8 for name in NAMES}
    path = tmp_path_factory.mktemp("series") / "models.parquet"
    pl.DataFrame(rates).write_parquet(path)
    return read_histogram(InputOptions(paths=(str(path),), cols=tuple(NAMES))).frame


def _drawn_groups(labels: list[str]) -> set[str]:
    return {name for name in NAMES if any(label.endswith(f"· {name}") or label == name for label in labels)}


def _said(count: int, noun: str = "columns") -> str:
    kept = ", ".join(NAMES[:MAX_SERIES])
    return f"Drawn: the first {MAX_SERIES} of {count} {noun} in the order given ({kept}); the tables hold all"


def test_the_silent_figure_draws_the_first_columns_given_and_says_so(hist: pl.DataFrame) -> None:
    plot = silent_figure(silent.summarize(hist, ("column",), [4.0, 8.0, 16.0]), by=("column",))
    assert _drawn_groups([s.label for s in plot.series]) == set(NAMES[:MAX_SERIES])
    assert _said(len(NAMES)) in plot.caption


def test_the_budget_figure_has_a_row_of_panels_per_drawn_column(hist: pl.DataFrame) -> None:
    plot = budget_figure(budget.summarize(hist, ("column",), [8.0]), by=("column",))
    titles = {ax.get_title(loc="left") for ax in plot.figure.axes}
    assert {name for name in NAMES if any(name in t for t in titles)} == set(NAMES[:MAX_SERIES])
    assert _said(len(NAMES)) in plot.caption


def test_the_difficulty_and_groupsize_figures_draw_the_same_columns(hist: pl.DataFrame) -> None:
    shown = difficulty_figure(hist, by=("column",))
    assert _drawn_groups([s.label for s in shown.series]) == set(NAMES[:MAX_SERIES])
    assert _said(len(NAMES)) in shown.caption
    curve = pl.DataFrame({"p": [0.25, 0.5, 0.75], "group_size": [12, 8, 12]})
    sized = groupsize_figure(curve, hist, by=("column",))
    assert _drawn_groups([s.label for s in sized.series]) == set(NAMES[:MAX_SERIES])
    assert _said(len(NAMES)) in sized.caption


def test_a_handful_of_columns_are_all_drawn_and_nothing_is_said(hist: pl.DataFrame) -> None:
    few = hist.filter(pl.col("column").is_in(NAMES[:MAX_SERIES]))
    plot = silent_figure(silent.summarize(few, ("column",), [8.0]), by=("column",))
    assert _drawn_groups([s.label for s in plot.series]) == set(NAMES[:MAX_SERIES])
    assert "Drawn:" not in plot.caption


def test_by_groups_are_named_as_groups_of_their_key() -> None:
    frame = pl.DataFrame(
        {"topic": [f"t{i}" for i in range(8) for _ in range(2)], "p": [0.25, 0.75] * 8, "prompts": [1] * 16}
    )
    plot = difficulty_figure(frame, by=("topic",))
    assert "the first 6 of 8 groups of topic as the table lists them (t0, t1, t2, t3, t4, t5)" in plot.caption


@pytest.mark.slow  # a whole report (3.7 s); the figures' captions are tested above
def test_the_report_page_says_which_columns_its_figures_draw(hist: pl.DataFrame, tmp_path: Path) -> None:
    from sigmatool.report import build_report, report_input

    path = tmp_path / "models.parquet"
    rng = np.random.default_rng(4)
    pl.DataFrame({name: rng.binomial(8, rng.random(200)) / 8 for name in NAMES}).write_parquet(path)
    items = report_input(InputOptions(paths=(str(path),), cols=tuple(NAMES)))
    page = build_report(items if isinstance(items, list) else [items]).html()
    # Difficulty, silent, budget and group size say it, in the caption and the figure's label.
    assert page.count(_said(len(NAMES))) == 2 * 4
    assert NAMES[-1] in page  # the tables hold every column


def _colour_of(plot: Plot, label: str) -> str:
    """The colour drawn for the series of this label (a line's, or an outline's edge), as #rrggbb."""
    from matplotlib.colors import to_hex

    series = plot.get(label)
    (artist,) = plot.figure.findobj(lambda a: a.get_gid() == series.gid)
    return str(to_hex(artist.get_color() if hasattr(artist, "get_color") else artist.get_edgecolor()))


def test_two_figures_of_the_same_names_give_each_name_one_colour() -> None:
    # The groups come in another order to each figure: the histogram as read, the summary as given.
    hist = pl.DataFrame({"model": ["zeta", "zeta", "alpha", "alpha"], "p": [0.25, 0.5, 0.5, 0.75],
                         "prompts": [3, 1, 2, 2]})  # fmt: skip
    summary = silent.summarize(hist, ("model",), [2.0, 4.0, 8.0])
    shown = difficulty_figure(hist, by=("model",), caption=False)
    drawn = silent_figure(summary.sort("model", maintain_order=True), by=("model",))
    for name in ("alpha", "zeta"):
        assert _colour_of(shown, f"prompts · {name}") == _colour_of(drawn, f"silent · {name}")


def test_group_colours_follow_the_names_not_their_order() -> None:
    assert group_looks(["zeta", "alpha"]) == group_looks(["alpha", "zeta"])

"""``--style paper``: figures one column of a two-column paper wide (3.25 in = 234 pt), serif text of 8–9 pt
kept as text, no caption unless asked; the screen figures are unchanged (tests/test_figures.py pins their
bytes run after run)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import polars as pl
import pytest

from sigmatool import budget, silent
from sigmatool.errors import UsageError
from sigmatool.figures import Plot, budget_figure, silent_figure, simulate_figure
from sigmatool.figures.style import look_of
from sigmatool.load import read_histogram
from sigmatool.options import FigureStyle, InputOptions, PlotOptions
from sigmatool.simulate import simulate
from tests.conftest import BIGMATH, TOY

SVG_NS = "{http://www.w3.org/2000/svg}"
COLUMN_PT = 3.25 * 72  # one column of the two-column templates
FAMILY = re.compile(r"font-family:\s*([^;\"]+)")
SIZE = re.compile(r"font-size:\s*([0-9.]+)px")


@pytest.fixture(scope="module")
def bigmath() -> pl.DataFrame:
    return read_histogram(InputOptions(paths=(str(BIGMATH),))).frame


@pytest.fixture(scope="module")
def paper_silent(bigmath: pl.DataFrame) -> Plot:
    return silent_figure(
        silent.summarize(bigmath, (), [2.0, 8.0, 64.0]), source="sample", caption=False, style="paper"
    )


@pytest.fixture(scope="module")
def paper_svgs(paper_silent: Plot, bigmath: pl.DataFrame) -> list[str]:
    """A one-panel and a stacked many-panel paper figure, as SVG text."""
    summary = budget.summarize(bigmath, (), [8.0, float("inf")])
    stacked = budget_figure(summary, caption=False, style="paper")
    return [paper_silent.svg(), stacked.svg()]


def svg_width_pt(svg: str) -> float:
    width = ET.fromstring(svg).attrib["width"]
    assert width.endswith("pt")
    return float(width[:-2])


def text_styles(svg: str) -> list[str]:
    return [t.attrib.get("style", "") for t in ET.fromstring(svg).iter(f"{SVG_NS}text")]


@pytest.mark.parametrize("index", [0, 1])
def test_a_paper_svg_is_one_column_wide(paper_svgs: list[str], index: int) -> None:
    assert COLUMN_PT == svg_width_pt(paper_svgs[index])


def test_a_paper_pdf_is_one_column_wide(paper_silent: Plot) -> None:
    box = re.search(rb"/MediaBox \[ *0 0 ([0-9.]+) ([0-9.]+) *\]", paper_silent.render("pdf"))
    assert box is not None
    assert COLUMN_PT == float(box.group(1))


def test_a_paper_figure_keeps_the_one_column_aspect(paper_silent: Plot, bigmath: pl.DataFrame) -> None:
    screen = silent_figure(silent.summarize(bigmath, (), [2.0, 8.0, 64.0]), caption=False)
    (sw, sh), (pw, ph) = screen.figure.get_size_inches(), paper_silent.figure.get_size_inches()
    assert sh / sw == pytest.approx(ph / pw)


def test_paper_text_stays_text(paper_silent: Plot) -> None:
    texts = ["".join(t.itertext()) for t in ET.fromstring(paper_silent.svg()).iter(f"{SVG_NS}text")]
    assert "group size G (answers per group)" in texts


@pytest.mark.parametrize("index", [0, 1])
def test_paper_text_is_serif(paper_svgs: list[str], index: int) -> None:
    families = {
        FAMILY.search(style).group(1).split(",")[-1].strip() for style in text_styles(paper_svgs[index])
    }  # type: ignore[union-attr]
    assert {"serif"} == families


@pytest.mark.parametrize("index", [0, 1])
def test_paper_text_is_8_to_9_points(paper_svgs: list[str], index: int) -> None:
    sizes = {float(m.group(1)) for style in text_styles(paper_svgs[index]) for m in SIZE.finditer(style)}
    assert set() == sizes - {8.0, 9.0}


def test_paper_text_does_not_need_tex(paper_silent: Plot) -> None:
    assert False is paper_silent.look.rc["text.usetex"]


def test_screen_text_stays_sans_serif(bigmath: pl.DataFrame) -> None:
    svg = silent_figure(silent.summarize(bigmath, (), [8.0])).svg()
    assert {"sans-serif"} == {FAMILY.search(s).group(1).split(",")[-1].strip() for s in text_styles(svg)}  # type: ignore[union-attr]


def test_an_unknown_style_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="screen or paper"):
        look_of("poster")


# --------------------------------------------------------------------------------------------- the caption


@pytest.mark.parametrize(
    ("caption", "style", "drawn"),
    [
        (None, "screen", True),
        (None, "paper", False),
        (True, "paper", True),
        (False, "screen", False),
    ],
)
def test_the_caption_is_drawn_on_screen_and_on_paper_when_asked(
    caption: bool | None, style: str, drawn: bool
) -> None:
    assert drawn is look_of(style).captions(caption)


def test_the_command_leaves_the_caption_to_the_style() -> None:
    assert PlotOptions("f.pdf", style=FigureStyle.paper).caption is None


def test_a_paper_figure_draws_no_caption_by_default(bigmath: pl.DataFrame) -> None:
    plot = silent_figure(silent.summarize(bigmath, (), [8.0]), source="sample", style="paper")
    assert [] == plot.figure.texts


def test_an_unknown_style_option_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--style"):
        PlotOptions("f.pdf", None, "poster")  # type: ignore[arg-type]


def test_toy_groups_stack_their_panels() -> None:
    toy = read_histogram(InputOptions(paths=(str(TOY),), k_col="k", n_col="n", by=("source",))).frame
    plot = silent_figure(silent.summarize(toy, ("source",), [2.0, 8.0]), by=("source",), style="paper")
    (top, bottom) = (ax.get_position() for ax in plot.figure.axes[:2])
    assert top.y0 > bottom.y1


def test_a_paper_caption_names_the_stacked_panels() -> None:
    trace, summary = simulate("beta-mix", prompts=100, steps=2, seed=3, methods="grpo")
    caption = simulate_figure(trace, summary, style="paper").caption
    assert "; bottom, the mean pass rate" in caption

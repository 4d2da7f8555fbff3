"""The report: the analyses' numbers on one self-contained page (or Markdown), user text escaped,
comparisons side by side."""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from sigmatool import budget, groupsize, silent
from sigmatool.errors import UsageError
from sigmatool.estimators import valuation
from sigmatool.options import GroupSizeOptions, InputOptions
from sigmatool.report import PlanFrames, Report, ReportInput, ReportOptions, build_report, report_input
from tests.conftest import BIGMATH, ROOT, TOY

# Pages and figures are drawn and rendered: a slow suite of its own (make test-slow).
pytestmark = pytest.mark.slow

DOCS = ROOT / "docs"
SVG_BLOCK = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
SERIES = re.compile(r'data-series="([^"]*)"[^>]*?data-x="([^"]*)" data-y="([^"]*)"')
# A trace longer than the page shows whole.
TRACK = pl.DataFrame({"step": range(1, 101), "measured_silent": [0.4] * 100, "expected_silent": [0.4] * 100})
PLAN = PlanFrames(
    pl.DataFrame({"p": [0.2, 0.5], "group_size": [12, 6], "prompts": [10, 20]}),
    pl.DataFrame({"rollouts_per_prompt": [8.0], "plan_objective": [0.4], "uniform_objective": [0.35]}),
    "mean E[σ]",
)


@pytest.fixture(scope="module")
def sample() -> ReportInput:
    return report_input(InputOptions(paths=(str(BIGMATH),)))


@pytest.fixture(scope="module")
def report(sample: ReportInput) -> Report:
    return build_report([sample])


@pytest.fixture(scope="module")
def written(report: Report, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page as written for a user: under umask 022, with a fixed provenance time."""
    folder = tmp_path_factory.mktemp("html")
    old = os.umask(0o022)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SOURCE_DATE_EPOCH", "0")
            return report.write_html(folder / "r.html")
    finally:
        os.umask(old)


@pytest.fixture(scope="module")
def page(written: Path) -> str:
    return written.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def toy() -> ReportInput:
    return report_input(InputOptions(paths=(str(TOY),), k_col="k", n_col="n", by=("source",)), label="toy")


def only(frames: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The one silent summary of a report (one valuation per report)."""
    (frame,) = frames.values()
    return frame


def series_of(page: str) -> dict[str, tuple[str, str]]:
    return {html_unescape(label): (x, y) for label, x, y in SERIES.findall(page)}


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)


# --------------------------------------------------------------------------------------------- content


@pytest.mark.parametrize(
    "sentence",
    [
        "43.1% of groups are silent at G=8 [unbiased]",  # docs/theory.md §2: 43.07 % drawn from the 64
        "11.2% of prompts were never or always right",  # 4.02 % + 7.16 %
        "against 13.9% for Dr. GRPO",  # §5: Dr. GRPO's extreme share, the same at every G
    ],
)
def test_the_headlines_say_it(page: str, sentence: str) -> None:
    assert sentence in page


def test_the_headlines_are_the_command_line_sentences(report: Report, sample: ReportInput) -> None:
    expected = silent.headline(silent.summarize(sample.hist, (), [8.0]))
    assert expected == report.headlines[0].sentences[0]


def test_the_group_size_headline_is_the_command_line_one(report: Report, sample: ReportInput) -> None:
    options = GroupSizeOptions()
    rule = valuation(sample.hist)  # the one rule of each cell, as the command line's default
    expected = groupsize.headline(
        groupsize.sized_rows(sample.hist, (), options, bins=None, prior=rule), options
    )
    assert expected == report.headlines[0].sentences[2]


def test_an_input_is_named_after_its_file(toy: ReportInput) -> None:
    plain = report_input(InputOptions(paths=(str(TOY),), col="pass_rate"))
    assert "toy_pass_rates.csv" == plain.label


def test_the_budget_is_computed_at_8_and_infinity(report: Report, sample: ReportInput) -> None:
    direct = budget.summarize(sample.hist, (), [8.0, math.inf])
    assert direct.equals(report.budget)


def test_the_silent_table_is_over_the_grid(report: Report) -> None:
    assert [2, 4, 8, 16, 32, 64, 128, 256] == only(report.silent)["G"].to_list()


def test_the_silent_table_shows_the_paper_value(page: str) -> None:
    assert '<td class="num">43.07 %</td>' in page  # docs/theory.md §2, drawn from the 64 samples


@pytest.mark.parametrize("section", ["input", "summary", "difficulty", "silent", "budget", "groupsize"])
def test_every_section_is_there(page: str, section: str) -> None:
    assert f'<section id="{section}">' in page


@pytest.mark.parametrize("section", ["track", "plan"])
def test_track_and_plan_only_when_given(page: str, section: str) -> None:
    assert f'<section id="{section}">' not in page


@pytest.fixture(scope="module")
def full_page(sample: ReportInput) -> str:
    return build_report([sample], options=ReportOptions(track=TRACK, plan=PLAN)).html()


@pytest.mark.parametrize("section", ["track", "plan"])
def test_track_and_plan_when_given(full_page: str, section: str) -> None:
    assert f'<figure class="plot" id="figure-{section}">' in full_page


def test_the_plan_table_is_shown(full_page: str) -> None:
    assert '<td class="num">0.35</td>' in full_page


def test_the_input_is_described(page: str) -> None:
    for text in ("sample_data/bigmath_solve_rates.parquet", "215,608", "llama8b_solve_rate", "unbiased"):
        assert text in page, text


def test_the_figures_carry_the_analysis_values(page: str, report: Report) -> None:
    _, y = series_of(page)["silent"]
    assert only(report.silent)["silent_rate"].to_list() == [float(v) for v in y.split()]


# --------------------------------------------------------------------------------------------- self-contained


def test_the_page_fetches_nothing(page: str) -> None:
    targets = re.findall(r'(?:src|href|action|poster|srcset)="([^"]*)"', page)
    assert [] == [t for t in targets if not (t.startswith("#") or t == "data:,")]


def test_the_page_has_no_script(page: str) -> None:
    assert "<script" not in page.lower()


def test_the_styles_import_nothing(page: str) -> None:
    urls = re.findall(r"url\(([^)]*)\)", page)
    assert [] == [u for u in urls if not u.startswith("#")]
    assert "@import" not in page
    assert "@font-face" not in page


def test_the_page_is_under_2_mb(page: str) -> None:
    assert len(page.encode("utf-8")) < 2_000_000


def test_ids_are_unique_across_figures(page: str) -> None:
    counts = Counter(re.findall(r'\bid="([^"]+)"', page))
    assert [] == [i for i, n in counts.items() if n > 1]


def test_every_inline_svg_is_well_formed(page: str) -> None:
    blocks = SVG_BLOCK.findall(page)
    assert 4 == len(blocks)
    for block in blocks:
        ET.fromstring(block)


def test_the_page_has_print_and_phone_styles(page: str) -> None:
    assert "@media print" in page
    assert "@media (max-width" in page


def test_the_page_is_the_same_every_time(
    sample: ReportInput, page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")  # the provenance's time, as the page was written
    assert page == build_report([sample]).html()


# --------------------------------------------------------------------------------------------- escaping


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("odd") / "a<b>&.csv"
    path.write_text('pass_rate,source\n0.5,"<script>x</script>"\n0.25,"q&""a"\n1.0,ok\n')
    item = report_input(InputOptions(paths=(str(path),), by=("source",)), label="<i>label</i>")
    return build_report([item]).html()


@pytest.mark.parametrize("raw", ["<script>x</script>", "<i>label</i>", "a<b>&.csv"])
def test_user_text_is_escaped(hostile: str, raw: str) -> None:
    assert raw not in hostile


@pytest.mark.parametrize(
    "escaped", ["&lt;script&gt;x&lt;/script&gt;", "&lt;i&gt;label&lt;/i&gt;", "a&lt;b&gt;&amp;.csv"]
)
def test_user_text_is_shown(hostile: str, escaped: str) -> None:
    assert escaped in hostile


def test_user_text_keeps_the_svg_well_formed(hostile: str) -> None:
    for block in SVG_BLOCK.findall(hostile):
        ET.fromstring(block)


# --------------------------------------------------------------------------------------------- comparisons


@pytest.fixture(scope="module")
def two(sample: ReportInput) -> Report:
    other = report_input(InputOptions(paths=(str(TOY),), col="pass_rate"), label="toy")
    return build_report([sample, other])


@pytest.fixture(scope="module")
def two_page(two: Report) -> str:
    return two.html()


def test_two_inputs_get_a_card_each(two_page: str) -> None:
    assert 2 == two_page.count('<article class="card">')


def test_two_inputs_get_a_line_each(two_page: str) -> None:
    labels = series_of(two_page)
    assert {"silent · bigmath_solve_rates.parquet", "silent · toy"} <= set(labels)


def test_two_inputs_fill_the_tables_side_by_side(two: Report) -> None:
    assert ["bigmath_solve_rates.parquet", "toy"] == two.budget["input"].unique(maintain_order=True).to_list()


def test_analysis_tables_are_shown_whole(two_page: str) -> None:
    assert "rows not shown" not in two_page


def test_a_long_trace_shows_its_ends(full_page: str) -> None:
    assert "… 80 rows not shown …" in full_page


def test_by_groups_are_compared(toy: ReportInput) -> None:
    report = build_report([toy])
    assert ["algebra", "geometry"] == report.groupsize["source"].unique(maintain_order=True).to_list()


def test_inputs_need_the_same_by(sample: ReportInput, toy: ReportInput) -> None:
    with pytest.raises(UsageError, match="same --by"):
        build_report([sample, toy])


def test_inputs_need_distinct_labels(sample: ReportInput) -> None:
    with pytest.raises(UsageError, match="distinct labels"):
        build_report([sample, sample])


def test_a_report_needs_an_input() -> None:
    with pytest.raises(UsageError, match="at least one input"):
        build_report([])


# --------------------------------------------------------------------------------------------- estimators


def test_the_unbiased_estimator_stops_at_n(toy: ReportInput) -> None:
    report = build_report([toy], options=ReportOptions(estimator="unbiased"))
    known = only(report.silent).filter(pl.col("silent_rate").is_not_null())
    assert [2, 4, 8, 16] == known["G"].unique(maintain_order=True).to_list()


def test_the_unbiased_estimator_needs_counts() -> None:
    # The toy set's 20 prompts are too few to read its 1/16 grid as counts without --samples.
    rates = report_input(InputOptions(paths=(str(TOY),)))
    with pytest.raises(UsageError, match="needs counts"):
        build_report([rates], options=ReportOptions(estimator="unbiased"))


def test_an_unknown_estimator_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="plugin or unbiased"):
        ReportOptions(estimator="bayes")


# --------------------------------------------------------------------------------------------- files


def test_html_is_written_with_the_umask(written: Path) -> None:
    assert 0o644 == written.stat().st_mode & 0o777
    assert ["r.html"] == [p.name for p in written.parent.iterdir()]


@pytest.fixture(scope="module")
def markdown_dir(report: Report, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("markdown")
    report.write_markdown(folder / "svg.md", figure_format="svg")
    report.write_markdown(folder / "png.md")
    return folder


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_markdown_links_its_figure_files(markdown_dir: Path, fmt: str) -> None:
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (markdown_dir / f"{fmt}.md").read_text())
    assert [f"{fmt}_figures/{k}.{fmt}" for k in ("difficulty", "silent", "budget", "groupsize")] == links


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_markdown_figure_files_exist(markdown_dir: Path, fmt: str) -> None:
    assert 4 == len(list((markdown_dir / f"{fmt}_figures").glob(f"*.{fmt}")))


def test_markdown_has_the_same_numbers(markdown_dir: Path) -> None:
    assert "| unbiased | 8 | 215,608 | 43.07 % |" in (markdown_dir / "svg.md").read_text()


def test_markdown_needs_svg_or_png(report: Report, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="svg or png"):
        report.write_markdown(tmp_path / "r.md", figure_format="pdf")


def test_markdown_escapes_table_cells(hostile_md: str) -> None:
    block = hostile_md.split("*Silent groups by G*", 1)[1].split("\n\n")[1]
    pipes = {len(re.findall(r"(?<!\\)\|", line)) for line in block.splitlines()}
    assert 1 == len(pipes)


@pytest.fixture(scope="module")
def hostile_md(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("md")
    path = folder / "data.csv"
    path.write_text('pass_rate,source\n0.5,"a|b"\n0.25,"q&""a"\n')
    item = report_input(InputOptions(paths=(str(path),), by=("source",)), label="x|y")
    # SVG figures: the tables are what is read here, and SVG is the cheaper figure to write.
    return build_report([item]).write_markdown(folder / "r.md", figure_format="svg").read_text()


def test_bigmath_path_is_the_sample(sample: ReportInput) -> None:
    assert int(pl.read_parquet(BIGMATH).height) == sample.rows


def test_a_report_fits_each_inputs_prior_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The comparing run and each input's headline value the same cells: one fit serves both.
    import numpy as np

    import sigmatool.prior
    from sigmatool.estimators import rule

    rng = np.random.default_rng(6)
    path = tmp_path / "models.parquet"
    pl.DataFrame({c: rng.binomial(8, rng.beta(0.7, 0.7, 400)) / 8 for c in ("a", "b", "c")}).write_parquet(
        path
    )
    items = [report_input(InputOptions(paths=(str(path),), col=c), label=c) for c in ("a", "b", "c")]
    fitted: list[int] = []
    real = sigmatool.prior.fit_prior
    monkeypatch.setattr(sigmatool.prior, "fit_prior", lambda *a, **k: fitted.append(1) or real(*a, **k))
    monkeypatch.setattr(rule, "_FITS", {})
    report = build_report(items)
    assert len(fitted) == 3
    assert "prior npmle" in " ".join(s for h in report.headlines for s in h.sentences)

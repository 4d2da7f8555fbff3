"""A report a person can share: Markdown that renders cleanly with inline PNG figures, and a provenance block
(version, command line, input files with sizes and checksums, time) in both forms."""

from __future__ import annotations

import hashlib
import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from sigmatool import __version__
from sigmatool.report.markdown import md
from tests.conftest import ROOT, invoke

# Pages and figures are drawn and rendered: a slow suite of its own (make test-slow).
pytestmark = pytest.mark.slow

EPOCH = "1767225600"  # 2026-01-01T00:00:00Z
# Awkward user text: a file and a column value with the marks Markdown reads.
AWKWARD = "id,pass_rate,source\na,0.5,plug-in (v2)\nb,0.25,a_b*c\nc,0.75,x|y [z]\nd,1,$5 & <b>\n"


class _Text(HTMLParser):
    """The text a browser would show, and the images it would load."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.images: list[str] = []

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")


def rendered(markdown: str) -> _Text:
    parser = _Text()
    parser.feed(MarkdownIt("commonmark").enable("table").render(markdown))
    return parser


@pytest.fixture(scope="module")
def report_md(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    (folder / "my_data (v2).csv").write_text(AWKWARD)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.setenv("SOURCE_DATE_EPOCH", EPOCH)
        result = invoke("report", "my_data (v2).csv", "--by", "source", "-o", "r.md")
    assert result.exit_code == 0, result.stderr
    return folder / "r.md"


def test_rendered_markdown_shows_no_backslash(report_md: Path) -> None:
    text = "".join(rendered(report_md.read_text()).text)
    assert "\\" not in text


def test_markdown_escapes_no_letter_or_parenthesis(report_md: Path) -> None:
    assert [] == re.findall(r"\\[A-Za-z0-9()\-.]", report_md.read_text())


def test_markdown_keeps_user_text_as_given(report_md: Path) -> None:
    text = "".join(rendered(report_md.read_text()).text)
    for value in ("plug-in (v2)", "a_b*c", "x|y [z]", "$5 & <b>", "my_data (v2).csv"):
        assert value in text


def test_markdown_figures_are_inline_png_files(report_md: Path) -> None:
    images = rendered(report_md.read_text()).images
    assert ["difficulty", "silent", "budget", "groupsize"] == [Path(i).stem for i in images]
    assert {".png"} == {Path(i).suffix for i in images}


def test_markdown_figures_exist_where_linked(report_md: Path) -> None:
    from urllib.parse import unquote

    for image in rendered(report_md.read_text()).images:
        assert (report_md.parent / unquote(image)).read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plug-in (grpo, population std)", "plug-in (grpo, population std)"),
        ("bigmath_solve_rates.parquet", "bigmath_solve_rates.parquet"),
        ("_private", "\\_private"),
        ("a*b", "a\\*b"),
        ("[link](x)", "\\[link\\](x)"),
        ("<b>", "\\<b\\>"),
        ("AT&amp;T", "AT\\&amp;T"),
        ("AT&T", "AT&T"),
        ("`code`", "\\`code\\`"),
    ],
)
def test_md_escapes_only_what_starts_markup(text: str, expected: str) -> None:
    assert expected == md(text)


def test_md_escapes_a_pipe_in_a_table_cell() -> None:
    assert "x\\|y" == md("x|y", cell=True)


# --------------------------------------------------------------------------------------------- provenance


def test_markdown_provenance_names_the_version(report_md: Path) -> None:
    assert f"- sigmatool: {__version__}" in report_md.read_text()


def test_markdown_provenance_gives_the_command_line(report_md: Path) -> None:
    assert "- command: `sigmatool report 'my_data (v2).csv' --by source -o r.md`" in report_md.read_text()


def test_markdown_provenance_time_follows_source_date_epoch(report_md: Path) -> None:
    assert "- made: 2026-01-01T00:00:00Z" in report_md.read_text()


def test_markdown_provenance_gives_the_input_checksum(report_md: Path) -> None:
    digest = hashlib.sha256(AWKWARD.encode()).hexdigest()
    assert f"| my_data (v2).csv | {len(AWKWARD.encode())} | {digest} |" in report_md.read_text()


@pytest.fixture(scope="module")
def report_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("report_html")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        patch.setenv("SOURCE_DATE_EPOCH", EPOCH)
        result = invoke("report", "sample_data/toy_pass_rates.csv", "-o", str(folder / "r.html"))
    assert result.exit_code == 0, result.stderr
    return html.unescape((folder / "r.html").read_text())


def test_html_provenance_gives_the_command_line(report_html: str) -> None:
    assert "<code>sigmatool report sample_data/toy_pass_rates.csv -o " in report_html


def test_html_provenance_gives_the_input_checksum(report_html: str) -> None:
    digest = hashlib.sha256((ROOT / "sample_data" / "toy_pass_rates.csv").read_bytes()).hexdigest()
    assert f">{digest}</td>" in report_html


def test_html_provenance_time_follows_source_date_epoch(report_html: str) -> None:
    assert "<dd>2026-01-01T00:00:00Z</dd>" in report_html

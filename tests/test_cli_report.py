"""`sigmatool report`: one page for one or more inputs, refused outputs, and the documentation's examples
(made by `make figures` through the command line) still what the command line makes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from sigmatool.figures.plot import png_data
from tests.conftest import BIGMATH, ROOT, TOY, csv_of, invoke, run_in
from tests.make_figures import FIGURES, REPORT, make

# Pages and figures are drawn and rendered: a slow suite of its own (make test-slow).
pytestmark = pytest.mark.slow

SVG_BLOCK = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
# The provenance's command line names the folder the report was written to.
COMMAND = re.compile(r"<dt>command</dt><dd><code>.*?</code></dd>")
SERIES = re.compile(r'data-series="([^"]*)"[^>]*?data-x="([^"]*)" data-y="([^"]*)"')
HELP_EXAMPLE = re.compile(r"^ {4}(sigmatool [a-z]+ .*)$", re.MULTILINE)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("report") / "report.html"
    result = invoke("report", BIGMATH, "-o", path)
    assert 0 == result.exit_code, result.stderr
    return path.read_text(encoding="utf-8")


def test_the_page_has_every_figure(page: str) -> None:
    found = re.findall(r'<figure class="plot" id="figure-([a-z]+)">', page)
    assert ["difficulty", "silent", "budget", "groupsize"] == found


def test_the_page_is_under_2_mb(page: str) -> None:
    assert len(page.encode("utf-8")) < 2_000_000


def test_the_page_says_what_the_commands_say(page: str) -> None:
    table = csv_of(invoke("silent", BIGMATH, "--format", "csv"))
    assert f"{100 * table['silent_rate'][0]:.1f}% of groups are silent at G=8" in page


def test_the_page_plots_the_silent_command_numbers(page: str) -> None:
    series = {label: (x, y) for label, x, y in SERIES.findall(page)}
    x, y = ([float(v) for v in part.split()] for part in series["silent"])
    # The report's G reach 256 > n = 64: unbiased to 64, the NPMLE beyond, as silent's default.
    table = csv_of(invoke("silent", BIGMATH, "--G", "2,4,8,16,32,64,128,256", "--format", "csv"))
    assert (table["G"].cast(pl.Float64).to_list(), table["silent_rate"].to_list()) == (x, y)


def test_the_page_fetches_nothing(page: str) -> None:
    targets = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert [] == [t for t in targets if not (t.startswith("#") or t == "data:,")]


# One report of the toy set with the options that do not change its series' labels, read by the tests of each.
@pytest.fixture(scope="module")
def toy_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("toy") / "r.html"
    options = ("--k-col", "k", "--n-col", "n", "--estimator", "unbiased", "--title", "Toy <set>")
    result = invoke("report", TOY, *options, "-o", path)
    assert 0 == result.exit_code, result.stderr
    return path


def test_the_title_is_the_users(toy_report: Path) -> None:
    assert "<h1>Toy &lt;set&gt;</h1>" in toy_report.read_text()


def test_each_data_is_an_input(tmp_path: Path) -> None:
    invoke("report", BIGMATH, TOY, "-o", tmp_path / "r.html")
    cards = re.findall(r'<article class="card"><h3>([^<]*)</h3>', (tmp_path / "r.html").read_text())
    assert ["bigmath_solve_rates.parquet", "toy_pass_rates.csv"] == cards


def test_inputs_with_the_same_file_name_are_told_apart_by_their_folders(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(TOY, tmp_path / folder / "rates.csv")
    a, b = (str(tmp_path / f / "rates.csv") for f in ("a", "b"))
    invoke("report", a, b, "-o", tmp_path / "r.html")
    cards = re.findall(r'<article class="card"><h3>([^<]*)</h3>', (tmp_path / "r.html").read_text())
    assert ["a/rates.csv", "b/rates.csv"] == cards


def test_by_groups_are_compared(tmp_path: Path) -> None:
    invoke("report", TOY, "--by", "source", "-o", tmp_path / "r.html")
    series = {label for label, _, _ in SERIES.findall((tmp_path / "r.html").read_text())}
    assert {"silent · algebra", "silent · geometry"} <= series


def test_markdown_writes_its_figures_beside_it(tmp_path: Path) -> None:
    result = invoke("report", TOY, "-o", tmp_path / "r.md")
    figures = sorted(p.name for p in (tmp_path / "r_figures").iterdir())
    assert 0 == result.exit_code
    assert ["budget.png", "difficulty.png", "groupsize.png", "silent.png"] == figures


def test_the_report_file_follows_the_umask(toy_report: Path) -> None:
    expected = 0o666 & ~_umask()
    assert expected == toy_report.stat().st_mode & 0o777


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_the_unbiased_estimator_reaches_the_report(toy_report: Path) -> None:
    # 16 samples per prompt: unbiased to G = 16, not identified beyond.
    text = toy_report.read_text()
    assert '<td>unbiased</td><td class="num">16</td>' in text
    assert '<td>not identified</td><td class="num">32</td>' in text


# --------------------------------------------------------------------------------------------- refusals


def _report(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sigmatool", "report", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["data.csv"], "-o FILE: the report is a file"),
        (["data.csv", "-o", "-"], "-o FILE: the report is a file"),
        (["data.csv", "-o", "report.txt"], "-o report.txt: cannot tell the format from '.txt'"),
        (["data.csv", "-o", "data.csv"], "-o data.csv: cannot tell the format from '.csv'"),
        (["data.csv", "data.csv", "-o", "r.html"], "a DATA is given twice"),
        (["data.csv", "-o", "nowhere/r.html"], "-o nowhere/r.html: the folder"),
        (["data.csv", "--format", "md", "-o", "r.html"], "--format no longer applies here"),
    ],
)
def test_a_refused_report_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    shutil.copy(TOY, tmp_path / "data.csv")
    monkeypatch.chdir(tmp_path)
    # The first case in a real process, the others in-process through the same entry point.
    done = _report(args, tmp_path) if args == ["data.csv"] else run_in("report", *args)
    lines = done.stderr.splitlines()
    assert 2 == done.returncode, done.stderr
    assert 1 == len(lines), done.stderr
    assert message in lines[0]
    assert ["data.csv"] == sorted(p.name for p in tmp_path.iterdir())
    assert TOY.read_bytes() == (tmp_path / "data.csv").read_bytes()


# --------------------------------------------------------------------------------------------- committed examples


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    make(folder)
    return folder


# The committed examples against a fresh `make figures` (every figure and the report, a few seconds): run by
# `make test-slow`.
@pytest.mark.slow
@pytest.mark.parametrize("name", FIGURES)
def test_committed_figures_show_what_make_figures_makes(regenerated: Path, name: str) -> None:
    committed = png_data((ROOT / "docs" / "figures" / f"{name}.png").read_bytes())
    fresh = png_data((regenerated / "figures" / f"{name}.png").read_bytes())
    assert same_data(committed, fresh)


@pytest.mark.slow
def test_committed_report_says_what_make_figures_makes(regenerated: Path) -> None:
    committed = (ROOT / "docs" / REPORT).read_text()
    fresh = (regenerated / REPORT).read_text()
    assert COMMAND.sub("", SVG_BLOCK.sub("", fresh)) == COMMAND.sub("", SVG_BLOCK.sub("", committed))


@pytest.mark.slow
def test_committed_report_plots_what_make_figures_makes(regenerated: Path) -> None:
    committed = numbers((ROOT / "docs" / REPORT).read_text())
    fresh = numbers((regenerated / REPORT).read_text())
    assert same_data(committed, fresh)


def test_every_command_has_a_committed_figure() -> None:
    assert sorted(FIGURES) == sorted(p.stem for p in (ROOT / "docs" / "figures").glob("*.png"))


def numbers(page: str) -> dict[str, list[list[float]]]:
    return {
        label: [[float(v) for v in x.split()], [float(v) for v in y.split()]]
        for label, x, y in SERIES.findall(page)
    }


def same_data(committed: object, fresh: object) -> bool:
    """Equal structure and text; numbers equal to 1e-9 relative (another numpy may sum in another order)."""
    if isinstance(committed, float) and isinstance(fresh, float):
        return committed == pytest.approx(fresh, rel=1e-9, abs=1e-15)
    if isinstance(committed, dict) and isinstance(fresh, dict):
        return committed.keys() == fresh.keys() and all(same_data(committed[k], fresh[k]) for k in committed)
    if isinstance(committed, list) and isinstance(fresh, list):
        return len(committed) == len(fresh) and all(
            same_data(a, b) for a, b in zip(committed, fresh, strict=True)
        )
    return committed == fresh


def test_a_file_in_the_way_of_the_figures_folder_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "r_figures").write_text("not a folder")
    result = invoke("report", TOY, "-o", tmp_path / "r.md")
    assert 1 == result.exit_code
    assert 1 == len(result.stderr.splitlines()) - result.stderr.count("note:")
    assert "cannot make the figures' folder" in result.stderr


@pytest.mark.slow  # a whole report of the 215,608-prompt sample, in a process
def test_with_no_data_the_report_is_of_the_bundled_sample(tmp_path: Path) -> None:
    done = _report(["-o", "r.html"], tmp_path)
    cards = re.findall(r'<article class="card"><h3>([^<]*)</h3>', (tmp_path / "r.html").read_text())
    assert 0 == done.returncode
    assert ["&lt;bundled Big-Math sample&gt;"] == cards


def _settings(tmp_path: Path, *args: str) -> dict[str, str]:
    """The report's settings (``- name: value`` lines of its inputs section), by name."""
    path = tmp_path / "report.md"
    done = invoke("report", BIGMATH, *args, "-o", path)
    assert 0 == done.exit_code, done.stderr
    lines = [line[2:] for line in path.read_text().splitlines() if line.startswith("- ")]
    return dict(line.split(": ", 1) for line in lines if ": " in line)


def test_prior_none_names_the_estimator_the_run_uses(tmp_path: Path) -> None:
    said = _settings(tmp_path, "--prior", "none")
    assert "unbiased to n" == said["estimator"]
    assert said["prior"].startswith("none: ")
    assert "beyond its n, not identified" in said["prior"]


def test_the_default_estimator_says_the_prior_answers_beyond_n(tmp_path: Path) -> None:
    said = _settings(tmp_path)
    assert "unbiased, npmle beyond n" == said["estimator"]
    assert said["prior"].startswith("auto: ")

"""`--plot FILE` on every command: the figure carries the analysis' own numbers, in every format, the same
bytes run after run, written like any other output; and silent's sparkline in the table view."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sigmatool.figures.plot import png_data
from sigmatool.render.spark import BLOCKS, Sparkline, blocks, spark_lines
from sigmatool.render.table import View, print_table
from tests.conftest import BIGMATH, ROOT, TOY, csv_of, invoke, run_in

# Pages and figures are drawn and rendered: a slow suite of its own (make test-slow).
pytestmark = pytest.mark.slow

SVG_NS = "{http://www.w3.org/2000/svg}"
# docs/theory.md §2: Big-Math's silent share at G = 4 … 64, to the paper's two decimals of a percent.
PAPER_SILENT = {4.0: 0.5927, 8.0: 0.4428, 16.0: 0.3224, 32.0: 0.2301, 64.0: 0.1653}
# Small runs of every command: (arguments before --plot, the series that must be drawn).
COMMANDS = {
    "silent": (("silent", BIGMATH, "--G", "8"), "silent"),
    "budget": (("budget", BIGMATH, "--G", "8,inf"), "GRPO (= DAPO) · G = 8"),
    "groupsize": (("groupsize", BIGMATH, "--fidelity", "0.9"), "exact G"),
    "simulate": (("simulate", "--init", BIGMATH, "--prompts", "300", "--steps", "5"), "silent · GRPO"),
}
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<?xml", "pdf": b"%PDF-"}


def svg_series(path: Path) -> dict[str, tuple[list[float], list[float]]]:
    """label → (x, y) of every series group of an SVG file, parsed as XML."""
    root = ET.parse(path).getroot()
    return {
        g.attrib["data-series"]: (
            [float(v) for v in g.attrib["data-x"].split()],
            [float(v) for v in g.attrib["data-y"].split()],
        )
        for g in root.iter(f"{SVG_NS}g")
        if "data-x" in g.attrib and "data-x-name" in g.attrib
    }


def plotted(*args: object) -> pl.DataFrame:
    """Run a command with --plot and return its CSV output (the figure is written as a side effect)."""
    return csv_of(invoke(*args, "--format", "csv"))


# --------------------------------------------------------------------------------------------- silent


@pytest.fixture(scope="module")
def silent_svg(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, dict[str, tuple]]:
    path = tmp_path_factory.mktemp("silent") / "silent.svg"
    table = plotted("silent", BIGMATH, "--G", "4,8,16", "--plot", path)
    return table, svg_series(path)


def test_silent_plots_the_powers_of_two_around_the_asked_g(silent_svg: tuple) -> None:
    # A quarter of 4 is 1 (the grid starts at 2), four times 16 is 64.
    assert [2.0, 4.0, 8.0, 16.0, 32.0, 64.0] == silent_svg[1]["silent"][0]


@pytest.mark.parametrize("G", [4.0, 8.0, 16.0])
def test_silent_plot_holds_the_commands_own_numbers(silent_svg: tuple, G: float) -> None:
    table, series = silent_svg
    x, y = series["silent"]
    assert table.filter(pl.col("G") == G)["silent_rate"].item() == y[x.index(G)]


@pytest.fixture(scope="module")
def plugin_svg(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    path = tmp_path_factory.mktemp("silent") / "plugin.svg"
    plotted("silent", BIGMATH, "--G", "4,8,16", "--estimator", "plugin", "--plot", path)
    return svg_series(path)


@pytest.mark.parametrize(("G", "paper"), sorted(PAPER_SILENT.items()))
def test_silent_plot_of_the_plugin_matches_the_paper(
    plugin_svg: dict[str, tuple], G: float, paper: float
) -> None:
    x, y = plugin_svg["silent"]
    assert paper == pytest.approx(y[x.index(G)], abs=5e-5)


@pytest.mark.parametrize(("G", "paper"), [(4.0, 0.5859), (8.0, 0.4307), (16.0, 0.3019)])
def test_silent_plot_by_default_matches_the_papers_unbiased_rates(
    silent_svg: tuple, G: float, paper: float
) -> None:
    x, y = silent_svg[1]["silent"]
    assert paper == pytest.approx(y[x.index(G)], abs=5e-5)


def test_silent_plot_splits_into_all_right_and_all_wrong(silent_svg: tuple) -> None:
    series = silent_svg[1]
    total = [r + w for r, w in zip(series["all right"][1], series["all wrong"][1], strict=True)]
    assert series["silent"][1] == pytest.approx(total, rel=1e-12)


def test_silent_plot_draws_the_always_silent_floor(silent_svg: tuple) -> None:
    # Counts of 64 without a prior: the prompts never or always right in their 64 answers.
    table = silent_svg[0]
    assert [table["always_silent_share"][0]] * 6 == silent_svg[1]["never or always right"][1]


def test_silent_plot_of_the_plugin_calls_the_floor_silent_at_every_g(plugin_svg: dict[str, tuple]) -> None:
    assert "silent at every G" in plugin_svg


def test_silent_by_draws_a_line_per_group(tmp_path: Path) -> None:
    path = tmp_path / "by.svg"
    table = plotted("silent", TOY, "--by", "source", "--G", "8", "--plot", path)
    x, y = svg_series(path)["silent · geometry"]
    assert table.filter(pl.col("source") == "geometry")["silent_rate"].item() == y[x.index(8.0)]


@pytest.fixture(scope="module")
def unbiased_svg(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, dict[str, tuple]]:
    path = tmp_path_factory.mktemp("unbiased") / "unbiased.svg"
    args = ("silent", TOY, "--k-col", "k", "--n-col", "n", "--G", "4", "--estimator", "unbiased")
    table = plotted(*args, "--plot", path)
    return table, svg_series(path)


def test_silent_unbiased_grid_stops_at_the_samples(unbiased_svg: tuple) -> None:
    # The toy data has n = 16 samples per prompt: no unbiased estimate exists beyond G = 16.
    assert [2.0, 4.0, 8.0, 16.0] == unbiased_svg[1]["silent"][0]


def test_silent_unbiased_plot_uses_the_unbiased_estimate(unbiased_svg: tuple) -> None:
    table, series = unbiased_svg
    x, y = series["silent"]
    assert table["silent_rate"].item() == y[x.index(4.0)]


# --------------------------------------------------------------------------------------------- every command, every format


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], tuple[Result, Path]]:
    """Each command's figure in a format, drawn once whichever tests read it: (the run, the file)."""
    folder = tmp_path_factory.mktemp("drawn")
    done: dict[tuple[str, str], tuple[Result, Path]] = {}

    def draw(command: str, fmt: str) -> tuple[Result, Path]:
        if (command, fmt) not in done:
            args, _ = COMMANDS[command]
            path = folder / f"{command}.{fmt.upper() if fmt == 'pdf' else fmt}"
            done[command, fmt] = (invoke(*args, "--format", "csv", "--plot", path), path)
        return done[command, fmt]

    return draw


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_plots_in_every_format(drawn: Callable, command: str, fmt: str) -> None:
    result, path = drawn(command, fmt)
    assert 0 == result.exit_code
    assert MAGIC[fmt] == path.read_bytes()[: len(MAGIC[fmt])]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_png_carries_its_series(drawn: Callable, command: str) -> None:
    _, label = COMMANDS[command]
    _, path = drawn(command, "png")
    labels = [s["label"] for s in png_data(path.read_bytes())["series"]]  # type: ignore[index]
    assert label in labels


def test_budget_plot_holds_the_commands_shares(tmp_path: Path) -> None:
    table = plotted("budget", BIGMATH, "--G", "inf", "--plot", tmp_path / "b.png")
    series = {s["label"]: s["y"] for s in png_data((tmp_path / "b.png").read_bytes())["series"]}  # type: ignore[index]
    extreme = table.filter(pl.col("segment") == "extreme")["grpo_share"].item()
    assert extreme == series["GRPO (= DAPO) · G = ∞ · segments"][0]


def test_groupsize_plot_holds_the_exact_g(tmp_path: Path) -> None:
    # docs/theory.md §4: φ* = 0.9 needs G = 7 at p = 1/2 (the curve spans the data's 1/64 … 63/64).
    plotted("groupsize", BIGMATH, "--plot", tmp_path / "g.svg")
    x, y = svg_series(tmp_path / "g.svg")["exact G"]
    assert 7.0 == y[x.index(0.5)]


def test_simulate_plot_holds_the_trace(tmp_path: Path) -> None:
    args = (
        "simulate",
        "--init",
        "beta-mix",
        "--prompts",
        "200",
        "--steps",
        "4",
        "--trace",
        "--methods",
        "grpo",
    )
    trace = plotted(*args, "--plot", tmp_path / "s.svg")
    assert trace["q1_mean_p"].to_list() == svg_series(tmp_path / "s.svg")["hardest quartile · GRPO"][1]


def test_a_plot_and_a_data_file_together(tmp_path: Path) -> None:
    result = invoke("silent", BIGMATH, "-o", tmp_path / "s.csv", "--plot", tmp_path / "s.svg")
    assert 0 == result.exit_code
    assert ["s.csv", "s.svg"] == sorted(p.name for p in tmp_path.iterdir())


def test_per_prompt_output_can_have_a_plot(tmp_path: Path) -> None:
    result = invoke("groupsize", TOY, "--per-prompt", "--format", "csv", "--plot", tmp_path / "g.svg")
    assert 0 == result.exit_code
    assert (tmp_path / "g.svg").stat().st_size > 0


# --------------------------------------------------------------------------------------------- files


def _silent_svg_in_a_process(folder: Path) -> bytes:
    path = folder / "silent.svg"
    subprocess.run(
        [sys.executable, "-m", "sigmatool", "silent", str(BIGMATH), "--G", "8", "--plot", str(path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
        cwd=ROOT,
    )
    return path.read_bytes()


@pytest.mark.slow  # two processes; tests/test_figures.py checks every format in-process too
def test_the_svg_is_byte_identical_across_runs(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert _silent_svg_in_a_process(tmp_path / "a") == _silent_svg_in_a_process(tmp_path / "b")


def _refused(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sigmatool", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copy(TOY, tmp_path / "data.png")  # a CSV named like a figure, read with --input-format csv
    shutil.copy(TOY, tmp_path / "data.csv")
    (tmp_path / "folder.svg").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--plot", "figure.jpg"], "--plot figure.jpg: give a file name ending in .png, .svg or .pdf"),
        (["--plot", "figure"], "--plot figure: give a file name ending in .png, .svg or .pdf"),
        (["--plot", "nowhere/figure.svg"], "--plot nowhere/figure.svg: the folder"),
        (["--plot", "."], "--plot .: give a file name ending in"),
        (["--plot", "folder.svg"], "--plot folder.svg: is a folder; give a file name"),
        (["--format", "csv", "-o", "out.svg", "--plot", "out.svg"], "writes to the same file"),
        (["--plot", "data.png", "--input-format", "csv"], "this is the input file data.png"),
    ],
)
def test_a_bad_plot_path_is_one_line_and_exit_2(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, extra: list[str], message: str
) -> None:
    data = "data.png" if "data.png" in extra else "data.csv"
    before = sorted(p.name for p in workdir.iterdir())
    monkeypatch.chdir(workdir)
    # The first case in a real process, the others in-process through the same entry point.
    args = ["silent", data, *extra]
    done = _refused(args, workdir) if extra == ["--plot", "figure.jpg"] else run_in(*args)
    lines = done.stderr.splitlines()
    assert 2 == done.returncode
    assert 1 == len(lines)
    assert "" == done.stdout
    assert message in lines[0]
    assert before == sorted(p.name for p in workdir.iterdir())


def test_a_refused_plot_leaves_the_input_as_it_was(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workdir)
    run_in("silent", "data.png", "--input-format", "csv", "--plot", "data.png")
    assert TOY.read_bytes() == (workdir / "data.png").read_bytes()


def test_matplotlib_is_imported_only_for_a_figure(tmp_path: Path) -> None:
    code = (
        "import sys; from sigmatool.cli import main; "
        "main(['silent', sys.argv[1], '--format', 'csv', '-o', sys.argv[2]]); "
        "print('matplotlib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(BIGMATH), str(tmp_path / "s.csv")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "False" == done.stdout.strip()


# --------------------------------------------------------------------------------------------- sparkline


def spark_line(stdout: str) -> str:
    found = [line for line in stdout.splitlines() if line.startswith("silent vs G:")]
    assert 1 == len(found), stdout
    return found[0]


def test_the_table_view_has_a_sparkline_of_the_grid() -> None:
    line = spark_line(invoke("silent", BIGMATH, "--G", "4,8,16", "--format", "table").stdout)
    bars = line.split(": ", 1)[1].split(" ", 1)[0]
    assert 6 == len(bars)
    assert set() == set(bars) - set(BLOCKS)


def test_the_sparkline_heights_follow_the_silent_share() -> None:
    table = csv_of(invoke("silent", BIGMATH, "--G", "2,4,8,16,32,64", "--format", "csv"))
    line = spark_line(invoke("silent", BIGMATH, "--G", "4,8,16", "--format", "table").stdout)
    assert blocks(table["silent_rate"].to_list()) in line


def test_the_sparkline_names_its_ends() -> None:
    table = csv_of(invoke("silent", BIGMATH, "--G", "2,64", "--format", "csv"))
    first, last = (f"{100 * v:.1f}%" for v in table["silent_rate"])
    line = spark_line(invoke("silent", BIGMATH, "--G", "4,8,16", "--format", "table").stdout)
    assert f"from {first} at G=2 to {last} at G=64" in line


def test_the_sparkline_fits_60_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    line = spark_line(invoke("silent", BIGMATH, "--G", "2,4,8,16,32,64,128,256", "--format", "table").stdout)
    assert len(line) <= 60


@pytest.mark.parametrize("fmt", ["csv", "json", "tsv"])
def test_data_formats_have_no_sparkline(fmt: str) -> None:
    assert "silent vs G" not in invoke("silent", BIGMATH, "--format", fmt).stdout


def test_per_prompt_table_has_no_sparkline() -> None:
    assert "silent vs G" not in invoke("silent", TOY, "--per-prompt", "--format", "table").stdout


SPARK = Sparkline("silent vs G", "G", ("4", "8", "16"), (0.6, 0.45, 0.3))


def test_a_terminal_without_utf8_gets_plain_text() -> None:
    handle = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="replace")
    print_table(pl.DataFrame({"G": [8]}), View(spark=SPARK), handle, 60)
    handle.seek(0)
    assert "silent vs G: 60.0% at G=4, 45.0% at G=8, 30.0% at G=16" in handle.read()


def test_the_plain_form_wraps_to_the_width() -> None:
    lines = spark_lines(SPARK, 24, unicode=False)
    assert [] == [line for line in lines if len(line) > 24]


def test_a_narrow_terminal_keeps_the_bars() -> None:
    assert ["silent vs G: █▆▄ (G = 4…16)"] == spark_lines(SPARK, 30, unicode=True)


VALUES = st.lists(st.fractions(min_value=0, max_value=1, max_denominator=10**6), min_size=1, max_size=30)
# Sized for a CI run: exact fractions are slow to draw, and each example checks every block of its list.
SOME = settings(max_examples=50)


@SOME
@given(VALUES)
def test_a_block_is_within_a_sixteenth_of_its_share_of_the_largest(values: list[Fraction]) -> None:
    top = max(values)
    assume(top > 0)
    drawn = blocks([float(v) for v in values])
    # Rounding to the nearest eighth is within 1/16; a value under 1/16 of the largest still gets ▁ (1/8).
    far = [
        (b, v)
        for b, v in zip(drawn, values, strict=True)
        if v / top >= Fraction(1, 16) and abs(Fraction(BLOCKS.index(b) + 1, 8) - v / top) > Fraction(1, 16)
    ]
    assert [] == far


def test_all_zero_values_are_the_lowest_blocks() -> None:
    assert "▁▁" == blocks([0.0, 0.0])


@SOME
@given(VALUES)
def test_a_larger_value_never_gets_a_lower_block(values: list[Fraction]) -> None:
    drawn = [BLOCKS.index(b) for b in blocks([float(v) for v in values])]
    pairs = sorted(zip(values, drawn, strict=True))
    assert [level for _, level in pairs] == sorted(level for _, level in pairs)


def test_the_largest_value_is_a_full_block() -> None:
    assert "█" == blocks([0.2, 0.9, 0.4])[1]


@pytest.fixture(scope="module")
def ascii_run() -> subprocess.CompletedProcess[bytes]:
    """silent's table written to an ASCII-only stdout (PYTHONIOENCODING=ascii)."""
    return subprocess.run(
        [sys.executable, "-m", "sigmatool", "silent", str(BIGMATH), "--G", "4,8,16", "--format", "table"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
    )


def test_an_ascii_stdout_gets_the_sparkline_as_text(ascii_run: subprocess.CompletedProcess[bytes]) -> None:
    table = csv_of(invoke("silent", BIGMATH, "--G", "2,4,8,16,32,64", "--format", "csv"))
    points = ", ".join(
        f"{100 * v:.1f}% at G={G}" for G, v in zip(table["G"], table["silent_rate"], strict=True)
    )
    assert 0 == ascii_run.returncode
    assert f"silent vs G: {points}" == spark_line(ascii_run.stdout.decode("ascii"))


def test_an_ascii_stdout_gets_ascii_bars(ascii_run: subprocess.CompletedProcess[bytes]) -> None:
    assert "43.07% #####......." in ascii_run.stdout.decode("ascii")


# --------------------------------------------------------------------------------------------- --style paper


def svg_texts(path: Path) -> str:
    return " ".join("".join(t.itertext()) for t in ET.parse(path).getroot().iter(f"{SVG_NS}text"))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_draws_a_paper_figure_one_column_wide(tmp_path: Path, command: str) -> None:
    args, _ = COMMANDS[command]
    invoke(*args, "--format", "csv", "--plot", tmp_path / "f.svg", "--style", "paper")
    assert "234pt" == ET.parse(tmp_path / "f.svg").getroot().attrib["width"]


@pytest.mark.parametrize(("flags", "captioned"), [((), False), (("--caption",), True)])
def test_a_paper_figure_has_a_caption_only_when_asked(
    tmp_path: Path, flags: tuple[str, ...], captioned: bool
) -> None:
    invoke("silent", TOY, "--format", "csv", "--plot", tmp_path / "f.svg", "--style", "paper", *flags)
    assert captioned is ("Data:" in svg_texts(tmp_path / "f.svg"))


def test_a_paper_pdf_is_written(tmp_path: Path) -> None:
    result = invoke("silent", TOY, "--format", "csv", "--plot", tmp_path / "fig.pdf", "--style", "paper")
    assert 0 == result.exit_code
    assert b"/MediaBox [ 0 0 234 " in (tmp_path / "fig.pdf").read_bytes()

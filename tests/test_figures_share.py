"""Figures and outputs a person can share: captions that can be left out, paths as the user typed them,
legends clear of the data, every band explained."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from matplotlib.lines import Line2D

from sigmatool.figures.plot import Plot, png_data
from tests.conftest import ROOT, invoke, run_cli

# Every command's figure, table and report scanned for paths and overlaps: `make test-slow` runs them.
pytestmark = pytest.mark.slow

# Each command with --plot, on inputs under ``sd/`` (the sample folder, reached by a relative link).
PLOTTED = {
    "silent": ("silent", "sd/bigmath_solve_rates.parquet", "--G", "4,8,16,32"),
    "silent-by": ("silent", "sd/toy_pass_rates.csv", "--by", "source"),
    "budget": ("budget", "sd/bigmath_solve_rates.parquet", "--G", "8,inf"),
    "groupsize": ("groupsize", "sd/toy_pass_rates.csv"),
    "simulate": ("simulate", "--init", "sd/toy_pass_rates.csv", "--prompts", "200", "--steps", "4"),
    "simulate-sample": ("simulate", "--prompts", "200", "--steps", "4"),
    "track": ("track", "sd/example_run", "--from", "verl"),
    "plan": ("plan", "sd/toy_pass_rates.csv", "--budget", "8"),
}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with ``sd`` linking to the sample data, as a user's project might."""
    (tmp_path / "sd").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _absolute_paths(text: str) -> list[str]:
    """The absolute local folders a text names: this checkout's, the working folder's, the package's."""
    roots = {str(ROOT), os.getcwd(), os.path.realpath(os.getcwd()), str(Path(os.__file__).parent)}
    return [root for root in roots if root in text]


@pytest.mark.parametrize("name", sorted(PLOTTED))
def test_no_caption_leaves_the_caption_out_of_the_image(here: Path, name: str) -> None:
    result = invoke(*PLOTTED[name], "--plot", "fig.svg", "--no-caption", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    svg = (here / "fig.svg").read_text()
    assert "Data:" not in svg
    assert "Start population:" not in svg


@pytest.mark.parametrize("name", ["silent", "track"])
def test_caption_is_drawn_by_default(here: Path, name: str) -> None:
    result = invoke(*PLOTTED[name], "--plot", "fig.svg", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert "Data:" in (here / "fig.svg").read_text()


def test_no_caption_png_keeps_the_caption_in_its_data(here: Path) -> None:
    result = invoke(*PLOTTED["silent"], "--plot", "fig.png", "--no-caption", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    caption = str(png_data((here / "fig.png").read_bytes())["caption"])
    assert caption.endswith("Data: sd/bigmath_solve_rates.parquet.")


@pytest.mark.parametrize("name", sorted(PLOTTED))
def test_figure_names_no_absolute_path(here: Path, name: str) -> None:
    result = invoke(*PLOTTED[name], "--plot", "fig.png", "--format", "table")
    assert result.exit_code == 0, result.stderr
    caption = str(png_data((here / "fig.png").read_bytes())["caption"])
    assert [] == _absolute_paths(caption)


@pytest.mark.parametrize("name", sorted(PLOTTED))
def test_table_and_notes_name_no_absolute_path(here: Path, name: str) -> None:
    result = invoke(*PLOTTED[name], "--format", "table")
    assert result.exit_code == 0, result.stderr
    assert [] == _absolute_paths(result.stdout + result.stderr)


@pytest.mark.parametrize("page", ["r.md", "r.html"])
@pytest.mark.parametrize("data", [("sd/toy_pass_rates.csv",), ()])
def test_report_names_no_absolute_path(here: Path, page: str, data: tuple[str, ...]) -> None:
    # A real process: with no DATA and stdin not a pipe, the report reads the bundled sample.
    result = run_cli("report", *data, "-o", page, cwd=here, env={"PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    text = (here / page).read_text()
    for figure in (here / "r_figures").glob("*") if page == "r.md" else ():
        text += figure.read_text(errors="replace")
    assert [] == _absolute_paths(text)


# --------------------------------------------------------------------------------------------- legends


def _drawn_points(line: Line2D) -> np.ndarray:
    """Display coordinates along a drawn line: its points and 50 steps along each segment."""
    xy = line.get_transform().transform(line.get_xydata())
    xy = xy[np.all(np.isfinite(xy), axis=1)]
    if len(xy) < 2:
        return xy
    steps = np.linspace(0.0, 1.0, 50)[:, None, None]
    return (xy[:-1] + steps * (xy[1:] - xy[:-1])).reshape(-1, 2)


def _covered(plot: Plot) -> list[str]:
    """The lines of the figure that any legend's box lies on."""
    fig = plot.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    hits = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            for line in ax.get_lines():
                points = _drawn_points(line)
                inside = (
                    (points[:, 0] > box.x0)
                    & (points[:, 0] < box.x1)
                    & (points[:, 1] > box.y0)
                    & (points[:, 1] < box.y1)
                )
                if inside.any():
                    hits.append(str(line.get_label()))
    return hits


@pytest.mark.parametrize("name", sorted(PLOTTED))
def test_legends_lie_on_no_line(here: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[Plot] = []
    save = Plot.save

    def keep(plot: Plot, path: str, option: str = "--plot") -> Path:
        drawn.append(plot)
        return save(plot, path, option)

    monkeypatch.setattr(Plot, "save", keep)
    result = invoke(*PLOTTED[name], "--plot", "fig.png", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert [] == _covered(drawn[0])


def test_legend_check_sees_a_legend_on_the_data() -> None:
    from sigmatool.figures.style import new_figure

    fig = new_figure(3.4, 2.3)
    ax = fig.subplots()
    ax.plot([0, 1], [0.95, 0.95], label="flat")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper right")
    assert ["flat"] == _covered(Plot("probe", fig, ""))


# --------------------------------------------------------------------------------------------- captions


def test_track_caption_says_how_many_deviations_the_band_spans(here: Path) -> None:
    result = invoke(*PLOTTED["track"], "--z", "3", "--plot", "fig.png", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    caption = str(png_data((here / "fig.png").read_bytes())["caption"])
    assert "shaded: expected ± 3 binomial standard deviations" in caption


def test_budget_caption_gives_the_regions_bounds(here: Path) -> None:
    result = invoke(*PLOTTED["budget"], "--extreme", "0.05", "--plot", "fig.png", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    caption = str(png_data((here / "fig.png").read_bytes())["caption"])
    assert "extreme prompts (p < 0.05 or p > 0.95)" in caption

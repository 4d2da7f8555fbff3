"""Figures show the analyses' values (read back from matplotlib and from the files), in files that are
byte-identical run after run and written like any other output."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from sigmatool import budget, silent
from sigmatool.errors import UsageError
from sigmatool.figures import (
    Plot,
    budget_figure,
    difficulty_figure,
    groupsize_figure,
    plan_figure,
    silent_figure,
    simulate_figure,
    track_figure,
    write_atomic,
)
from sigmatool.figures.difficulty import cells_of, shares
from sigmatool.figures.plot import png_data
from sigmatool.figures.style import GREY, GROUP_COLOURS, LIGHT
from sigmatool.groupsize import groupsize_curve
from sigmatool.load import read_histogram
from sigmatool.options import GroupSizeOptions, InputOptions
from sigmatool.render import files
from sigmatool.simulate import simulate
from tests.conftest import BIGMATH, ROOT, TOY

# Pages and figures are drawn and rendered: a slow suite of its own (make test-slow).
pytestmark = pytest.mark.slow

GRID = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
SVG_NS = "{http://www.w3.org/2000/svg}"
# docs/theory.md §2: Big-Math's silent share at G = 4 … 64 (to the paper's two decimals of a percent).
PAPER_SILENT = {4.0: 0.5927, 8.0: 0.4428, 16.0: 0.3224, 32.0: 0.2301, 64.0: 0.1653}


@pytest.fixture(scope="module")
def bigmath() -> pl.DataFrame:
    return read_histogram(InputOptions(paths=(str(BIGMATH),))).frame


@pytest.fixture(scope="module")
def toy() -> pl.DataFrame:
    return read_histogram(InputOptions(paths=(str(TOY),), k_col="k", n_col="n", by=("source",))).frame


@pytest.fixture(scope="module")
def silent_plot(bigmath: pl.DataFrame) -> Plot:
    return silent_figure(
        silent.summarize(bigmath, (), GRID, estimator="plugin"), source="bigmath_solve_rates.parquet"
    )


def svg_series(svg: str) -> dict[str, tuple[list[float], list[float]]]:
    """label → (x, y) of every series group in an SVG file, parsed as XML."""
    root = ET.fromstring(svg)
    return {
        g.attrib["data-series"]: (
            [float(v) for v in g.attrib["data-x"].split()],
            [float(v) for v in g.attrib["data-y"].split()],
        )
        for g in root.iter(f"{SVG_NS}g")
        if "data-x" in g.attrib and " " in g.attrib["data-x"] + " "
    }


def line(plot: Plot, label: str) -> Line2D:
    """The matplotlib line drawn for a series."""
    gid = plot.get(label).gid
    found = [a for ax in plot.figure.axes for a in ax.get_lines() if a.get_gid() == gid]
    assert 1 == len(found)
    return found[0]


# --------------------------------------------------------------------------------------------- silent


def test_silent_line_is_the_summary(silent_plot: Plot, bigmath: pl.DataFrame) -> None:
    summary = silent.summarize(bigmath, (), GRID, estimator="plugin")
    drawn = line(silent_plot, "silent")
    assert summary["silent_rate"].to_list() == list(drawn.get_ydata())  # type: ignore[arg-type]


def test_silent_line_is_drawn_at_each_g(silent_plot: Plot) -> None:
    assert GRID == list(line(silent_plot, "silent").get_xdata())  # type: ignore[arg-type]


@pytest.mark.parametrize(("G", "paper"), sorted(PAPER_SILENT.items()))
def test_silent_line_matches_the_paper(silent_plot: Plot, G: float, paper: float) -> None:
    s = silent_plot.get("silent")
    assert paper == pytest.approx(s.y[s.x.index(G)], abs=5e-5)


def test_silent_split_adds_up_to_the_silent_share(silent_plot: Plot) -> None:
    right, wrong, total = (silent_plot.get(k).y for k in ("all right", "all wrong", "silent"))
    assert list(total) == pytest.approx([r + w for r, w in zip(right, wrong, strict=True)], rel=1e-12)


def test_silent_floor_is_the_never_or_always_solved_share(silent_plot: Plot) -> None:
    # docs/theory.md §2: 4.02 % never and 7.16 % always solved.
    assert [pytest.approx(0.1118, abs=1e-4)] * len(GRID) == list(silent_plot.get("silent at every G").y)


def test_silent_svg_carries_the_plotted_values(silent_plot: Plot, bigmath: pl.DataFrame) -> None:
    summary = silent.summarize(bigmath, (), GRID, estimator="plugin")
    x, y = svg_series(silent_plot.svg())["silent"]
    assert (GRID, summary["silent_rate"].to_list()) == (x, y)


def test_silent_svg_markers_have_their_values_as_titles(silent_plot: Plot) -> None:
    assert "<title>G 8: 44.28 %</title>" in silent_plot.svg()


def test_silent_png_carries_the_plotted_values(silent_plot: Plot, tmp_path: Path) -> None:
    path = silent_plot.save(tmp_path / "silent.png")
    series = {s["label"]: s["y"] for s in png_data(path.read_bytes())["series"]}  # type: ignore[attr-defined]
    assert list(silent_plot.get("silent").y) == series["silent"]


def test_silent_by_draws_one_line_per_group(toy: pl.DataFrame) -> None:
    summary = silent.summarize(toy, ("source",), GRID, estimator="plugin")
    plot = silent_figure(summary, by=("source",))
    geometry = summary.filter(pl.col("source") == "geometry")["silent_rate"].to_list()
    assert geometry == list(plot.get("silent · geometry").y)


def test_silent_compares_estimators(toy: pl.DataFrame) -> None:
    sizes = [2.0, 4.0, 8.0, 16.0]
    frames = {e: silent.summarize(toy, (), sizes, estimator=e) for e in ("plugin", "unbiased")}
    plot = silent_figure(frames)
    assert frames["unbiased"]["silent_rate"].to_list() == list(plot.get("silent (unbiased)").y)


def test_silent_refuses_a_binned_summary(bigmath: pl.DataFrame) -> None:
    with pytest.raises(UsageError, match="without bins"):
        silent_figure(silent.summarize(bigmath, (), [8.0], bins=10, estimator="plugin"))


def test_a_missing_column_is_named(bigmath: pl.DataFrame) -> None:
    with pytest.raises(UsageError, match="all_wrong_rate"):
        silent_figure(silent.summarize(bigmath, (), [8.0], estimator="plugin").drop("all_wrong_rate"))


# --------------------------------------------------------------------------------------------- budget


@pytest.fixture(scope="module")
def budget_frame(bigmath: pl.DataFrame) -> pl.DataFrame:
    return budget.summarize(bigmath, (), [8.0, math.inf], estimator="plugin")


def test_budget_bars_are_the_bin_shares(budget_frame: pl.DataFrame) -> None:
    plot = budget_figure(budget_frame)
    gids = {f"{plot.get('GRPO (= DAPO) · G = ∞').gid}-{i}" for i in range(10)}
    heights = [p.get_height() for ax in plot.figure.axes for p in ax.patches if p.get_gid() in gids]
    bins = budget_frame.filter((pl.col("G") == "inf") & (pl.col("segment") == "bin"))
    assert bins["grpo_share"].to_list() == heights


@pytest.mark.parametrize(
    ("label", "paper"),
    [("GRPO (= DAPO) · G = ∞ · segments", 0.2470), ("Dr. GRPO · G = ∞ · segments", 0.1388)],
)
def test_budget_extreme_share_matches_the_paper(budget_frame: pl.DataFrame, label: str, paper: float) -> None:
    # docs/theory.md §5: extreme share 13.88 % (Dr. GRPO) → 24.70 % (GRPO) at G = ∞.
    extreme = budget_figure(budget_frame).get(label)
    assert paper == pytest.approx(extreme.y[0], abs=5e-5)


def test_budget_svg_titles_name_the_segment(budget_frame: pl.DataFrame) -> None:
    assert "extreme: 24.70 %" in budget_figure(budget_frame).svg()


def test_budget_by_draws_a_row_per_group(toy: pl.DataFrame) -> None:
    plot = budget_figure(
        budget.summarize(toy, ("source",), [8.0, math.inf], estimator="plugin"), by=("source",)
    )
    main = [ax for ax in plot.figure.axes if ax.get_xlabel() == "pass rate p"]
    assert 4 == len(main)


# --------------------------------------------------------------------------------------------- groupsize


@pytest.fixture(scope="module")
def groupsize_plot(bigmath: pl.DataFrame) -> Plot:
    options = GroupSizeOptions()
    return groupsize_figure(groupsize_curve(options, points=1999), bigmath, options=options)


@pytest.mark.parametrize(("p", "paper"), [(0.5, 7), (0.3, 9), (0.7, 9), (0.1, 22), (0.05, 42), (0.95, 42)])
def test_groupsize_steps_are_the_exact_sizes(groupsize_plot: Plot, p: float, paper: int) -> None:
    # docs/theory.md §4, φ* = 0.90; the grid i/2000 holds these rates exactly.
    exact = groupsize_plot.get("exact G")
    assert paper == exact.y[exact.x.index(p)]


def test_groupsize_law_is_one_over_8_eps_p_q(groupsize_plot: Plot) -> None:
    law = groupsize_plot.get("law")
    assert 5.0 == pytest.approx(law.y[law.x.index(0.5)], rel=1e-12)


def test_groupsize_histogram_is_beneath(groupsize_plot: Plot, bigmath: pl.DataFrame) -> None:
    assert bigmath.height == len(groupsize_plot.get("prompts").x)


# --------------------------------------------------------------------------------------------- difficulty


def test_difficulty_has_a_bar_per_distinct_rate(bigmath: pl.DataFrame) -> None:
    plot = difficulty_figure(bigmath)
    assert [k / 64 for k in range(65)] == list(plot.get("prompts").x)


@pytest.mark.parametrize(("p", "paper"), [(0.0, 0.0402), (1.0, 0.0716)])
def test_difficulty_ends_match_the_paper(bigmath: pl.DataFrame, p: float, paper: float) -> None:
    bars = difficulty_figure(bigmath).get("prompts")
    assert paper == pytest.approx(bars.y[bars.x.index(p)], abs=5e-5)


def test_share_ticks_are_the_values_they_mark() -> None:
    # The report's difficulty histogram once read 0, 2, 5, 8, 10, … at a 2.5 % step (2.5 and 7.5 rounded).
    import matplotlib.pyplot as plt

    from sigmatool.figures.style import percent_axis

    fig, ax = plt.subplots()
    ticks = [0.0, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175]
    ax.set_ylim(0.0, 0.18)
    ax.set_yticks(ticks)
    percent_axis(ax)
    fig.canvas.draw()
    assert ["0", "2.5", "5", "7.5", "10", "12.5", "15", "17.5"] == [
        t.get_text() for t in ax.get_yticklabels()
    ]
    plt.close(fig)


def test_difficulty_bins_many_distinct_rates() -> None:
    hist = pl.DataFrame({"p": np.linspace(0.0, 1.0, 1001), "prompts": [1] * 1001})
    assert 50 == len(difficulty_figure(hist).get("prompts").x)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 16), st.integers(1, 1000)),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([None, 3, 10]),
)
def test_difficulty_shares_are_exact(cells: list[tuple[int, int]], bins: int | None) -> None:
    hist = pl.DataFrame({"p": [k / 16 for k, _ in cells], "prompts": [w for _, w in cells]})
    grid = cells_of(hist["p"].to_numpy(), bins)
    total = sum(Fraction(w) for _, w in cells)
    for i, share in enumerate(shares(hist, grid)):
        inside = [
            w
            for k, w in cells
            if (grid.centres[i] == k / 16 if grid.lattice else min(int(k / 16 * bins), bins - 1) == i)  # type: ignore[operator]
        ]
        assert float(sum(Fraction(w) for w in inside) / total) == pytest.approx(share, rel=1e-12, abs=1e-15)


# --------------------------------------------------------------------------------------------- simulate, track, plan


def test_simulate_draws_the_trace() -> None:
    trace, summary = simulate("beta-mix", prompts=200, steps=5, seed=3)
    plot = simulate_figure(trace, summary)
    dr = trace.filter(pl.col("method") == "drgrpo").sort("step")
    assert dr["q1_mean_p"].to_list() == list(plot.get("hardest quartile · Dr. GRPO").y)


def test_simulate_puts_r2_in_the_legend() -> None:
    trace, summary = simulate("beta-mix", prompts=200, steps=5, seed=3, methods="grpo")
    plot = simulate_figure(trace, summary)
    legend = [t.get_text() for ax in plot.figure.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert f"GRPO (R² = {summary['silent_r2'][0]:.3f})" in legend


TRACK = pl.DataFrame(
    {
        "step": [1, 2, 3],
        "measured_silent": [0.5, 0.4, 0.35],
        "expected_silent": [0.48, 0.42, 0.36],
        "expected_silent_lo": [0.45, 0.39, 0.33],
        "expected_silent_hi": [0.51, 0.45, 0.39],
    }
)


def test_track_draws_measured_and_expected() -> None:
    plot = track_figure(TRACK)
    assert [0.5, 0.4, 0.35] == list(plot.get("measured").y)
    assert [0.48, 0.42, 0.36] == list(plot.get("expected").y)


def test_track_names_a_missing_column() -> None:
    with pytest.raises(UsageError, match="expected_silent"):
        track_figure(TRACK.drop("expected_silent"))


def test_plan_uniform_line_spends_the_same_rollouts() -> None:
    allocation = pl.DataFrame(
        {"p": [0.1, 0.5, 0.9, 0.0], "group_size": [16, 4, 16, 0], "prompts": [1, 3, 2, 5]}
    )
    comparison = pl.DataFrame(
        {"rollouts_per_prompt": [4.0], "plan_objective": [0.3], "uniform_objective": [0.25]}
    )
    plot = plan_figure(allocation, comparison, objective="mean E[σ]")
    uniform = Fraction(16 * 1 + 4 * 3 + 16 * 2, 11)
    heights = {
        ln.get_ydata()[0] for ax in plot.figure.axes for ln in ax.get_lines() if ln.get_linestyle() == ":"
    }  # type: ignore[index]
    assert {float(uniform)} == heights


# --------------------------------------------------------------------------------------------- house style


@pytest.fixture(scope="module")
def every_plot(bigmath: pl.DataFrame, toy: pl.DataFrame) -> list[Plot]:
    options = GroupSizeOptions()
    trace, summary = simulate("beta-mix", prompts=100, steps=3, seed=1)
    return [
        silent_figure(silent.summarize(bigmath, (), GRID, estimator="plugin")),
        silent_figure(silent.summarize(toy, ("source",), GRID, estimator="plugin"), by=("source",)),
        budget_figure(budget.summarize(bigmath, (), [8.0, math.inf], estimator="plugin")),
        groupsize_figure(groupsize_curve(options, points=99), bigmath, options=options),
        difficulty_figure(toy, by=("source",)),
        simulate_figure(trace, summary),
        track_figure(TRACK),
    ]


def test_every_axis_is_labelled(every_plot: list[Plot]) -> None:
    missing = []
    for plot in every_plot:
        for ax in plot.figure.axes:
            shares_y = [a for a in ax.get_shared_y_axes().get_siblings(ax) if a.get_ylabel()]
            named_x = ax.get_xlabel() or all(t.get_text() for t in ax.get_xticklabels())
            if not (shares_y and named_x):
                missing.append(plot.name)
    assert [] == missing


def visible(artist: object) -> bool:
    """A drawn series shows: a line or edge with a width, markers, or a filled face."""
    if isinstance(artist, Line2D):
        return artist.get_linewidth() > 0 or artist.get_marker() not in ("None", "", None)
    if isinstance(artist, Patch):
        return artist.get_linewidth() > 0 or (artist.get_fill() and artist.get_facecolor()[3] > 0)
    return bool(np.size(artist.get_sizes()))  # type: ignore[attr-defined]


def test_every_series_is_visible(every_plot: list[Plot]) -> None:
    hidden = []
    for plot in every_plot:
        gids = {s.gid for s in plot.series if not s.per_point}
        artists = [a for ax in plot.figure.axes for a in ax.get_children() if a.get_gid() in gids]
        hidden += [(plot.name, a.get_gid()) for a in artists if not visible(a)]
    assert [] == hidden


def test_lines_use_the_palette(every_plot: list[Plot]) -> None:
    allowed = {c.lower() for c in (*GROUP_COLOURS, GREY, LIGHT)}
    used = {str(ln.get_color()).lower() for p in every_plot for ax in p.figure.axes for ln in ax.get_lines()}
    assert set() == used - allowed


def test_a_single_column_figure_fits_a_paper_column(silent_plot: Plot) -> None:
    assert 3.4 == silent_plot.figure.get_size_inches()[0]


def test_the_caption_names_source_and_estimator(silent_plot: Plot) -> None:
    assert "estimator: plug-in" in silent_plot.caption
    assert "Data: bigmath_solve_rates.parquet." in silent_plot.caption


def test_user_text_stays_valid_svg(toy: pl.DataFrame) -> None:
    odd = toy.with_columns(pl.col("source").replace({"algebra": 'a<b & "c" $x$'}))
    plot = silent_figure(silent.summarize(odd, ("source",), [2.0, 8.0]), by=("source",))
    assert 'silent · a<b & "c" $x$' in svg_series(plot.svg())


# --------------------------------------------------------------------------------------------- files


@pytest.mark.parametrize(("suffix", "magic"), [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_the_extension_picks_the_format(silent_plot: Plot, tmp_path: Path, suffix: str, magic: bytes) -> None:
    assert silent_plot.save(tmp_path / f"f{suffix}").read_bytes().startswith(magic)


def test_an_unknown_extension_is_a_usage_error(silent_plot: Plot, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"\.png, \.svg or \.pdf"):
        silent_plot.save(tmp_path / "f.jpg")


def test_a_missing_folder_is_a_usage_error(silent_plot: Plot, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        silent_plot.save(tmp_path / "nowhere" / "f.svg")


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_the_file_mode_follows_the_umask(tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # A process reads its umask once (reading it means setting it); forget the value read before.
    monkeypatch.setattr(files, "_UMASK", [])
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "f.svg", b"<svg/>")
    finally:
        os.umask(old)
    assert 0o666 & ~umask == (tmp_path / "f.svg").stat().st_mode & 0o777


def test_writing_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "f.svg").write_bytes(b"old")
    write_atomic(tmp_path / "f.svg", b"new")
    assert ["f.svg"] == sorted(p.name for p in tmp_path.iterdir())
    assert b"new" == (tmp_path / "f.svg").read_bytes()


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    (tmp_path / "f.svg").write_bytes(b"old")
    with pytest.raises(TypeError):
        write_atomic(tmp_path / "f.svg", "not bytes")  # type: ignore[arg-type]
    assert ["f.svg"] == sorted(p.name for p in tmp_path.iterdir())
    assert b"old" == (tmp_path / "f.svg").read_bytes()


RENDER = """
import sys
from sigmatool import silent
from sigmatool.figures import silent_figure
from sigmatool.load import InputOptions, read_histogram
hist = read_histogram(InputOptions(paths=(sys.argv[1],))).frame
summary = silent.summarize(hist, (), [2.0, 8.0, 64.0])
for style in ("screen", "paper"):
    plot = silent_figure(summary, source="sample", style=style)
    for suffix in ("svg", "pdf", "png"):
        plot.save(f"{sys.argv[2]}/{style}.{suffix}")
"""


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The same figure saved by two separate processes (run side by side)."""
    out = [tmp_path_factory.mktemp(run) for run in ("a", "b")]
    runs = [subprocess.Popen([sys.executable, "-c", RENDER, str(BIGMATH), str(f)], cwd=ROOT) for f in out]
    assert [0, 0] == [run.wait() for run in runs]
    return out


@pytest.mark.parametrize("style", ["screen", "paper"])
@pytest.mark.parametrize("suffix", ["svg", "pdf", "png"])
def test_files_are_identical_across_runs(two_runs: list[Path], suffix: str, style: str) -> None:
    first, second = (folder / f"{style}.{suffix}" for folder in two_runs)
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize("style", ["screen", "paper"])
@pytest.mark.parametrize(
    ("suffix", "stamp"), [("svg", b"<dc:date>"), ("pdf", b"/CreationDate"), ("png", b"Software")]
)
def test_files_carry_no_date_or_software_stamp(
    two_runs: list[Path], suffix: str, stamp: bytes, style: str
) -> None:
    assert stamp not in (two_runs[0] / f"{style}.{suffix}").read_bytes()


def test_matplotlib_is_not_loaded_at_start_up() -> None:
    code = "import sys, sigmatool, sigmatool.cli; print('matplotlib' in sys.modules)"
    assert (
        "False"
        == subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
    )

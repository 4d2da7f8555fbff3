"""A prior reaches every command, figure and report where it has a meaning, and each says it used one.

The figures' embedded data are compared with the CSV the same command writes: a figure under a prior
shows the prior's numbers, not the plug-in's.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from sigmatool.figures.plot import png_data
from tests.conftest import SAMPLE, csv_of, invoke

EIGHT = SAMPLE / "bigmath_8_samples.csv"
COUNTS = ("--k-col", "k", "--n-col", "n", "--weight-col", "count")
PRIOR = ("--prior", "npmle")


def _series(path: Path) -> dict[str, dict[str, object]]:
    data = png_data(path.read_bytes())
    return {s["label"]: s for s in data["series"]}  # type: ignore[index, union-attr]


def _caption(path: Path) -> str:
    return str(png_data(path.read_bytes())["caption"])


@pytest.fixture(scope="module")
def groupsize_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, Path]:
    figure = tmp_path_factory.mktemp("gs") / "g.png"
    rows = csv_of(
        invoke("groupsize", EIGHT, "--k-col", "k", "--n-col", "n", *PRIOR, "--per-prompt", "--plot", figure)
    )
    return rows, figure


def test_groupsize_figure_under_a_prior_draws_the_posterior_sizes(
    groupsize_run: tuple[pl.DataFrame, Path],
) -> None:
    rows, figure = groupsize_run
    table = rows.filter(pl.col("group_size").is_not_null()).select("p", "group_size").unique().sort("p")
    drawn = _series(figure)["posterior G"]
    assert list(zip(table["p"], table["group_size"].cast(pl.Float64), strict=True)) == sorted(
        zip(drawn["x"], drawn["y"], strict=True)  # type: ignore[call-overload]
    )


def test_groupsize_caption_names_the_prior(groupsize_run: tuple[pl.DataFrame, Path]) -> None:
    assert "Estimator: prior npmle" in _caption(groupsize_run[1])


def test_silent_figure_under_a_prior_draws_the_prior_s_rates(tmp_path: Path) -> None:
    figure = tmp_path / "s.png"
    summary = csv_of(invoke("silent", EIGHT, *COUNTS, *PRIOR, "--G", "16", "--plot", figure, "-f", "csv"))
    drawn = _series(figure)
    line = next(s for label, s in drawn.items() if label.startswith("silent"))
    at = dict(zip(line["x"], line["y"], strict=True))  # type: ignore[call-overload]
    assert summary["silent_rate"][0] == pytest.approx(at[16.0], rel=1e-12)


def test_silent_caption_names_the_prior(tmp_path: Path) -> None:
    figure = tmp_path / "s.png"
    invoke("silent", EIGHT, *COUNTS, *PRIOR, "--G", "16", "--plot", figure, "-f", "csv")
    assert "prior npmle" in _caption(figure)


def test_budget_caption_names_the_prior(tmp_path: Path) -> None:
    figure = tmp_path / "b.png"
    invoke("budget", EIGHT, *COUNTS, *PRIOR, "--G", "16", "--plot", figure, "-f", "csv")
    assert "Estimator: prior npmle" in _caption(figure)


def test_plan_figure_under_a_prior_shows_the_plan_s_objective(tmp_path: Path) -> None:
    figure = tmp_path / "p.png"
    summary = csv_of(invoke("plan", EIGHT, *COUNTS, *PRIOR, "--plot", figure, "-f", "csv"))
    planned = summary.filter(pl.col("strategy") == "plan")
    curve = _series(figure)["plan"]
    at = dict(zip(curve["x"], curve["y"], strict=True))  # type: ignore[call-overload]
    assert planned["objective"][0] / planned["prompts"][0] == pytest.approx(at[8.0], rel=1e-12)


@pytest.fixture(scope="module")
def report_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("report") / "r.html"
    result = invoke("report", EIGHT, *COUNTS, *PRIOR, "--plan-budget", "8", "-o", path)
    assert 0 == result.exit_code, result.stderr
    return re.sub(r"<[^>]+>", " ", path.read_text())


def test_report_under_a_prior_shows_the_prior_s_silent_share(report_text: str) -> None:
    silent = csv_of(invoke("silent", EIGHT, *COUNTS, *PRIOR, "--G", "8", "-f", "csv"))
    assert f"prior npmle 8 215,608 {100 * silent['silent_rate'][0]:.2f} %" in " ".join(report_text.split())


def test_report_settings_name_the_prior(report_text: str) -> None:
    assert "posterior mean given its k of n, fitted per input" in report_text


def test_report_prior_needs_counts(tmp_path: Path) -> None:
    result = invoke("report", SAMPLE / "toy_pass_rates.csv", *PRIOR, "-o", tmp_path / "r.html")
    assert 2 == result.exit_code

"""`--plot FILE` on `track`, `plan`, a planned `simulate`, streamed pass rates and a prior: each figure
carries numbers that an independent computation (or the command's own table) gives."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import BIGMATH, SAMPLE, TOY, csv_of, invoke
from tests.test_cli_figures import svg_series
from tests.test_cli_report import numbers

# Pages and figures are drawn and rendered: a slow suite of its own (make test-slow).
pytestmark = pytest.mark.slow

RUN = SAMPLE / "example_run"
COUNTS = SAMPLE / "bigmath_8_samples.csv"


def expected_sigma(p: float, G: int) -> float:
    """E[σ] of a group of G answers at pass rate p, by summing over k (docs/theory.md §3)."""
    return sum(math.comb(G, k) * p**k * (1 - p) ** (G - k) * math.sqrt(k * (G - k)) / G for k in range(G + 1))


# ---------------------------------------------------------------------------------------------- track


@pytest.fixture(scope="module")
def track_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, dict[str, tuple]]:
    path = tmp_path_factory.mktemp("track") / "track.svg"
    table = csv_of(invoke("track", RUN, "--from", "verl", "--plot", path, "--format", "csv"))
    return table.filter(pl.col("compared_groups") > 0), svg_series(path)


def test_track_plot_draws_each_compared_step(track_run: tuple) -> None:
    table, series = track_run
    assert [float(s) for s in table["step"]] == series["measured"][0]


def test_track_plot_measured_is_the_tables(track_run: tuple) -> None:
    table, series = track_run
    assert table["compared_silent_fraction"].to_list() == series["measured"][1]


def test_track_plot_expected_is_the_tables(track_run: tuple) -> None:
    table, series = track_run
    assert table["expected_silent_fraction"].to_list() == series["expected"][1]


# ----------------------------------------------------------------------------------------------- plan


@pytest.fixture(scope="module")
def plan_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, dict[str, tuple]]:
    path = tmp_path_factory.mktemp("plan") / "plan.svg"
    table = csv_of(
        invoke("plan", TOY, "--budget", "8", "--sizes", "4,8,16", "--plot", path, "--format", "csv")
    )
    return table, svg_series(path)


def test_plan_plot_gives_each_pass_rate_its_planned_size(plan_run: tuple) -> None:
    rows = csv_of(
        invoke("plan", TOY, "--budget", "8", "--sizes", "4,8,16", "--per-prompt", "--format", "csv")
    )
    planned = dict(zip(*plan_run[1]["plan group size"], strict=True))
    assert {(p, float(G)) for p, G in zip(rows["pass_rate"], rows["group_size"], strict=True)} == set(
        planned.items()
    )


def test_plan_plot_objective_at_its_budget_is_the_summarys(plan_run: tuple) -> None:
    table, series = plan_run
    plan = table.filter(pl.col("strategy") == "plan").row(0, named=True)
    x, y = series["plan"]
    assert plan["objective"] / plan["prompts"] == pytest.approx(y[x.index(8.0)], rel=1e-12)


@pytest.mark.parametrize("G", [4, 8, 16])
def test_plan_plot_uniform_curve_is_the_mean_expected_sigma(plan_run: tuple, G: int) -> None:
    rates = pl.read_csv(TOY)["pass_rate"].to_list()
    x, y = plan_run[1]["uniform G"]
    assert sum(expected_sigma(p, G) for p in rates) / len(rates) == pytest.approx(
        y[x.index(float(G))], rel=1e-9
    )


def test_plan_plot_with_by_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("plan", TOY, "--by", "source", "--budget", "8", "--plot", tmp_path / "p.png")
    assert 2 == result.exit_code
    assert not (tmp_path / "p.png").exists()


# ------------------------------------------------------------------------------------- planned simulate


def test_planned_simulate_plot_draws_each_strategy(tmp_path: Path) -> None:
    path = tmp_path / "run.svg"
    args = ("simulate", "--init", BIGMATH, "--plan-budget", "8", "--prompts", "300", "--steps", "4")
    trace = csv_of(invoke(*args, "--trace", "--plot", path, "--format", "csv"))
    series = svg_series(path)
    for strategy in trace["strategy"].unique().to_list():
        rows = trace.filter(pl.col("strategy") == strategy).sort("step")
        assert rows["observed_silent"].to_list() == series[f"silent · {strategy}"][1]


# ------------------------------------------------------------------------------ streamed rates, a prior


@pytest.fixture(scope="module")
def continuous(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    rates = np.random.default_rng(5).beta(0.6, 0.7, size=25_000)  # enough rows to be streamed
    path = tmp_path_factory.mktemp("rates") / "rates.csv"
    pl.DataFrame({"pass_rate": rates}).write_csv(path)
    return path, rates


def test_streamed_rates_silent_plot_is_the_mean_silent_probability(
    continuous: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    path, rates = continuous
    figure = tmp_path / "silent.svg"
    csv_of(invoke("silent", path, "--G", "8", "--plot", figure, "--format", "csv"))
    x, y = svg_series(figure)["silent"]
    for G in (2, 8, 32):
        assert float(np.mean(rates**G + (1 - rates) ** G)) == pytest.approx(y[x.index(float(G))], rel=1e-12)


def test_streamed_rates_groupsize_plot_draws_the_histogram(
    continuous: tuple[Path, np.ndarray], tmp_path: Path
) -> None:
    figure = tmp_path / "groupsize.svg"
    csv_of(invoke("groupsize", continuous[0], "--plot", figure, "--format", "csv"))
    assert "exact G" in svg_series(figure)


def test_streamed_rates_table_has_no_sparkline(continuous: tuple[Path, np.ndarray]) -> None:
    result = invoke("silent", continuous[0], "--format", "table")
    assert 0 == result.exit_code
    assert "silent vs G" not in result.stdout


def test_a_histograms_table_has_the_sparkline() -> None:
    assert "silent vs G" in invoke("silent", TOY, "--format", "table").stdout


def test_prior_silent_plot_is_the_commands_posterior(tmp_path: Path) -> None:
    figure = tmp_path / "prior.svg"
    args = ("silent", COUNTS, "--k-col", "k", "--n-col", "n", "--weight-col", "count", "--prior", "beta")
    table = csv_of(invoke(*args, "--G", "16", "--plot", figure, "--format", "csv"))
    x, y = svg_series(figure)["silent"]
    assert table["silent_rate"].item() == pytest.approx(y[x.index(16.0)], rel=1e-12)


# ------------------------------------------------------------------------------- report: a run, a plan

FIGURE_IDS = re.compile(r'<figure class="plot" id="figure-([a-z]+)">')


@pytest.fixture(scope="module")
def run_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("report") / "run.html"
    result = invoke("report", RUN, "--from", "verl", "--plan-budget", "8", "-o", path)
    assert 0 == result.exit_code, result.stderr
    return path.read_text(encoding="utf-8")


def test_a_runs_report_has_its_track_and_plan(run_page: str) -> None:
    assert ["difficulty", "silent", "budget", "groupsize", "track", "plan"] == FIGURE_IDS.findall(run_page)


def test_a_runs_report_tracks_what_track_measures(run_page: str) -> None:
    table = csv_of(invoke("track", RUN, "--from", "verl", "--format", "csv"))
    y = numbers(run_page)["measured"][1]
    assert table.filter(pl.col("compared_groups") > 0)["compared_silent_fraction"].to_list() == y


def test_a_runs_report_plans_what_plan_plans(run_page: str) -> None:
    # The report's plan takes plan's default prior: the NPMLE where its sizes exceed the samples n.
    args = ("--from", "verl", "--budget", "8", "--format", "csv")
    table = csv_of(invoke("plan", RUN, *args))
    plan = table.filter(pl.col("strategy") == "plan").row(0, named=True)
    x, y = numbers(run_page)["plan"]
    assert plan["objective"] / plan["prompts"] == pytest.approx(y[x.index(8.0)], rel=1e-12)


def test_a_plan_of_two_inputs_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("report", TOY, BIGMATH, "--plan-budget", "8", "-o", tmp_path / "r.html")
    assert 2 == result.exit_code
    assert not (tmp_path / "r.html").exists()

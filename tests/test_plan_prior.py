"""``plan`` under a prior and the unbiased estimator: the plan values each prompt as every command does."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from numpy.typing import NDArray

from sigmatool.estimators import valuation
from sigmatool.estimators.rule import PerCell
from sigmatool.plan import plan_options
from sigmatool.plan.core import plan_frames
from sigmatool.plan.groups import plan_histogram
from sigmatool.prior import fit_prior, posterior_mean
from tests.conftest import TOY, csv_of, invoke


@pytest.fixture(scope="module")
def eight_samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 prompts, k right of 8, pass rates from a mixture with masses near 0 and 1 (as real sets)."""
    rng = np.random.default_rng(11)
    p = np.concatenate([rng.beta(0.6, 2.0, 200), np.full(60, 0.98), np.full(40, 0.01)])
    k = rng.binomial(8, p)
    path = tmp_path_factory.mktemp("plan_prior") / "eight.csv"
    pl.DataFrame({"id": [f"q{i}" for i in range(p.size)], "k": k, "n": 8}).write_csv(path)
    return path


def _plan(path: Path, *extra: str) -> pl.DataFrame:
    return csv_of(invoke("plan", path, "--k-col", "k", "--n-col", "n", "--budget", "8", "-f", "csv", *extra))


@pytest.fixture(scope="module")
def npmle_rows(eight_samples: Path) -> pl.DataFrame:
    return _plan(eight_samples, "--prior", "npmle", "--per-prompt", "--id-col", "id")


@pytest.fixture(scope="module")
def npmle_summary(eight_samples: Path) -> pl.DataFrame:
    return _plan(eight_samples, "--prior", "npmle").filter(pl.col("strategy") == "plan")


def test_every_prompt_gets_a_size_under_a_prior(npmle_rows: pl.DataFrame) -> None:
    assert 0 == npmle_rows["group_size"].null_count()


def test_per_prompt_sizes_add_up_to_the_rollouts_used(
    npmle_rows: pl.DataFrame, npmle_summary: pl.DataFrame
) -> None:
    assert npmle_summary["rollouts_used"][0] == npmle_rows["group_size"].sum()


def test_per_prompt_kept_prompts_are_the_summary_s(
    npmle_rows: pl.DataFrame, npmle_summary: pl.DataFrame
) -> None:
    assert npmle_summary["prompts_kept"][0] == npmle_rows["keep"].sum()


def test_objective_is_the_posterior_mean_update_at_the_planned_sizes(
    eight_samples: Path, npmle_rows: pl.DataFrame, npmle_summary: pl.DataFrame
) -> None:
    data = pl.read_csv(eight_samples)
    k, n = data["k"].to_numpy(), data["n"].to_numpy()
    prior = fit_prior(k, n, None, kind="npmle")
    sizes = npmle_rows["group_size"].to_numpy()
    total = sum(
        float(posterior_mean(prior, k[sizes == G], n[sizes == G], "sigma", int(G)).sum())
        for G in np.unique(sizes[sizes > 0])
    )
    assert total == pytest.approx(npmle_summary["objective"][0], rel=1e-9)


def test_a_prior_keeps_prompts_the_plug_in_drops(eight_samples: Path, npmle_summary: pl.DataFrame) -> None:
    plugin = _plan(eight_samples, "--estimator", "plugin").filter(pl.col("strategy") == "plan")
    assert npmle_summary["prompts_kept"][0] > plugin["prompts_kept"][0]


def test_unbiased_plan_values_prompts_from_the_logged_samples(eight_samples: Path) -> None:
    rows = _plan(eight_samples, "--estimator", "unbiased", "--sizes", "4,8", "--per-prompt")
    data = pl.read_csv(eight_samples)
    at_four = rows.with_columns(data["k"]).filter(pl.col("group_size") == 4)
    from sigmatool.kernels import expected_sigma_unbiased

    expected = expected_sigma_unbiased(at_four["k"].to_numpy(), 8, 4)
    np.testing.assert_allclose(expected, at_four["expected_sigma"].to_numpy(), rtol=1e-12)


def test_a_prior_without_counts_is_refused() -> None:
    result = invoke("plan", TOY, "--prior", "npmle", "-f", "csv")
    assert 2 == result.exit_code


def _cells(path: Path) -> pl.DataFrame:
    data = pl.read_csv(path)
    hist = data.group_by("k", "n").agg(pl.len().alias("prompts"))
    return hist.with_columns((pl.col("k") / pl.col("n")).alias("p")).sort("k", "n")


def _counted(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[str, str, int, int, int]]:
    """Every (quantity, std, k, n, G) the rule is asked to value, and how often (G = 0: none)."""
    asked: Counter[tuple[str, str, int, int, int]] = Counter()
    rule = PerCell.values

    def values(
        self: PerCell, frame: pl.DataFrame, quantity: str, G: object = None, std: str = "population"
    ) -> NDArray[np.float64]:
        sizes = np.broadcast_to(np.asarray(0 if G is None else G, dtype=np.int64), (frame.height,))
        for k, n, size in zip(frame["k"].to_list(), frame["n"].to_list(), sizes.tolist(), strict=True):
            asked[(str(quantity), std, k, n, size)] += 1
        return rule(self, frame, quantity, G, std)  # type: ignore[arg-type]

    monkeypatch.setattr(PerCell, "values", values)
    return asked


def test_a_fidelity_plan_over_every_allowed_size_values_each_cell_once_per_size(
    eight_samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1,024 sizes, most beyond n = 8 (the prior's posterior): each (k, n, G) asked again was the plan's cost.
    hist = _cells(eight_samples)
    options = plan_options(sizes="2..1025", objective="fidelity", budget=8)
    asked = _counted(monkeypatch)
    plans = plan_histogram(hist, (), options, valuation(hist, (), options.sizes))
    plans.plans[0].tables()
    assert 1 == max(asked.values())


def test_the_plan_at_other_budgets_values_no_cell_again(
    eight_samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hist = _cells(eight_samples)
    options = plan_options(sizes="2..40", budget=8)
    asked = _counted(monkeypatch)
    plan_frames(plan_histogram(hist, (), options, valuation(hist, (), options.sizes)).plans[0])
    assert 1 == max(asked.values())


def test_each_size_of_the_plan_is_asked_of_every_cell(
    eight_samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The counting above sees the plan's asks: a plan over 39 sizes asks E[σ] of each cell at each of them.
    hist = _cells(eight_samples)
    options = plan_options(sizes="2..40", budget=8)
    asked = _counted(monkeypatch)
    plan_histogram(hist, (), options, valuation(hist, (), options.sizes))
    sigma = {(k, n, G) for quantity, _, k, n, G in asked if quantity == "sigma"}
    assert {(k, n, G) for k, n in hist.select("k", "n").iter_rows() for G in range(2, 41)} == sigma

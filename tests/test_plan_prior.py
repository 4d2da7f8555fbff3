"""``plan`` under a prior and the unbiased estimator: the plan values each prompt as every command does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

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

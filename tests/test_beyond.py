"""--prior, --bounds and --ci through the real command line, checked against sigmatool.prior computed by hand.

The library itself (closed forms, fits, bounds, bootstrap coverage) is tested in tests/test_prior.py; here the
question is whether every command hands its rates to the library, aggregates them and prints them right.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy.stats import binom

from sigmatool import kernels
from sigmatool.kernels import Quantity
from sigmatool.prior import fit_prior, region
from sigmatool.prior.bootstrap import bootstrap_rate
from sigmatool.prior.bounds import bounds
from sigmatool.prior.groupsize import posterior_group_size
from sigmatool.prior.posterior import posterior_mean

from .conftest import BIGMATH, BIGMATH_COUNTS, SAMPLE, TOY, csv_of, headline, invoke

EIGHT = SAMPLE / "bigmath_8_samples.csv"
COUNTS = ("--k-col", "k", "--n-col", "n", "--weight-col", "count")
TOY_COUNTS = ("--k-col", "k", "--n-col", "n")


def _eight() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    frame = pl.read_csv(EIGHT)
    return frame["k"].to_numpy(), frame["n"].to_numpy(), frame["count"].to_numpy().astype(np.float64)


def _csv(*args: object) -> pl.DataFrame:
    return csv_of(invoke(*args, "--format", "csv"))


def _kind(prior: str) -> str | tuple[float, float]:
    if "," in prior:
        a, b = prior.split(",")
        return float(a), float(b)
    return prior


# --------------------------------------------------------------------------------------------- --prior none


@pytest.mark.parametrize(
    "command",
    [
        ("silent", BIGMATH, "--G", "4,8,16"),
        (
            "silent",
            TOY,
            *TOY_COUNTS,
            "--by",
            "source",
            "--by-bins",
            "4",
            "--estimator",
            "unbiased",
            "--G",
            "4",
        ),
        ("silent", TOY, *TOY_COUNTS, "--by", "source", "--per-prompt", "--id-col", "prompt_id"),
        ("budget", BIGMATH, "--G", "8,inf"),
        ("budget", BIGMATH_COUNTS, *COUNTS, "--G", "4,16", "--estimator", "unbiased"),
        ("groupsize", BIGMATH, "--law"),
        ("groupsize", TOY, *TOY_COUNTS, "--by", "source", "--per-prompt"),
    ],
)
@pytest.mark.parametrize("fmt", ["csv", "table"])
def test_prior_auto_prints_exactly_what_no_prior_option_prints(command: tuple[object, ...], fmt: str) -> None:
    plain = invoke(*command, "--format", fmt)
    auto = invoke(*command, "--prior", "auto", "--format", fmt)
    assert plain.stdout == auto.stdout


def test_prior_none_leaves_the_cells_beyond_the_samples_unidentified() -> None:
    out = _csv("silent", EIGHT, *COUNTS, "--G", "8,16", "--prior", "none")
    assert ["unbiased", "not identified"] == out["estimator"].to_list()
    assert out["silent_rate"][1] is None
    assert out["silent_rate_lo"][1] < out["silent_rate_hi"][1]


# --------------------------------------------------------------------------------------------- posterior means


@pytest.mark.parametrize("prior", ["beta", "npmle", "0.5,2"])
def test_silent_rate_is_the_mean_of_the_library_posterior_silent_probability(prior: str) -> None:
    k, n, w = _eight()
    fitted = fit_prior(k, n, w, kind=_kind(prior))
    out = _csv("silent", EIGHT, *COUNTS, "--G", "4,16", "--prior", prior)
    for row, G in zip(out.iter_rows(named=True), (4, 16), strict=True):
        silent = posterior_mean(fitted, k, n, "silent", G)
        assert float(w @ silent / w.sum()) == pytest.approx(row["silent_rate"], rel=1e-12)


@pytest.mark.parametrize("quantity", ["all_right", "all_wrong"])
def test_all_right_and_all_wrong_rates_are_library_posterior_means(quantity: str) -> None:
    k, n, w = _eight()
    fitted = fit_prior(k, n, w, kind="npmle")
    row = _csv("silent", EIGHT, *COUNTS, "--G", "16", "--prior", "npmle").row(0, named=True)
    expected = float(w @ posterior_mean(fitted, k, n, quantity, 16) / w.sum())
    assert expected == pytest.approx(row[f"{quantity}_rate"], rel=1e-12)


def test_always_silent_share_under_a_prior_is_the_posterior_mass_at_zero_and_one() -> None:
    k, n, w = _eight()
    fitted = fit_prior(k, n, w, kind="npmle")
    row = _csv("silent", EIGHT, *COUNTS, "--prior", "npmle").row(0, named=True)
    expected = float(w @ (1.0 - posterior_mean(fitted, k, n, "interior")) / w.sum())
    assert expected == pytest.approx(row["always_silent_share"], rel=1e-9)


def test_a_prior_is_fitted_to_each_by_group() -> None:
    toy = pl.read_csv(TOY)
    out = _csv("silent", TOY, *TOY_COUNTS, "--by", "source", "--G", "8", "--prior", "beta")
    for row in out.iter_rows(named=True):
        group = toy.filter(pl.col("source") == row["source"])
        k, n = group["k"].to_numpy(), group["n"].to_numpy()
        silent = posterior_mean(fit_prior(k, n, kind="beta"), k, n, "silent", 8)
        assert float(silent.mean()) == pytest.approx(row["silent_rate"], rel=1e-12)


def test_per_prompt_probabilities_are_the_library_posterior_means() -> None:
    toy = pl.read_csv(TOY)
    k, n = toy["k"].to_numpy(), toy["n"].to_numpy()
    out = _csv("silent", TOY, *TOY_COUNTS, "--per-prompt", "--G", "32", "--prior", "beta")
    expected = posterior_mean(fit_prior(k, n, kind="beta"), k, n, "silent", 32)
    np.testing.assert_allclose(expected, out["p_silent"].to_numpy(), rtol=1e-12)


def test_per_prompt_rows_take_the_prior_of_their_by_group() -> None:
    toy = pl.read_csv(TOY)
    out = _csv("silent", TOY, *TOY_COUNTS, "--by", "source", "--per-prompt", "--G", "8", "--prior", "beta")
    geometry = toy.filter(pl.col("source") == "geometry")
    k, n = geometry["k"].to_numpy(), geometry["n"].to_numpy()
    expected = posterior_mean(fit_prior(k, n, kind="beta"), k, n, "silent", 8)
    shown = out.filter(pl.col("source") == "geometry")["p_silent"].to_numpy()
    np.testing.assert_allclose(expected, shown, rtol=1e-12)


@pytest.mark.parametrize(("G", "quantity"), [("16", "sigma"), ("inf", "grpo_limit")])
def test_budget_extreme_share_is_the_library_posterior_weight_of_never_and_always_solved(
    G: str, quantity: str
) -> None:
    k, n, w = _eight()
    fitted = fit_prior(k, n, w, kind="npmle")
    out = _csv("budget", EIGHT, *COUNTS, "--G", G, "--prior", "npmle")
    weight = w * posterior_mean(fitted, k, n, quantity, None if G == "inf" else int(G))
    # With 8 samples, p̂ < 0.1 or p̂ > 0.9 means k = 0 or k = 8.
    expected = float(weight[(k == 0) | (k == 8)].sum() / weight.sum())
    assert expected == pytest.approx(out.filter(pl.col("segment") == "extreme")["grpo_share"][0], rel=1e-9)


def test_groupsize_per_prompt_is_the_library_posterior_group_size() -> None:
    toy = pl.read_csv(TOY)
    k, n = toy["k"].to_numpy(), toy["n"].to_numpy()
    out = _csv("groupsize", TOY, *TOY_COUNTS, "--per-prompt", "--fidelity", "0.95", "--prior", "beta")
    expected = posterior_group_size(fit_prior(k, n, kind="beta"), k, n, 0.95)
    np.testing.assert_array_equal(expected, out["group_size"].cast(pl.Float64).to_numpy())


def test_under_a_beta_prior_never_and_always_solved_prompts_are_reachable() -> None:
    out = _csv("groupsize", EIGHT, *COUNTS, "--bins", "0", "--prior", "beta")
    assert 0 == out["unreachable"][0]


def test_at_p_hat_never_and_always_solved_prompts_are_unreachable() -> None:
    k, _, w = _eight()
    out = _csv("groupsize", EIGHT, *COUNTS, "--bins", "0", "--estimator", "plugin")
    assert int(w[(k == 0) | (k == 8)].sum()) == out["unreachable"][0]


def test_with_prior_none_never_and_always_solved_prompts_are_not_identified() -> None:
    k, _, w = _eight()
    out = _csv("groupsize", EIGHT, *COUNTS, "--bins", "0", "--prior", "none")
    assert 0 == out["unreachable"][0]
    assert int(w[(k == 0) | (k == 8)].sum()) <= out["not_identified"][0]


def test_the_fitted_prior_is_reported_on_stderr() -> None:
    result = invoke("silent", EIGHT, *COUNTS, "--prior", "beta", "--format", "csv")
    assert "note: prior beta: Beta(a = " in result.stderr


# --------------------------------------------------------------------------------------------- --bounds


@pytest.mark.parametrize("G", [4, 8, 16, 32])
def test_silent_bounds_are_the_library_bounds(G: int) -> None:
    k, n, w = _eight()
    expected = bounds(k, n, w, "silent", G)
    row = _csv("silent", EIGHT, *COUNTS, "--G", G, "--bounds").row(0, named=True)
    assert expected.lo == pytest.approx(row["silent_rate_lo"], rel=1e-9)
    assert expected.hi == pytest.approx(row["silent_rate_hi"], rel=1e-9)


@pytest.mark.parametrize("G", [4, 8, 16, 32])
def test_silent_bounds_contain_the_npmle_estimate(G: int) -> None:
    row = _csv("silent", EIGHT, *COUNTS, "--G", G, "--bounds", "--prior", "npmle").row(0, named=True)
    assert row["silent_rate_lo"] <= row["silent_rate"] <= row["silent_rate_hi"]


@pytest.mark.parametrize("G", [2, 8])
def test_silent_bounds_contain_the_unbiased_estimate_within_the_samples(G: int) -> None:
    row = _csv("silent", EIGHT, *COUNTS, "--G", G, "--bounds", "--estimator", "unbiased").row(0, named=True)
    assert row["silent_rate_lo"] <= row["silent_rate"] <= row["silent_rate_hi"]


def test_the_plugin_estimate_beyond_the_samples_lies_above_the_bounds() -> None:
    row = _csv("silent", EIGHT, *COUNTS, "--G", "16", "--bounds", "--estimator", "plugin").row(0, named=True)
    assert row["silent_rate"] > row["silent_rate_hi"]


def test_bounds_contain_the_npmle_estimate_in_every_bin() -> None:
    out = _csv("silent", EIGHT, *COUNTS, "--G", "4,16", "--by-bins", "4", "--bounds", "--prior", "npmle")
    inside = (pl.col("silent_rate_lo") <= pl.col("silent_rate")) & (
        pl.col("silent_rate") <= pl.col("silent_rate_hi")
    )
    assert out.height == out.filter(inside).height


def test_rates_are_identified_up_to_the_number_of_samples() -> None:
    out = _csv("silent", EIGHT, *COUNTS, "--G", "4,8,9,16", "--bounds")
    assert [True, True, False, False] == out["identified"].to_list()


def test_the_table_says_which_rates_the_data_do_not_identify() -> None:
    result = invoke("silent", EIGHT, *COUNTS, "--G", "8,32", "--bounds", "--format", "table")
    assert "G = 32 > n = 8: these rates are not identified by the data" in " ".join(result.stdout.split())


def test_the_headline_gives_the_range_the_data_allow() -> None:
    result = invoke(
        "silent", EIGHT, *COUNTS, "--G", "16", "--bounds", "--prior", "npmle", "--format", "table"
    )
    assert "30.3% of groups are silent at G=16 [prior npmle] (the data allow 29.2–31.4%)" in headline(
        result.stdout
    )


@pytest.fixture(scope="module")
def budget_bounds() -> pl.DataFrame:
    return _csv("budget", EIGHT, *COUNTS, "--G", "4,inf", "--bins", "4", "--bounds", "--prior", "npmle")


@pytest.mark.parametrize("column", ["grpo_share", "drgrpo_share"])
def test_budget_bounds_contain_the_npmle_shares_of_every_segment(
    column: str, budget_bounds: pl.DataFrame
) -> None:
    out = budget_bounds
    inside = (pl.col(f"{column}_lo") <= pl.col(column) + 1e-12) & (
        pl.col(column) <= pl.col(f"{column}_hi") + 1e-12
    )
    assert out.height == out.filter(inside).height


def test_budget_extreme_bounds_are_the_library_ratio_of_never_and_always_solved_weight() -> None:
    k, n, w = _eight()
    space = region(k, n, w)
    f = Quantity.SIGMA.plugin(space.grid, 16)
    # A prompt of rate p shows p̂ = 0 or 1 out of 8 with probability Bin(0; 8, p) + Bin(8; 8, p).
    mass = binom.pmf(0, 8, space.grid) + binom.pmf(8, 8, space.grid)
    lo, hi = space.ratio(f * mass, f)
    out = _csv("budget", EIGHT, *COUNTS, "--G", "16", "--bins", "1", "--bounds")
    row = out.filter(pl.col("segment") == "extreme")
    assert lo == pytest.approx(row["grpo_share_lo"][0], rel=1e-9)
    assert hi == pytest.approx(row["grpo_share_hi"][0], rel=1e-9)


def test_a_histogram_that_no_binomial_mixture_makes_is_a_data_error(tmp_path: Path) -> None:
    # Every prompt right 4 times of 8: no distribution of p makes that, so the answers are not independent.
    spike = tmp_path / "spike.csv"
    spike.write_text("k,n,count\n4,8,100000\n")
    result = invoke("silent", spike, *COUNTS, "--G", "16", "--bounds", "--format", "csv")
    assert 1 == result.exit_code
    assert "no pass-rate distribution reproduces the k-histogram" in result.stderr


# --------------------------------------------------------------------------------------------- Big-Math split


def test_bigmath_thinned_to_8_samples_predicts_the_64_sample_silent_rate(tmp_path: Path) -> None:
    full = pl.read_csv(BIGMATH_COUNTS)
    k64, count = full["k"].to_numpy(), full["count"].to_numpy()
    truth = float(count @ kernels.silent_probability_unbiased(k64, 64, 16) / count.sum())
    assert 0.3019 == pytest.approx(truth, abs=5e-5)  # docs/theory.md §2
    ks = np.repeat(k64, count)
    drawn = np.random.default_rng(2607).hypergeometric(ks, 64 - ks, 8)
    thinned = tmp_path / "bigmath_8.csv"
    pl.DataFrame({"k": np.arange(9), "n": 8, "count": np.bincount(drawn, minlength=9)}).write_csv(thinned)
    row = _csv("silent", thinned, *COUNTS, "--prior", "npmle", "--G", "16", "--bounds").row(0, named=True)
    assert row["silent_rate"] == pytest.approx(truth, abs=0.01)
    assert row["silent_rate_hi"] - row["silent_rate_lo"] <= 0.03
    assert row["silent_rate_lo"] <= row["silent_rate"] <= row["silent_rate_hi"]
    assert row["silent_rate_lo"] <= truth <= row["silent_rate_hi"]


# --------------------------------------------------------------------------------------------- --ci


@pytest.mark.parametrize("prior", ["none", "npmle"])
def test_the_interval_is_the_library_bootstrap(prior: str) -> None:
    k, n, w = _eight()
    estimator = "plugin" if prior == "none" else prior
    expected = bootstrap_rate(k, n, w, "silent", 16, estimator, replicates=30, level=0.9, seed=5)
    chosen = ("--estimator", "plugin") if prior == "none" else ("--prior", prior)
    args = ("--G", "16", "--ci", "0.9", "--replicates", "30", "--seed", "5", *chosen)
    row = _csv("silent", EIGHT, *COUNTS, *args).row(0, named=True)
    assert expected.lo == pytest.approx(row["silent_rate_ci_lo"], rel=1e-9)
    assert expected.hi == pytest.approx(row["silent_rate_ci_hi"], rel=1e-9)


def test_the_same_seed_gives_the_same_interval() -> None:
    args = ("silent", TOY, "--ci", "0.95", "--replicates", "50", "--seed", "11")
    assert invoke(*args, "--format", "csv").stdout == invoke(*args, "--format", "csv").stdout


def test_another_seed_gives_another_interval() -> None:
    args = ("silent", TOY, "--ci", "0.95", "--replicates", "50")
    assert (
        invoke(*args, "--seed", "1", "--format", "csv").stdout
        != invoke(*args, "--seed", "2", "--format", "csv").stdout
    )


def test_budget_intervals_hold_every_share() -> None:
    out = _csv("budget", EIGHT, *COUNTS, "--G", "8", "--ci", "0.9", "--replicates", "40")
    inside = (pl.col("grpo_share_ci_lo") <= pl.col("grpo_share")) & (
        pl.col("grpo_share") <= pl.col("grpo_share_ci_hi")
    )
    assert out.height == out.filter(inside).height


def test_interval_columns_follow_the_summary_in_rate_order() -> None:
    out = _csv("silent", TOY, "--ci", "0.9", "--replicates", "10")
    ends = [c for c in out.columns if c.endswith("_ci_lo")]
    assert [
        "silent_rate_ci_lo",
        "all_right_rate_ci_lo",
        "all_wrong_rate_ci_lo",
        "always_silent_share_ci_lo",
        "dapo_draws_per_group_ci_lo",
        "dapo_draws_per_group_learnable_ci_lo",
    ] == ends


# --------------------------------------------------------------------------------------------- bad options

RUN = (
    "import sys; from sigmatool.cli import main; code = main(sys.argv[1:]); "
    "print(' '.join(m for m in ('polars', 'numpy', 'scipy') if m in sys.modules)); sys.exit(code)"
)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("silent", str(TOY), *TOY_COUNTS, "--prior", "0,1"), "--prior 0,1"),
        (("silent", "--prior", "uniform"), "--prior"),
        (("silent", "--ci", "1.5"), "--ci"),
        (("silent", "--seed", "3"), "--seed"),
        (("silent", "--ci", "0.9", "--replicates", "1"), "--replicates"),
        (
            ("silent", "--samples", "64", "--prior", "npmle", "--estimator", "unbiased"),
            "--estimator unbiased",
        ),
        (("silent", "--samples", "64", "--per-prompt", "--ci", "0.9"), "--per-prompt"),
        (("groupsize", "--samples", "64", "--prior", "npmle", "--law"), "--law"),
    ],
)
def test_a_bad_option_exits_2_with_one_line_before_loading_anything(
    args: tuple[str, ...], named: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert 2 == done.returncode
    assert 1 == len(done.stderr.splitlines())
    assert named in done.stderr
    assert "" == done.stdout.strip()


def _split_histogram(data: str) -> pl.DataFrame:
    """Two --by groups as a histogram of distinct values. ``eight``: the 8-answer file's counts, and a second
    group of them reversed and thinned, with a few of 6 answers (their NPMLEs reproduce the histograms: EM
    refits). ``sixteen``: 1,500 and 600 prompts of 16 answers drawn from 20 % at p = 0 and Beta(0.5, 0.6)
    (unique NPMLEs: warm support reduction)."""
    if data == "sixteen":
        rng = np.random.default_rng(5)
        parts = []
        for group, size in (("a", 1500), ("b", 600)):
            k = rng.binomial(16, np.where(rng.random(size) < 0.2, 0.0, rng.beta(0.5, 0.6, size)))
            counts = np.bincount(k, minlength=17)
            parts.append(pl.DataFrame({"split": group, "k": np.arange(17), "n": 16, "prompts": counts}))
        rows = pl.concat(parts).filter(pl.col("prompts") > 0)
    else:
        k, n, w = _eight()
        rows = pl.DataFrame(
            {
                "split": ["a"] * k.size + ["b"] * k.size + ["b"] * 3,
                "k": np.r_[k, k, [0, 3, 6]],
                "n": np.r_[n, n, [6, 6, 6]],
                "prompts": np.r_[w // 1000, w[::-1] // 3000 + 1, [4, 9, 2]].astype(np.int64),
            }
        )
    return rows.with_columns((pl.col("k") / pl.col("n")).alias("p"))


@pytest.mark.parametrize(
    ("command", "by", "prior", "data"),
    [
        ("silent", (), "npmle", "sixteen"),
        ("silent", ("split",), "npmle", "sixteen"),
        ("silent", ("split",), "none", "eight"),
        ("budget", ("split",), "beta", "eight"),
        ("budget", (), "npmle", "eight"),
        ("silent", ("split",), "0.5,2", "eight"),
    ],
)
def test_replicates_summarised_together_are_each_replicate_summarised_alone(
    command: str, by: tuple[str, ...], prior: str, data: str
) -> None:
    # --ci stacks a chunk of replicates' histograms and values them at once (Valuation.stacked); each
    # replicate summarised alone under its own refitted priors must give the same interval.
    from sigmatool import budget, silent
    from sigmatool.estimators import valuation
    from sigmatool.estimators.bootstrap import interval_columns, replicate_weights

    hist, sizes = _split_histogram(data), (4, 16)
    if not by:  # the histogram of distinct values a run without --by reads
        hist = hist.group_by("k", "n", "p", maintain_order=True).agg(pl.col("prompts").sum())
    val = valuation(hist, by, sizes, "plugin", prior)

    def summary(h: pl.DataFrame, keys: object, v: object) -> pl.DataFrame:
        module = silent if command == "silent" else budget
        return module.summarize(h, keys, sizes, prior=v)  # type: ignore[arg-type]

    columns = ["silent_rate", "all_wrong_rate"] if command == "silent" else ["grpo_share", "silent_rate"]
    got = interval_columns(hist, by, val, summary, columns, level=0.8, replicates=12, seed=3)
    draw = replicate_weights(hist, by, 3)
    weights = np.asarray([next(draw) for _ in range(12)])
    alone = []
    for w, refitted in zip(weights, val.refit_all(weights), strict=True):
        again = hist.with_columns(pl.Series("prompts", w).cast(pl.Int64))
        alone.append(summary(again, by, refitted).select(columns).to_numpy())
    lo, hi = np.quantile(np.asarray(alone), [0.1, 0.9], axis=0)
    for j, column in enumerate(columns):
        assert np.allclose(lo[:, j], got[f"{column}_ci_lo"].to_numpy(), rtol=1e-12, atol=0, equal_nan=True)
        assert np.allclose(hi[:, j], got[f"{column}_ci_hi"].to_numpy(), rtol=1e-12, atol=0, equal_nan=True)

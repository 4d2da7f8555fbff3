"""``--grader-error FP,FN``: a verifier that marks a wrong answer right with probability FP and a right one
wrong with probability FN gives rewards of rate r = FP + (1 − FP − FN) p.

The kernels' three forms through the grader are checked against their definitions (the unbiased estimate's
expectation, a Beta posterior's integral); each command that takes the flag against the closed form on
the bundled Big-Math sample (plug-in: every figure is its exact-grader formula at r).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import polars as pl
import pytest
from numpy.typing import NDArray
from scipy import integrate, special, stats

from sigmatool.kernels import Quantity
from sigmatool.kernels.grader import Grader, channel
from tests.conftest import BIGMATH, TOY, csv_of, invoke, one_error_line, run_cli, run_in

FloatArray = NDArray[np.float64]
FP, FN = 0.05, 0.1
GRADER = ("--grader-error", f"{FP},{FN}")


def _r(p: FloatArray) -> FloatArray:
    return FP + (1 - FP - FN) * p


def _group(q: FloatArray, G: int, h: FloatArray) -> FloatArray:
    """``Σ_m Bin(m; G, q) h(m)``: a group statistic's mean, summed term by term."""
    m = np.arange(G + 1)
    return np.asarray(stats.binom.pmf(m[None, :], G, np.asarray(q)[:, None]) @ h)


def _silent(q: FloatArray, G: int) -> FloatArray:
    return np.asarray(q**G + (1 - q) ** G)


def _sigma(q: FloatArray, G: int) -> FloatArray:
    m = np.arange(G + 1)
    return _group(q, G, np.sqrt(m * (G - m)) / G)


@cache
def _p() -> FloatArray:
    return np.asarray(pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy(), dtype=np.float64)


def test_the_channel_is_a_law_of_the_count_read() -> None:
    C = channel(Grader(FP, FN), 6)
    assert np.allclose(C.sum(axis=1), 1.0)
    assert C[0, 1] == pytest.approx(6 * FP * (1 - FP) ** 5)  # all wrong, one read right


@pytest.mark.parametrize("quantity", list(Quantity))
@pytest.mark.parametrize("G", [2, 5])
def test_the_unbiased_form_averages_to_the_graded_definition(quantity: Quantity, G: int) -> None:
    grader, p, n = Grader(FP, FN), 0.37, 12
    k = np.arange(n + 1)
    estimate = quantity.unbiased(k, n, G, grader=grader)
    if np.isnan(estimate).any():
        assert quantity.degree(G) is None  # only what is no polynomial has no unbiased form
        return
    expected = stats.binom.pmf(k, n, p) @ estimate
    assert expected == pytest.approx(float(quantity.plugin(p, G, grader=grader)), rel=1e-12)


@pytest.mark.parametrize("quantity", list(Quantity))
def test_the_beta_form_is_the_integral_of_the_graded_definition(quantity: Quantity) -> None:
    grader, A, B, G = Grader(FP, FN), 2.3, 4.1, 6

    def f(x: float) -> float:
        return float(quantity.plugin(x, G, grader=grader)) * float(stats.beta.pdf(x, A, B))

    assert float(quantity.beta(A, B, G, grader=grader)) == pytest.approx(integrate.quad(f, 0, 1)[0], rel=1e-8)


def test_an_exact_grader_changes_nothing() -> None:
    p = np.linspace(0, 1, 11)
    assert np.array_equal(Quantity.SIGMA.plugin(p, 8, grader=Grader()), Quantity.SIGMA.plugin(p, 8))


def _closed(flag_args: tuple[object, ...], *args: object) -> pl.DataFrame:
    return csv_of(invoke(*flag_args, BIGMATH, "--format", "csv", "--estimator", "plugin", *GRADER, *args))


def test_silent_is_the_closed_form_at_r() -> None:
    out = _closed(("silent",), "-G", "8,32")
    for G in (8, 32):
        row = out.filter(pl.col("G") == G).row(0, named=True)
        assert row["silent_rate"] == pytest.approx(float(_silent(_r(_p()), G).mean()), rel=1e-12)


def test_budget_shares_are_the_closed_form_at_r() -> None:
    out = _closed(("budget",), "-G", 8)
    p = _p()
    w = _sigma(_r(p), 8)
    row = out.filter((pl.col("segment") == "bin") & (pl.col("p_lo") == 0.0)).row(0, named=True)
    assert row["grpo_share"] == pytest.approx(float(w[p < 0.1].sum() / w.sum()), rel=1e-9)


def test_groupsize_is_the_smallest_g_that_reaches_the_fidelity_at_r() -> None:
    out = csv_of(invoke("groupsize", TOY, "--per-prompt", "--format", "csv", *GRADER, "--fidelity", 0.9))
    q = _r(out["p"].to_numpy())
    sizes = np.arange(2, 200)
    phi = np.stack([_sigma(q, int(G)) for G in sizes]) / np.sqrt(q * (1 - q))
    first = sizes[np.argmax(phi >= 0.9, axis=0)]
    assert out["group_size"].to_list() == first.tolist()


def test_plan_s_uniform_strategy_is_the_closed_form_at_r() -> None:
    out = _closed(("plan",), "--sizes", "8", "--budget", 8)
    row = out.filter(pl.col("strategy") == "uniform").row(0, named=True)
    assert row["expected_silent_rate"] == pytest.approx(float(_silent(_r(_p()), 8).mean()), rel=1e-9)


def test_preflight_keeps_what_the_grader_breaks_ties_in() -> None:
    out = _closed(("preflight",), "--n", 16)
    assert out["keep_rate"][0] == pytest.approx(1 - float(_silent(_r(_p()), 16).mean()), rel=1e-12)


def test_curriculum_reads_rewards_through_the_grader_and_weighs_by_the_true_rate() -> None:
    out = _closed(("curriculum",), "--schedule", "band", "--band", "0.2,0.8", "--steps", 1)
    p = _p()
    inside = (p >= 0.2) & (p <= 0.8)
    assert out["silent_rate"][0] == pytest.approx(float(_silent(_r(p[inside]), 8).mean()), rel=1e-9)
    assert out["pass_rate"][0] == pytest.approx(float(p[inside].mean()), rel=1e-9)


def test_a_beta_prior_s_posterior_is_read_through_the_grader() -> None:
    toy = pl.read_csv(TOY)
    out = csv_of(invoke("silent", TOY, "--k-col", "k", "--n-col", "n", "--prior", "2,3", *GRADER, "-G", 4,
                        "--format", "csv"))  # fmt: skip
    means = []
    for k, n in zip(toy["k"].to_list(), toy["n"].to_list(), strict=True):
        post = stats.beta(2 + k, 3 + n - k)
        means.append(
            integrate.quad(lambda x, post=post: float(_silent(_r(np.array(x)), 4)) * post.pdf(x), 0, 1)[0]
        )
    assert out["silent_rate"][0] == pytest.approx(float(np.mean(means)), rel=1e-8)


@pytest.mark.parametrize("command", ["silent", "budget", "groupsize", "plan", "preflight"])
def test_the_headline_says_what_the_grader_moves(command: str) -> None:
    # groupsize takes no --estimator: it reads the Big-Math rates as counts of 64 and their unbiased values.
    plugin = () if command == "groupsize" else ("--estimator", "plugin")
    result = invoke(command, BIGMATH, "--format", "table", *plugin, *GRADER)
    assert result.exit_code == 0, result.stderr
    G = 8 if command != "preflight" else 16
    exact = float(_silent(_p(), G).mean())
    if command == "groupsize":
        k = np.round(_p() * 64)
        exact = float(np.mean((special.comb(k, G) + special.comb(64 - k, G)) / special.comb(64, G)))
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Rates read as k right of n = 64")  # how the input was read, then the grader
    assert f"Through the grader (FP {FP:g}, FN {FN:g})" in lines[1]
    assert f"({exact:.1%} with an exact grader)" in " ".join(result.stdout.split())


@pytest.mark.parametrize("command", ["silent", "budget", "groupsize", "plan", "preflight", "curriculum"])
def test_a_grader_with_no_signal_is_refused(command: str) -> None:
    run = run_cli if command == "silent" else run_in  # one real process; the others in this one
    done = run(command, BIGMATH, "--grader-error", "0.5,0.5")
    assert done.returncode == 2
    assert "FP + FN = 1 ≥ 1" in one_error_line(done.stderr)


def test_per_prompt_rows_read_each_prompt_through_the_grader() -> None:
    rows = csv_of(invoke("silent", TOY, "--per-prompt", "-G", 4, *GRADER, "--format", "csv"))
    expected = _silent(_r(rows["p"].to_numpy()), 4)
    assert rows["p_silent"].to_list() == pytest.approx(expected.tolist(), rel=1e-12)


def test_plan_s_per_prompt_file_reads_each_prompt_through_the_grader() -> None:
    args = ("plan", TOY, "--per-prompt", "--budget", 4, "--sizes", "4", *GRADER, "--format", "csv")
    rows = csv_of(invoke(*args)).filter(pl.col("group_size") == 4)
    expected = _silent(_r(rows["p_used"].to_numpy()), 4)
    assert rows["p_silent_at_G"].to_list() == pytest.approx(expected.tolist(), rel=1e-12)


def test_a_bootstrap_interval_is_of_the_graded_rate() -> None:
    out = csv_of(invoke("silent", TOY, "-G", 4, "--ci", "0.9", "--replicates", 200, *GRADER, "-f", "csv"))
    row = out.row(0, named=True)
    assert row["silent_rate"] == pytest.approx(
        float(_silent(_r(pl.read_csv(TOY)["pass_rate"].to_numpy()), 4).mean())
    )
    assert row["silent_rate_ci_lo"] <= row["silent_rate"] <= row["silent_rate_ci_hi"]

"""``--denoise FP,FN``: counts graded by a noisy verifier read back to the true pass rate.

References: the closed form of the de-noised silent share,
``D^−G Σ_j Hyp(j; n, k, G)[(1 − FP)^j (−FP)^(G−j) + (−FN)^j (1 − FN)^(G−j)]``, summed here with scipy's
hypergeometric pmf; Big-Math's silent share at G = 8 (44.28 %, docs/theory.md) recovered from counts graded
with FN = 0.1; the plug-in commands against the same command on p̂ = clip((k/n − FP)/D, 0, 1) written out
as rates.
"""

from __future__ import annotations

import io
import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from sigmatool.kernels import Quantity
from sigmatool.kernels.grader import Grader, channel, inverse_channel
from tests.conftest import BIGMATH, BIGMATH_COUNTS, csv_of, invoke, one_error_line, run_cli

COUNTS = ("--weight-col", "count")


def closed_form(k: np.ndarray, n: int, G: int, fp: float, fn: float) -> np.ndarray:
    """The closed form of the de-noised silent share per count k of n (docs/verifiers.md)."""
    D = 1.0 - fp - fn
    j = np.arange(G + 1)
    h = (1.0 - fp) ** j * (-fp) ** (G - j) + (-fn) ** j * (1.0 - fn) ** (G - j)
    pmf = stats.hypergeom.pmf(j[None, :], n, k[:, None], G)
    return np.asarray(pmf @ h / D**G)


def bundled_counts() -> pl.DataFrame:
    return pl.read_csv(BIGMATH_COUNTS)


def test_inverse_channel_undoes_the_channel() -> None:
    for d in (1, 4, 9):
        product = inverse_channel(0.07, 0.12, d) @ channel(Grader(0.07, 0.12), d)
        assert np.abs(product - np.eye(d + 1)).max() < 1e-12


@pytest.mark.parametrize("rates", [(0.0, 0.1), (0.05, 0.1), (0.1, 0.02)])
def test_silent_share_is_the_closed_form_on_the_bundled_counts(rates: tuple[float, float]) -> None:
    fp, fn = rates
    counts = bundled_counts()
    k, w = counts["k"].to_numpy(), counts["count"].to_numpy().astype(float)
    expected = float((w * closed_form(k, 64, 8, fp, fn)).sum() / w.sum())
    out = csv_of(
        invoke("silent", BIGMATH_COUNTS, *COUNTS, "--G", "8", "--denoise", f"{fp},{fn}", "-f", "csv")
    )
    assert abs(out["silent_rate"][0] - expected) < 1e-12


def test_measured_silent_rate_is_the_plain_figure() -> None:
    plain = csv_of(invoke("silent", BIGMATH_COUNTS, *COUNTS, "--G", "8", "-f", "csv"))
    out = csv_of(invoke("silent", BIGMATH_COUNTS, *COUNTS, "--G", "8", "--denoise", "0,0.1", "-f", "csv"))
    assert out["measured_silent_rate"][0] == plain["silent_rate"][0]


def test_pass_rate_mean_and_its_interval() -> None:
    fp, fn = 0.03, 0.08
    counts = bundled_counts()
    x, w = counts["k"].to_numpy() / 64.0, counts["count"].to_numpy().astype(float)
    N = w.sum()
    r = (w * x).sum() / N
    s2 = (w * (x - r) ** 2).sum() / (N - 1.0)
    p = (r - fp) / (1.0 - fp - fn)
    se = math.sqrt(s2 / N) / (1.0 - fp - fn)
    out = csv_of(
        invoke("silent", BIGMATH_COUNTS, *COUNTS, "--G", "8", "--denoise", f"{fp},{fn}", "-f", "csv")
    )
    assert out["pass_rate_mean"][0] == pytest.approx(p, abs=1e-12)
    assert out["pass_rate_mean_hi"][0] - out["pass_rate_mean"][0] == pytest.approx(1.959964 * se, rel=1e-6)


def test_bigmath_silent_share_recovered_from_counts_graded_with_fn_01() -> None:
    truth = pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy()
    k_true = np.round(truth * 64).astype(np.int64)
    target = float(np.mean(truth**8 + (1.0 - truth) ** 8))
    assert round(target, 4) == 0.4428
    graded = np.random.default_rng(20).binomial(64, 0.9 * truth)
    table = pl.DataFrame({"k": graded, "n": np.full(graded.size, 64)}).group_by("k", "n").len("count")
    path = io.StringIO()
    table.write_csv(path)
    out = csv_of(invoke("silent", "-", "--k-col", "k", "--n-col", "n", *COUNTS, "--G", "8", "--denoise", "0,0.1",
                        "-f", "csv", input=path.getvalue()))  # fmt: skip
    # The estimator's exact sd given the truth: each prompt's k ~ Bin(64, 0.9 p), valued by the same kernel.
    grader = Grader(measured_fn=0.1)
    j = np.arange(65)
    value = Quantity.SILENT.unbiased(j, np.full(65, 64), 8, grader=grader)
    var = 0.0
    for kt, many in zip(*np.unique(k_true, return_counts=True), strict=True):
        pmf = stats.binom.pmf(j, 64, 0.9 * kt / 64)
        var += many * float(pmf @ value**2 - (pmf @ value) ** 2)
    se = math.sqrt(var) / truth.size
    assert 0.0002 < se < 0.0005  # about 0.03 points
    assert out["measured_silent_rate"][0] < 0.35  # the counts say about 33.4 %
    assert abs(out["silent_rate"][0] - target) < 3 * se


@pytest.mark.parametrize("command", ["silent", "budget"])
def test_one_grader_in_both_gives_the_plain_figures(command: str) -> None:
    plain = csv_of(invoke(command, BIGMATH_COUNTS, *COUNTS, "--G", "8", "-f", "csv"))
    both = csv_of(invoke(command, BIGMATH_COUNTS, *COUNTS, "--G", "8", "--grader-error", "0.05,0.1",
                         "--denoise", "0.05,0.1", "-f", "csv"))  # fmt: skip
    for column in plain.columns:
        if plain[column].dtype == pl.Float64:
            assert np.allclose(
                both[column].to_numpy(), plain[column].to_numpy(), rtol=0, atol=1e-12, equal_nan=True
            ), column


def _small(tmp_path, fp: float, fn: float):  # type: ignore[no-untyped-def]
    """A small set of counts k of 16, and the same prompts' p̂ written as rates."""
    rng = np.random.default_rng(3)
    k = rng.binomial(16, rng.beta(0.6, 0.6, 300))
    counts = tmp_path / "counts.csv"
    pl.DataFrame({"k": k, "n": np.full(k.size, 16)}).write_csv(counts)
    p_hat = np.clip((k / 16.0 - fp) / (1.0 - fp - fn), 0.0, 1.0)
    rates = tmp_path / "rates.csv"
    pl.DataFrame({"p": p_hat}).write_csv(rates)
    return counts, rates


PLUGIN = [
    ("budget", "--G", "8"),
    ("groupsize",),
    ("plan", "--budget", "8"),
    ("preflight", "--n", "8", "--train-batch-size", "16", "--steps", "3"),
    ("curriculum", "--mean", "0.7:0.3", "--steps", "5", "--G", "8", "--batch-size", "64"),
]


@pytest.mark.parametrize("command", PLUGIN, ids=lambda c: c[0])
def test_plugin_commands_with_denoise_are_the_command_on_p_hat(tmp_path, command: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    fp, fn = 0.04, 0.07
    counts, rates = _small(tmp_path, fp, fn)
    denoised = invoke(*command, counts, "--k-col", "k", "--n-col", "n", "--estimator", "plugin",
                      "--denoise", f"{fp},{fn}", "-f", "csv")  # fmt: skip
    on_rates = invoke(*command, rates, "--col", "p", "--estimator", "plugin", "-f", "csv")
    a, b = csv_of(denoised), csv_of(on_rates)
    assert a.columns == b.columns
    for column in a.columns:
        if a[column].dtype in (pl.Float64, pl.Int64):
            assert np.allclose(
                a[column].to_numpy(), b[column].to_numpy(), rtol=1e-12, atol=1e-12, equal_nan=True
            ), column


def test_contradict_warning_at_fn_01_on_the_bundled_sample() -> None:
    done = invoke("silent", BIGMATH_COUNTS, *COUNTS, "--G", "8", "--denoise", "0,0.1", "-f", "csv")
    assert "contradict" in done.stderr


def test_no_contradict_warning_at_fn_003() -> None:
    done = invoke("silent", BIGMATH_COUNTS, *COUNTS, "--G", "8", "--denoise", "0,0.03", "-f", "csv")
    assert done.exit_code == 0
    assert "contradict" not in done.stderr


def test_per_prompt_denoised_rate_and_clopper_pearson_interval(tmp_path) -> None:  # type: ignore[no-untyped-def]
    fp, fn = 0.04, 0.07
    counts, _ = _small(tmp_path, fp, fn)
    out = csv_of(invoke("silent", counts, "--k-col", "k", "--n-col", "n", "--G", "8", "--per-prompt",
                        "--denoise", f"{fp},{fn}", "-f", "csv"))  # fmt: skip
    k = np.round(out["p"].to_numpy() * 16)
    D = 1.0 - fp - fn
    lo = np.where(k > 0, stats.beta.ppf(0.025, k, 17 - k), 0.0)
    hi = np.where(k < 16, stats.beta.ppf(0.975, k + 1, 16 - k), 1.0)
    assert np.allclose(out["pass_rate_denoised"], np.clip((k / 16 - fp) / D, 0, 1), atol=1e-12)
    assert np.allclose(out["pass_rate_lo"], np.clip((lo - fp) / D, 0, 1), atol=1e-12)
    assert np.allclose(out["pass_rate_hi"], np.clip((hi - fp) / D, 0, 1), atol=1e-12)


def test_fp_plus_fn_at_least_one_is_a_usage_error() -> None:
    done = invoke("silent", BIGMATH_COUNTS, "--denoise", "0.5,0.5")
    assert done.exit_code == 2
    assert "--denoise" in done.stderr


def test_fp_plus_fn_at_least_one_is_one_usage_line_from_a_process() -> None:
    done = run_cli("silent", BIGMATH_COUNTS, "--denoise", "0.6,0.4")
    assert done.returncode == 2
    assert "FP + FN" in one_error_line(done.stderr)


def test_report_reads_the_counts_back_as_silent_does(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r.md"
    done = invoke("report", BIGMATH_COUNTS, *COUNTS, "--denoise", "0,0.03", "-o", out)
    assert done.exit_code == 0, done.stderr
    silent = csv_of(invoke("silent", BIGMATH_COUNTS, *COUNTS, "--G", "8", "--denoise", "0,0.03", "-f", "csv"))
    text = out.read_text()
    assert "de-noised: counts read back through a grader of FP 0, FN 0.03" in text
    assert f"{silent['silent_rate'][0]:.1%} of groups are silent at G=8" in text


def test_bounds_beside_denoise_is_a_usage_error() -> None:
    done = invoke("silent", BIGMATH_COUNTS, *COUNTS, "--bounds", "--denoise", "0,0.03")
    assert done.exit_code == 2
    assert "--bounds" in done.stderr


@pytest.mark.parametrize(
    "quantity", [Quantity.SILENT, Quantity.SIGMA, Quantity.SIGMA_SQUARED, Quantity.KNAPSACK_RL]
)
def test_measured_with_one_grader_and_trained_with_another_is_unbiased(quantity: Quantity) -> None:
    # Counts k ~ Bin(n, FP_B + D_B p) valued through C_B⁻¹ C_A: their mean is f at r_A(p), exactly.
    trained, measured = (0.04, 0.12), (0.07, 0.03)
    grader = Grader(*trained, 1, *measured)
    n, G = 14, 6
    k = np.arange(n + 1)
    value = quantity.unbiased(k, np.full(n + 1, n), G, grader=grader)
    for p in (0.0, 0.13, 0.5, 0.91, 1.0):
        r = measured[0] + (1 - sum(measured)) * p
        mean = float(stats.binom.pmf(k, n, r) @ value)
        assert mean == pytest.approx(float(quantity.plugin(p, G, grader=Grader(*trained))), abs=1e-11)


def test_the_npmle_is_a_prior_on_the_true_p(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The posterior mean of f under the NPMLE fitted with likelihood Bin(k; n, FP + D·p) over the grid of p.
    from sigmatool.prior import fit_prior
    from sigmatool.prior.cells import p_grid

    fp, fn, G = 0.05, 0.1, 12
    rng = np.random.default_rng(9)
    k = rng.binomial(8, fp + (1 - fp - fn) * rng.beta(0.5, 0.7, 400))
    counts = tmp_path / "counts.csv"
    pl.DataFrame({"k": k, "n": np.full(k.size, 8)}).write_csv(counts)
    out = csv_of(invoke("silent", counts, "--k-col", "k", "--n-col", "n", "--G", G, "--prior", "npmle",
                        "--denoise", f"{fp},{fn}", "-f", "csv"))  # fmt: skip
    p = p_grid()
    r = fp + (1 - fp - fn) * p
    cells, w = np.unique(k, return_counts=True)
    prior = fit_prior(cells, np.full(cells.size, 8), w.astype(float), kind="npmle", grid=r)
    likelihood = stats.binom.pmf(cells[:, None], 8, r[None, :]) * prior.atom_mass[None, :]
    f = p**G + (1 - p) ** G
    posterior = likelihood @ f / likelihood.sum(axis=1)
    assert out["silent_rate"][0] == pytest.approx(float(w @ posterior / w.sum()), abs=1e-9)


def test_ci_says_it_holds_a_measured_grader_at_its_estimates(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A grader measured in trials (graders --trusted) under --ci: the bootstrap redraws prompts only, and the
    headline says so rather than print an interval that silently leaves FP and FN out."""
    audit = tmp_path / "grader.json"
    made = invoke("graders", BIGMATH.parent / "graded.csv", "--reward-col", "a", "--reward-col-b", "b", "--G", "4",
                  "--trusted", "a", "-f", "json", "-o", audit)  # fmt: skip
    assert made.exit_code == 0, made.stderr
    args = ("silent", BIGMATH_COUNTS, "--k-col", "k", "--n-col", "n", "--weight-col", "count", "--G", "8")
    done = invoke(*args, "--denoise-from", audit, "--ci", "0.9", "--replicates", "5", "-f", "csv")
    assert done.exit_code == 0, done.stderr
    assert "FP and FN held at these estimates" in done.stderr
    plain = invoke(*args, "--denoise-from", audit, "-f", "csv")
    assert "held at these estimates" not in plain.stderr

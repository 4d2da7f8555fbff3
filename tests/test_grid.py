"""Pass rates on a 1/n grid read as counts of n; the default at G > n; estimates that contradict the data."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool.load.grid import rate_grid
from sigmatool.prior.bounds import bounds

from .conftest import BIGMATH_COUNTS, csv_of, headline, invoke, run_in

NS = (5, 8, 10, 50, 64)


def _thinned(seed: int = 8, n: int = 8) -> pl.DataFrame:
    """Big-Math as if only n of each prompt's 64 answers had been logged: one hypergeometric draw per prompt,
    as a histogram of pass rates (``pass_rate`` = j/n written by polars) with prompt counts."""
    counts = pl.read_csv(BIGMATH_COUNTS)
    rng = np.random.default_rng(seed)
    drawn = np.zeros(n + 1, dtype=np.int64)
    for k, total, prompts in counts.select("k", "n", "count").iter_rows():
        drawn += np.bincount(rng.hypergeometric(k, total - k, n, size=prompts), minlength=n + 1)
    return pl.DataFrame({"j": np.arange(n + 1), "count": drawn}).select(
        (pl.col("j") / n).alias("pass_rate"), "count"
    )


@pytest.fixture(scope="module")
def eight(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("grid") / "eight.csv"
    _thinned().write_csv(path)
    return path


def _brute_grid(values: list[Fraction]) -> int:
    """The smallest n with every value a multiple of 1/n, from exact fractions."""
    return next(n for n in range(1, 129) if all((v * n).denominator == 1 for v in values))


@pytest.mark.parametrize("n", NS)
def test_python_k_over_n_is_on_its_grid(n: int) -> None:
    ks = [1, n - 1, n // 2 + 1]
    assert _brute_grid([Fraction(k, n) for k in ks]) == rate_grid(np.array([k / n for k in ks]))


@pytest.mark.parametrize("n", NS)
def test_k_over_n_written_by_polars_and_read_back_is_on_its_grid(n: int, tmp_path: Path) -> None:
    path = tmp_path / "rates.csv"
    pl.DataFrame({"k": [1, n - 1, 3]}).select((pl.col("k") / n).alias("p")).write_csv(path)
    p = pl.read_csv(path)["p"].to_numpy()
    assert _brute_grid([Fraction(1, n), Fraction(n - 1, n), Fraction(3, n)]) == rate_grid(p)


@pytest.mark.parametrize("n", NS)
def test_k_times_one_over_n_is_on_its_grid(n: int) -> None:
    # 3 * (1 / 10) is 0.30000000000000004, one unit in the last place from 3 / 10.
    assert _brute_grid([Fraction(3, n), Fraction(1, n)]) == rate_grid(np.array([3 * (1 / n), 1 / n]))


@pytest.mark.parametrize("n", NS)
def test_float32_k_over_n_is_on_its_grid(n: int) -> None:
    p = np.array([1 / n, 3 / n], dtype=np.float32).astype(np.float64)
    assert _brute_grid([Fraction(1, n), Fraction(3, n)]) == rate_grid(p, single=True)


def test_rates_on_no_grid_up_to_128_have_none() -> None:
    assert rate_grid(np.array([1 / 9, 1 / 64])) is None


def test_a_value_a_little_off_the_grid_is_not_on_it() -> None:
    assert rate_grid(np.array([0.125, 0.375 + 1e-9])) is None


def test_the_default_run_reads_an_8_sample_column_as_counts_of_8(eight: Path) -> None:
    result = invoke("silent", eight, "--weight-col", "count", "--G", "16", "--format", "csv")
    assert "all multiples of 1/8: read as k right of n = 8 samples" in result.stderr


def test_the_default_headline_at_g16_lies_within_the_identified_bounds(eight: Path) -> None:
    frame = _thinned()
    k = (frame["pass_rate"] * 8).round(0).cast(pl.Int64).to_numpy()
    allowed = bounds(k, np.full(k.size, 8), frame["count"].to_numpy(), "silent", 16)
    rate = csv_of(invoke("silent", eight, "--weight-col", "count", "--G", "16", "--format", "csv"))
    assert allowed.lo <= rate["silent_rate"][0] <= allowed.hi


def test_the_default_headline_at_g16_names_the_prior(eight: Path) -> None:
    result = invoke("silent", eight, "--weight-col", "count", "--G", "16", "--format", "table")
    assert "silent at G=16 [prior npmle]" in " ".join(result.stdout.split())


def test_the_plugin_at_g16_says_it_is_biased_and_names_the_prior(eight: Path) -> None:
    result = invoke(
        "silent", eight, "--weight-col", "count", "--G", "16", "--estimator", "plugin", "--format", "table"
    )
    assert "biased at G > n = 8 samples" in " ".join(result.stdout.split())


def test_the_plugin_outside_its_bounds_says_it_contradicts_the_data(eight: Path) -> None:
    args = ("--weight-col", "count", "--G", "16", "--estimator", "plugin", "--bounds", "--format", "table")
    result = invoke("silent", eight, *args)
    assert "the plug-in contradicts the data" in " ".join(result.stdout.split())


def test_at_g_within_the_samples_no_prior_is_used(eight: Path) -> None:
    default = invoke("silent", eight, "--weight-col", "count", "--G", "4,8", "--format", "csv")
    plugin = invoke(
        "silent", eight, "--weight-col", "count", "--G", "4,8", "--prior", "none", "--format", "csv"
    )
    assert plugin.stdout == default.stdout


def test_samples_that_contradict_the_grid_is_a_usage_error_naming_it(eight: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sigmatool", "silent", str(eight), "--weight-col", "count", "--samples", "16"],
        capture_output=True,
        text=True,
    )
    assert 2 == done.returncode
    assert "all multiples of 1/8" in done.stderr.splitlines()[-1]


def test_samples_that_match_the_grid_gives_what_the_grid_gives(eight: Path) -> None:
    grid = invoke("silent", eight, "--weight-col", "count", "--G", "16", "--format", "csv")
    given = invoke("silent", eight, "--weight-col", "count", "--G", "16", "--samples", "8", "--format", "csv")
    assert grid.stdout == given.stdout


def test_a_few_prompts_on_a_coarse_grid_are_not_read_as_counts(tmp_path: Path) -> None:
    path = tmp_path / "few.csv"
    path.write_text("pass_rate\n0.5\n0.25\n")
    result = invoke("silent", path, "--G", "8", "--format", "csv")
    assert "too few to read them as counts" in result.stderr


@pytest.mark.parametrize("G", ["8", "16"])
def test_a_single_beta_on_big_math_8_of_64_contradicts_the_data(eight: Path, G: str) -> None:
    args = ("--weight-col", "count", "--G", G, "--prior", "beta", "--bounds", "--format", "table")
    result = invoke("silent", eight, *args)
    assert "the prior beta contradicts the data" in " ".join(result.stdout.split())


def test_the_contradiction_is_the_estimate_outside_the_bounds(eight: Path) -> None:
    row = csv_of(
        invoke(
            "silent",
            eight,
            "--weight-col",
            "count",
            "--G",
            "8",
            "--prior",
            "beta",
            "--bounds",
            "--format",
            "csv",
        )
    ).row(0, named=True)
    assert row["silent_rate"] > row["silent_rate_hi"]


def test_under_a_prior_the_always_silent_share_is_marked_not_identified(eight: Path) -> None:
    args = ("--weight-col", "count", "--G", "16", "--prior", "npmle", "--format", "table")
    result = invoke("silent", eight, *args)
    assert "silent at every G is not identified by the data" in " ".join(result.stdout.split())


def test_unbiased_beyond_the_samples_points_to_the_prior_not_the_plugin(eight: Path) -> None:
    result = invoke("silent", eight, "--weight-col", "count", "--G", "16", "--estimator", "unbiased")
    assert 2 == result.exit_code
    assert "--prior npmle" in result.stderr
    assert "--estimator plugin" not in result.stderr


@pytest.mark.parametrize("option", [("--bounds",), ("--prior", "beta"), ("--estimator", "unbiased")])
def test_rates_on_no_grid_need_counts_for_what_needs_counts(tmp_path: Path, option: tuple[str, ...]) -> None:
    path = tmp_path / "rates.csv"
    path.write_text("pass_rate\n0.31\n0.7\n0.123\n")
    # One case in a real process, the others in-process through the same entry point.
    if option != ("--bounds",):
        done = run_in("silent", path, *option)
    else:
        done = subprocess.run(
            [sys.executable, "-m", "sigmatool", "silent", str(path), *option], capture_output=True, text=True
        )
    assert 2 == done.returncode
    assert "counts" in done.stderr.splitlines()[-1]


def test_samples_at_a_multiple_of_the_grid_on_few_prompts_confirms_it(tmp_path: Path) -> None:
    # 16 samples whose few k happen to be even: every rate is also a multiple of 1/8, and too few prompts
    # lie between 0 and 1 to tell 8 samples from 16, so --samples 16 is taken at its word.
    ks = [0, 2, 4, 6, 8, 10, 12, 16]
    rates, counts = tmp_path / "rates.csv", tmp_path / "counts.csv"
    rates.write_text("pass_rate\n" + "".join(f"{k / 16}\n" for k in ks))
    counts.write_text("k,n\n" + "".join(f"{k},16\n" for k in ks))
    given = invoke("silent", rates, "--samples", "16", "--G", "32", "--format", "csv")
    assert (
        invoke("silent", counts, "--k-col", "k", "--n-col", "n", "--G", "32", "--format", "csv").stdout
        == given.stdout
    )


def test_samples_off_the_grid_is_a_usage_error_naming_it(eight: Path) -> None:
    result = invoke("silent", eight, "--weight-col", "count", "--samples", "10")
    assert 2 == result.exit_code
    assert "all multiples of 1/8, not of 1/10" in result.stderr


@pytest.fixture(scope="module")
def four(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Big-Math thinned to 4 of 64 answers, and its report as Markdown (whitespace as written)."""
    folder = tmp_path_factory.mktemp("four")
    _thinned(n=4).write_csv(folder / "four.csv")
    invoke("report", folder / "four.csv", "--weight-col", "count", "-o", folder / "report.md")
    return folder / "four.csv", (folder / "report.md").read_text()


def test_the_report_says_what_silent_says_beyond_the_samples(four: tuple[Path, str]) -> None:
    # 4 samples, G = 8: the default prior is the NPMLE for the report's headline as for silent's.
    path, report = four
    said = headline(invoke("silent", path, "--weight-col", "count", "--G", "8", "--format", "table").stdout)
    assert said in " ".join(report.split())


def test_the_report_silent_table_is_silents_at_the_same_g(four: tuple[Path, str]) -> None:
    path, report = four
    sizes = "2,4,8,16,32,64,128,256"
    table = csv_of(invoke("silent", path, "--weight-col", "count", "--G", sizes, "--format", "csv"))
    shown = f"| prior npmle | 16 | {table['prompts'][3]:,} | {100 * table['silent_rate'][3]:.2f} % |"
    assert shown in report

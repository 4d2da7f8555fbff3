"""A rate column is read row by row: a rate on the column's 1/n grid is k of n, a rate off it a bare rate for
that row alone, and no row re-reads the others (docs/input.md, docs/prior.md "The default on few samples")."""

from __future__ import annotations

from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from .conftest import csv_of, invoke

PROMPTS = 12_500
SAMPLES = 50


def _math_like(seed: int = 5) -> pl.DataFrame:
    """12,500 prompts, each k right of 50 samples as the float k/50 (a MATH-like pass-rate file), in two
    --by groups."""
    rng = np.random.default_rng(seed)
    k = rng.binomial(SAMPLES, rng.beta(0.6, 0.5, PROMPTS))
    return pl.DataFrame({"pass_rate": k / SAMPLES, "src": np.where(np.arange(PROMPTS) % 2, "a", "b")})


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The column alone, with one row of 0.123 (off its grid), and with one row of 0.01 (on a finer grid),
    each extra row in group a."""
    folder = tmp_path_factory.mktemp("rows")
    base = _math_like()
    out = {"base": folder / "base.csv"}
    base.write_csv(out["base"])
    for name, value in (("odd", 0.123), ("hundredth", 0.01)):
        out[name] = folder / f"{name}.csv"
        pl.concat([base, pl.DataFrame({"pass_rate": [value], "src": ["a"]})]).write_csv(out[name])
    return out


def _rates(path: Path, *args: str) -> pl.DataFrame:
    return csv_of(invoke(*args[:1], path, "--col", "pass_rate", *args[1:], "--format", "csv"))


MEANS = [
    ("silent", "--G", "8"),
    ("silent", "--G", "64"),
    ("silent", "--G", "8,64", "--prior", "none", "--bounds"),
    ("budget", "--G", "8,64"),
]


@pytest.mark.parametrize("args", MEANS, ids=[" ".join(a) for a in MEANS])
def test_one_rate_off_the_grid_moves_every_mean_by_at_most_one_over_n(
    files: dict[str, Path], args: tuple[str, ...]
) -> None:
    # One prompt more among N moves a mean of values in [0, 1] by at most 1/N (docs/prior.md).
    before, after = _rates(files["base"], *args), _rates(files["odd"], *args)
    rates = [c for c, t in before.schema.items() if t == pl.Float64 and c.endswith(("rate", "share"))]
    moved = max(
        abs(a - b)
        for c in rates
        for a, b in zip(before[c].to_list(), after[c].to_list(), strict=True)
        if a is not None and b is not None
    )
    assert moved <= 1 / (PROMPTS + 1)


def test_the_note_counts_and_shows_the_one_row_off_the_grid(files: dict[str, Path]) -> None:
    result = invoke("silent", files["odd"], "--col", "pass_rate", "--G", "8", "--format", "csv")
    assert f"1 prompt(s) off that grid (0.123 at row {PROMPTS + 1:,})" in result.stderr


def test_the_rest_of_the_column_stays_k_of_50(files: dict[str, Path]) -> None:
    result = invoke("silent", files["odd"], "--col", "pass_rate", "--G", "8", "--format", "csv")
    assert "read as k right of n = 50 samples" in result.stderr


def test_a_summary_that_mixes_counts_and_a_bare_rate_says_both(files: dict[str, Path]) -> None:
    assert _rates(files["odd"], "silent", "--G", "8")["estimator"][0] == "unbiased + plug-in"


def test_one_finer_value_is_one_row_off_the_grid_of_50(files: dict[str, Path]) -> None:
    result = invoke("silent", files["hundredth"], "--col", "pass_rate", "--G", "8", "--format", "csv")
    assert "read as k right of n = 50 samples" in result.stderr
    assert f"1 prompt(s) off that grid (0.01 at row {PROMPTS + 1:,})" in result.stderr


def test_the_headline_names_the_grid_and_the_rows_off_it(files: dict[str, Path]) -> None:
    result = invoke("silent", files["odd"], "--col", "pass_rate", "--G", "8", "--format", "table")
    first = result.stdout.splitlines()[0]
    assert first == "Rates read as k right of n = 50 samples (1 prompt(s) off that grid read as bare rates)."


@pytest.mark.parametrize("command", ["silent", "budget"])
def test_an_odd_row_in_one_group_leaves_every_other_group_equal(files: dict[str, Path], command: str) -> None:
    args = (command, "--G", "8,64", "--by", "src")
    before, after = _rates(files["base"], *args), _rates(files["odd"], *args)
    assert before.filter(pl.col("src") == "b").equals(after.filter(pl.col("src") == "b"))


def test_the_prior_is_fitted_to_the_rows_of_counts_alone(files: dict[str, Path]) -> None:
    def prior(path: Path) -> list[str]:
        result = invoke(
            "silent", path, "--col", "pass_rate", "--G", "64", "--prior", "npmle", "--format", "csv"
        )
        return [line for line in result.stderr.splitlines() if "prior npmle:" in line]

    assert prior(files["base"]) == prior(files["odd"])


def test_intervals_run_on_a_mixed_column(files: dict[str, Path]) -> None:
    args = ("silent", "--G", "8,64", "--ci", "0.9", "--replicates", "5")
    assert _rates(files["odd"], *args)["silent_rate_ci_lo"].null_count() == 0


def test_samples_refuses_a_value_off_its_grid_naming_the_row(files: dict[str, Path]) -> None:
    result = invoke("silent", files["odd"], "--col", "pass_rate", "--samples", "50", "--G", "8")
    assert f"at row {PROMPTS + 1}" in result.stderr


def test_samples_with_skip_invalid_leaves_the_row_off_the_grid_out(files: dict[str, Path]) -> None:
    args = ("silent", "--samples", "50", "--G", "8,64")
    left = _rates(files["odd"], *args, "--skip-invalid")
    assert left.equals(_rates(files["base"], *args))


# A small mixed column, valued by hand: 40 prompts k of 8 and two bare rates.
EIGHTHS = [
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    3,
    4,
    5,
    2,
    6,
    1,
    7,
    4,
    3,
    5,
    2,
    6,
    4,
    4,
    1,
    2,
    3,
    5,
    6,
    7,
    0,
    8,
    3,
    5,
]
BARE = [0.3, 0.123]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mixed") / "mixed.csv"
    pl.DataFrame({"pass_rate": [k / 8 for k in EIGHTHS] + BARE}).write_csv(path)
    return path


def _unbiased_silent(k: int, n: int, G: int) -> Fraction:
    """All right or all wrong in a group of G drawn without replacement from k right of n."""
    return Fraction(comb(k, G) + comb(n - k, G), comb(n, G))


def _bare_silent(p: float, G: int) -> float:
    return p**G + (1 - p) ** G


@pytest.mark.parametrize("estimator", ["auto", "unbiased"])
def test_a_mixed_histogram_is_unbiased_on_counts_and_exact_on_bare_rates(mixed: Path, estimator: str) -> None:
    G = 4
    total = sum(float(_unbiased_silent(k, 8, G)) for k in EIGHTHS) + sum(_bare_silent(p, G) for p in BARE)
    found = _rates(mixed, "silent", "--G", str(G), "--estimator", estimator)["silent_rate"][0]
    assert found == pytest.approx(total / (len(EIGHTHS) + len(BARE)), rel=1e-12)


def test_the_plugin_on_a_mixed_histogram_is_f_of_every_rate(mixed: Path) -> None:
    G = 4
    rates = [k / 8 for k in EIGHTHS] + BARE
    total = sum(_bare_silent(p, G) for p in rates)
    found = _rates(mixed, "silent", "--G", str(G), "--estimator", "plugin")["silent_rate"][0]
    assert found == pytest.approx(total / len(rates), rel=1e-12)


def test_each_prompt_of_a_mixed_column_gets_its_own_value(mixed: Path) -> None:
    G = 4
    rows = csv_of(
        invoke("silent", mixed, "--col", "pass_rate", "--G", str(G), "--per-prompt", "--format", "csv")
    )
    expected = [float(_unbiased_silent(k, 8, G)) for k in EIGHTHS] + [_bare_silent(p, G) for p in BARE]
    assert rows["p_silent"].to_list() == pytest.approx(expected, rel=1e-12)


def test_a_column_mostly_off_any_grid_is_read_as_bare_rates(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rates = [*rng.random(100).tolist(), *(k / 8 for k in EIGHTHS)]
    path = tmp_path / "bare.csv"
    pl.DataFrame({"pass_rate": rates}).write_csv(path)
    G = 8
    result = invoke("silent", path, "--col", "pass_rate", "--G", str(G), "--format", "csv")
    assert "read as k right of n" not in result.stderr
    found = csv_of(result)["silent_rate"][0]
    assert found == pytest.approx(sum(_bare_silent(p, G) for p in rates) / len(rates), rel=1e-12)


def test_rates_too_few_for_a_grid_never_headline_n_none(tmp_path: Path) -> None:
    path = tmp_path / "few.csv"
    path.write_text("pass_rate\n0.5\n0.25\n")
    assert "None" not in invoke("silent", path, "--G", "8", "--format", "table").stdout


def _silent_bound(files: dict[str, Path], name: str, G: int) -> pl.DataFrame:
    return _rates(files[name], "silent", "--G", str(G), "--bounds")


@pytest.mark.parametrize("G", [8, 64])
def test_the_bounds_take_a_bare_rate_as_the_known_value_it_is(files: dict[str, Path], G: int) -> None:
    # The region is the counts' alone, the same in both files: each bound of the mean over N + 1 prompts is
    # (N · the bound over the N prompts of counts + f(0.123)) / (N + 1).
    base, odd = _silent_bound(files, "base", G), _silent_bound(files, "odd", G)
    known = _bare_silent(0.123, G)
    for end in ("silent_rate_lo", "silent_rate_hi"):
        expected = (PROMPTS * base[end][0] + known) / (PROMPTS + 1)
        assert odd[end][0] == pytest.approx(expected, abs=1e-9)


def test_groupsize_under_a_prior_counts_every_prompt_once(files: dict[str, Path]) -> None:
    rows = _rates(files["odd"], "groupsize", "--prior", "npmle")
    assert rows.filter(pl.col("segment") == "all")["prompts"][0] == PROMPTS + 1


def test_groupsize_under_a_prior_sizes_a_bare_rate_at_its_own_rate(
    files: dict[str, Path], tmp_path: Path
) -> None:
    alone = tmp_path / "alone.csv"
    alone.write_text("pass_rate\n0.123\n")
    expected = _rates(alone, "groupsize", "--per-prompt")["group_size"][0]
    rows = _rates(files["odd"], "groupsize", "--prior", "npmle", "--per-prompt")
    assert rows.filter(pl.col("p") == 0.123)["group_size"].to_list() == [expected]


@pytest.mark.parametrize(
    "args",
    [
        ("silent", "--G", "8", "--per-prompt"),
        ("groupsize", "--per-prompt"),
        ("curriculum", "--schedule", "pools", "--pools", "0-1:1", "--batch-size", "8", "--per-prompt"),
    ],
    ids=["silent", "groupsize", "curriculum"],
)
def test_per_prompt_output_has_one_row_per_prompt_of_a_mixed_column(
    mixed: Path, args: tuple[str, ...]
) -> None:
    assert _rates(mixed, *args).height == len(EIGHTHS) + len(BARE)


@pytest.mark.parametrize("prior", ["auto", "npmle"])
def test_a_plan_exported_per_prompt_plans_each_bare_rate_at_itself(
    mixed: Path, tmp_path: Path, prior: str
) -> None:
    out = tmp_path / "plan.csv"
    invoke("plan", mixed, "--col", "pass_rate", "--per-prompt", "--prior", prior, "-o", out)
    rows = pl.read_csv(out)
    assert rows.filter(pl.col("pass_rate").is_in(BARE))["p_used"].to_list() == BARE


def test_several_columns_read_on_their_grids_give_one_row_per_prompt_and_column(
    mixed: Path, tmp_path: Path
) -> None:
    path = tmp_path / "two.csv"
    frame = pl.read_csv(mixed)
    frame.with_columns(pl.col("pass_rate").reverse().alias("second")).write_csv(path)
    args = ("silent", "--col", "second", "--G", "8", "--per-prompt")
    assert _rates(path, *args).height == 2 * frame.height


@pytest.mark.parametrize("args", [(), ("--prior", "npmle"), ("--estimator", "unbiased"), ("--bounds",)])
def test_a_column_of_bare_rates_beside_a_column_of_counts_is_its_own_run(
    mixed: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    rng = np.random.default_rng(4)
    bare = rng.random(len(EIGHTHS) + len(BARE)).tolist()
    path = tmp_path / "two.csv"
    pl.read_csv(mixed).with_columns(pl.Series("bare", bare)).write_csv(path)
    rows = _rates(path, "silent", "--col", "bare", "--G", "8", *args).filter(pl.col("column") == "bare")
    expected = sum(_bare_silent(p, 8) for p in bare) / len(bare)
    assert rows["silent_rate"][0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("command", ["silent", "budget"])
def test_a_group_beside_an_odd_row_gets_what_its_rows_alone_get(
    files: dict[str, Path], tmp_path: Path, command: str
) -> None:
    alone = tmp_path / "b.csv"
    pl.read_csv(files["odd"]).filter(pl.col("src") == "b").write_csv(alone)
    args = (command, "--G", "8,64")
    grouped = _rates(files["odd"], *args, "--by", "src").filter(pl.col("src") == "b").drop("src")
    assert_frame_equal(_rates(alone, *args), grouped, check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


def test_preflight_on_a_mixed_column_names_both_estimators(files: dict[str, Path]) -> None:
    assert _rates(files["odd"], "preflight")["estimator"][0] == "unbiased + plug-in"


def test_preflight_keep_rate_moves_by_at_most_one_over_n(files: dict[str, Path]) -> None:
    before, after = _rates(files["base"], "preflight"), _rates(files["odd"], "preflight")
    assert abs(before["keep_rate"][0] - after["keep_rate"][0]) <= 1 / (PROMPTS + 1)

"""`sigmatool silent`: the paper's Big-Math figures, agreement across input forms, and the output contract."""

from __future__ import annotations

import itertools
from math import comb
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool import kernels
from sigmatool.load import InputOptions, read_histogram
from sigmatool.silent import summarize
from tests.conftest import BIGMATH, BIGMATH_COUNTS, TOY, csv_of, invoke

SUMMARY_COLUMNS = [
    "G",
    "prompts",
    "silent_rate",
    "all_right_rate",
    "all_wrong_rate",
    "always_silent_share",
    "dapo_draws_per_group",
    "dapo_draws_per_group_learnable",
    "estimator",
]


@pytest.fixture(scope="module")
def bigmath_csv() -> pl.DataFrame:
    return csv_of(invoke("silent", BIGMATH, "--G", "4,8,16,32,64", "--format", "csv"))


def test_bigmath_silent_rates_by_default_are_the_papers_unbiased_ones(bigmath_csv: pl.DataFrame) -> None:
    # 64 samples per prompt: every G ≤ 64 is estimated without bias (docs/theory.md §2).
    assert [0.5859, 0.4307, 0.3019] == [round(x, 4) for x in bigmath_csv["silent_rate"][:3]]


def test_bigmath_default_names_the_unbiased_estimator_in_every_row(bigmath_csv: pl.DataFrame) -> None:
    assert ["unbiased"] * 5 == bigmath_csv["estimator"].to_list()


def test_bigmath_plugin_silent_rates_match_the_paper() -> None:
    out = csv_of(invoke("silent", BIGMATH, "--G", "4,8,16,32,64", "--estimator", "plugin", "--format", "csv"))
    assert [0.5927, 0.4428, 0.3224, 0.2301, 0.1653] == [round(x, 4) for x in out["silent_rate"]]


def test_bigmath_always_silent_share_matches_the_paper(bigmath_csv: pl.DataFrame) -> None:
    assert [0.1118] * 5 == [round(x, 4) for x in bigmath_csv["always_silent_share"]]


def test_bigmath_unbiased_silent_rates_match_the_paper() -> None:
    args = (
        "silent",
        BIGMATH,
        "--G",
        "4,8,16",
        "--estimator",
        "unbiased",
        "--samples",
        "64",
        "--format",
        "csv",
    )
    assert [0.5859, 0.4307, 0.3019] == [round(x, 4) for x in csv_of(invoke(*args))["silent_rate"]]


def test_summary_columns_are_in_the_documented_order(bigmath_csv: pl.DataFrame) -> None:
    assert SUMMARY_COLUMNS == bigmath_csv.columns


def test_counts_csv_with_weights_gives_byte_identical_output() -> None:
    args = ("--G", "4,8,16,32,64", "--by-bins", "10", "--format", "csv")
    expanded = invoke("silent", BIGMATH, *args)
    weighted = invoke("silent", BIGMATH_COUNTS, "--weight-col", "count", *args)
    assert 0 == weighted.exit_code
    assert expanded.stdout == weighted.stdout


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_same_data_in_any_format_or_on_stdin_gives_identical_output(tmp_path: Path, fmt: str) -> None:
    frame = pl.read_csv(TOY)
    path = tmp_path / f"toy.{fmt}"
    getattr(frame, "write_ndjson" if fmt == "jsonl" else f"write_{fmt}")(path)
    args = ("--G", "2,8", "--by", "source", "--format", "csv")
    reference = invoke("silent", TOY, *args).stdout
    from_file = invoke("silent", path, *args).stdout
    stdin_fmt = "parquet" if fmt == "parquet" else fmt
    from_stdin = invoke("silent", "-", "--input-format", stdin_fmt, *args, input=path.read_bytes()).stdout
    assert reference == from_file
    assert reference == from_stdin


def test_silent_rate_is_the_prompt_mean_of_p_to_the_g_plus_its_complement() -> None:
    p = pl.read_csv(TOY)["pass_rate"].to_numpy()
    out = csv_of(invoke("silent", TOY, "--G", "3", "--format", "csv"))
    assert float(np.mean(p**3 + (1 - p) ** 3)) == pytest.approx(out["silent_rate"][0], abs=1e-15)


def test_silent_rate_matches_brute_force_enumeration_of_groups() -> None:
    p = pl.read_csv(TOY)["pass_rate"].to_numpy()
    G = 5
    silent = np.zeros_like(p)
    for rewards in itertools.product([0, 1], repeat=G):
        k = sum(rewards)
        if k in (0, G):
            silent += p**k * (1 - p) ** (G - k)
    out = csv_of(invoke("silent", TOY, "--G", str(G), "--format", "csv"))
    assert float(silent.mean()) == pytest.approx(out["silent_rate"][0], abs=1e-14)


def test_dapo_draws_are_one_over_one_minus_the_silent_rate(bigmath_csv: pl.DataFrame) -> None:
    expected = 1 / (1 - bigmath_csv["silent_rate"])
    assert expected.to_list() == pytest.approx(bigmath_csv["dapo_draws_per_group"].to_list(), rel=1e-12)


def test_learnable_draws_leave_always_silent_prompts_out() -> None:
    rates = pl.read_csv(TOY)["pass_rate"].to_numpy()
    inner = rates[(rates > 0) & (rates < 1)]
    silent = float(np.mean(inner**8 + (1 - inner) ** 8))
    out = csv_of(invoke("silent", TOY, "--format", "csv"))
    assert 1 / (1 - silent) == pytest.approx(out["dapo_draws_per_group_learnable"][0], rel=1e-12)


def test_dapo_cap_limits_the_draws_and_reports_unfilled_slots() -> None:
    out = csv_of(invoke("silent", TOY, "--dapo-cap", "2", "--format", "csv"))
    silent = out["silent_rate"][0]
    assert 1 + silent == pytest.approx(out["dapo_draws_per_group"][0])
    assert silent**2 == pytest.approx(out["dapo_unfilled_rate"][0])


def test_bins_partition_the_prompts() -> None:
    out = csv_of(invoke("silent", BIGMATH, "--by-bins", "10", "--format", "csv"))
    assert 10 == out.height
    assert 215_608 == out["prompts"].sum()
    assert [i / 10 for i in range(10)] == pytest.approx(out["p_lo"].to_list())


def test_last_bin_is_closed_and_holds_p_equal_one() -> None:
    out = csv_of(invoke("silent", TOY, "--by-bins", "4", "--format", "csv"))
    expected = int((pl.read_csv(TOY)["pass_rate"] >= 0.75).sum())
    assert expected == out.filter(pl.col("p_hi") == 1.0)["prompts"][0]


def test_by_groups_each_get_their_own_rows() -> None:
    out = csv_of(invoke("silent", TOY, "--by", "source", "--G", "4,8", "--format", "csv"))
    assert [("algebra", 4), ("algebra", 8), ("geometry", 4), ("geometry", 8)] == list(
        out.select("source", "G").iter_rows()
    )


def test_per_prompt_has_one_row_per_prompt_and_g_in_input_order() -> None:
    out = csv_of(
        invoke("silent", TOY, "--per-prompt", "--id-col", "prompt_id", "--G", "4,8", "--format", "csv")
    )
    ids = pl.read_csv(TOY)["prompt_id"].to_list()
    assert [i for i in ids for _ in (4, 8)] == out["id"].to_list()
    assert [4, 8] * 20 == out["G"].to_list()


@pytest.mark.parametrize("command", ["silent", "groupsize"])
def test_per_prompt_row_numbers_beside_the_inputs_own_ids_get_a_note(command: str) -> None:
    # The toy file names its prompts in 'prompt_id'; the output's id is the row number unless --id-col.
    numbered = invoke(command, TOY, "--per-prompt", "--format", "csv")
    assert 1 == csv_of(numbered)["id"][0]
    assert (
        "the input's own 'prompt_id' is not used: --id-col prompt_id names each row by it" in numbered.stderr
    )
    named = invoke(command, TOY, "--per-prompt", "--id-col", "prompt_id", "--format", "csv")
    assert "p01" == csv_of(named)["id"][0]
    assert "--id-col" not in named.stderr


def test_no_id_note_without_an_id_column(write_csv) -> None:
    done = invoke("silent", write_csv("pass_rate\n0.25\n0.5\n"), "--per-prompt", "--format", "csv")
    assert [1, 2] == csv_of(done)["id"].to_list()
    assert "--id-col" not in done.stderr


def test_per_prompt_writes_infinite_draws_as_null() -> None:
    out = csv_of(invoke("silent", TOY, "--per-prompt", "--format", "csv"))
    assert [None] * 4 == out.filter(pl.col("p").is_in([0.0, 1.0]))["dapo_expected_draws"].to_list()


def test_per_prompt_values_are_the_kernels() -> None:
    out = csv_of(invoke("silent", TOY, "--per-prompt", "--G", "6", "--format", "csv"))
    expected = kernels.silent_probability(out["p"].to_numpy(), 6)
    assert expected.tolist() == pytest.approx(out["p_silent"].to_list(), abs=1e-15)


def test_unbiased_estimator_uses_the_hypergeometric_form() -> None:
    hist = read_histogram(InputOptions(paths=(str(TOY),), k_col="k", n_col="n")).frame
    summary = summarize(hist, (), [4], estimator="unbiased")
    k, n = hist["k"].to_numpy(), hist["n"].to_numpy()
    per_value = [(comb(a, 4) + comb(b - a, 4)) / comb(b, 4) for a, b in zip(k, n, strict=True)]
    expected = np.average(per_value, weights=hist["prompts"].to_numpy())
    assert float(expected) == pytest.approx(summary["silent_rate"][0], abs=1e-14)


def test_rollout_log_gives_the_same_summary_as_its_counts(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    p = rng.uniform(size=50)
    n = rng.integers(4, 12, size=50)
    rows = [(f"q{i}", int(r)) for i in range(50) for r in rng.random(n[i]) < p[i]]
    log = pl.DataFrame(rows, schema=["prompt", "reward"], orient="row")
    log.write_parquet(tmp_path / "log.parquet")
    counts = log.group_by("prompt").agg(pl.col("reward").sum().alias("k"), pl.len().alias("n"))
    counts.write_csv(tmp_path / "counts.csv")
    direct = invoke(
        "silent",
        tmp_path / "log.parquet",
        "--rollouts",
        "--prompt-col",
        "prompt",
        "--reward-col",
        "reward",
        "--estimator",
        "unbiased",
        "--G",
        "4",
        "--format",
        "csv",
    )
    via_counts = invoke(
        "silent",
        tmp_path / "counts.csv",
        "--k-col",
        "k",
        "--n-col",
        "n",
        "--estimator",
        "unbiased",
        "--G",
        "4",
        "--format",
        "csv",
    )
    assert via_counts.stdout == direct.stdout


def test_table_view_leads_with_a_sentence() -> None:
    result = invoke("silent", BIGMATH, "--format", "table")
    # First how the rates were read (Big-Math's are k of 64), then the answer.
    assert result.stdout.startswith(
        "Rates read as k right of n = 64 samples (all multiples of 1/64).\n"
        "43.1% of groups are silent at G=8 [unbiased]; 11.2% of prompts were never or always right"
    )

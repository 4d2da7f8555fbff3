"""`sigmatool budget`: the paper's Big-Math shares, exact sums, hand values and the output contract."""

from __future__ import annotations

import io
import json
import math
from math import comb

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from typer.testing import Result

from sigmatool import budget_summary, kernels, sums
from sigmatool.render.table import BAR_WIDTH
from sigmatool.segments import bin_index
from tests.conftest import BIGMATH, BIGMATH_COUNTS, TOY, headline, invoke

COLUMNS = [
    "G",
    "segment",
    "p_lo",
    "p_hi",
    "prompts",
    "prompt_share",
    "grpo_share",
    "drgrpo_share",
    "grpo_over_drgrpo",
    "silent_rate",
    "estimator",
]
SHARES = ("prompt_share", "grpo_share", "drgrpo_share")


def csv_of(result: Result) -> pl.DataFrame:
    """The CSV a command printed, G kept as the label it is ("8", "inf"): readers parse inf as a float."""
    assert result.exit_code == 0, result.stderr
    return pl.read_csv(io.StringIO(result.stdout), schema_overrides={"G": pl.String})


def hist_of(p: list[float], prompts: list[int] | None = None) -> pl.DataFrame:
    """A histogram frame as load.histogram returns it (no counts)."""
    weights = prompts if prompts is not None else [1] * len(p)
    return pl.DataFrame({"p": p, "prompts": weights, "rows": weights}, schema_overrides={"prompts": pl.Int64})


def segment(out: pl.DataFrame, name: str, G: str = "inf") -> dict[str, object]:
    return out.filter((pl.col("G") == G) & (pl.col("segment") == name)).row(0, named=True)


@pytest.fixture(scope="module")
def bigmath() -> pl.DataFrame:
    """The paper's figures are the plug-in's (each prompt at its p̂)."""
    return csv_of(
        invoke("budget", BIGMATH, "--G", "8", "--G", "inf", "--estimator", "plugin", "--format", "csv")
    )


def test_bigmath_by_default_is_unbiased_at_8_and_under_the_npmle_at_inf() -> None:
    default = csv_of(invoke("budget", BIGMATH, "--G", "8,inf", "--format", "csv"))
    unbiased = csv_of(invoke("budget", BIGMATH, "--G", "8", "--estimator", "unbiased", "--format", "csv"))
    npmle = csv_of(invoke("budget", BIGMATH, "--G", "inf", "--prior", "npmle", "--format", "csv"))
    shown = [c for c in COLUMNS if c not in ("estimator", "silent_rate")]  # no silent rate at G = ∞
    assert unbiased.select(shown).equals(default.filter(pl.col("G") == "8").select(shown))
    assert npmle.select(shown).equals(default.filter(pl.col("G") == "inf").select(shown))
    assert ["unbiased", "prior npmle"] == default["estimator"].unique(maintain_order=True).to_list()


# ---------------------------------------------------------------------------------- the paper's figures


def test_bigmath_extreme_shares_at_inf_match_the_paper(bigmath: pl.DataFrame) -> None:
    row = segment(bigmath, "extreme", "inf")
    assert 0.1388 == round(row["drgrpo_share"], 4)  # type: ignore[arg-type]
    assert 0.2470 == round(row["grpo_share"], 4)  # type: ignore[arg-type]


def test_bigmath_medium_shares_at_inf_match_the_paper(bigmath: pl.DataFrame) -> None:
    row = segment(bigmath, "medium", "inf")
    assert 0.2278 == round(row["drgrpo_share"], 4)  # type: ignore[arg-type]
    assert 0.1747 == round(row["grpo_share"], 4)  # type: ignore[arg-type]


def test_bigmath_extreme_shares_at_8_match_the_issue(bigmath: pl.DataFrame) -> None:
    row = segment(bigmath, "extreme", "8")
    assert 0.1388 == round(row["drgrpo_share"], 4)  # type: ignore[arg-type]
    assert 0.1649 == round(row["grpo_share"], 4)  # type: ignore[arg-type]


def test_bigmath_silent_rate_of_all_prompts_at_8_matches_the_paper(bigmath: pl.DataFrame) -> None:
    assert round(segment(bigmath, "all", "8")["silent_rate"], 4) == 0.4428  # type: ignore[arg-type]


def test_bigmath_counts_all_prompts_and_the_silent_ones(bigmath: pl.DataFrame) -> None:
    first_bin = bigmath.filter((pl.col("G") == "8") & (pl.col("segment") == "bin")).row(0, named=True)
    assert segment(bigmath, "all", "8")["prompts"] == 215_608
    assert first_bin["prompts"] > 0.0402 * 215_608  # the 4.02 % with p̂ = 0 are counted in bin 0


# ---------------------------------------------------------------------------------- sums and contract


def test_bigmath_bin_shares_of_each_method_sum_to_one(bigmath: pl.DataFrame) -> None:
    bins = bigmath.filter(pl.col("segment") == "bin").group_by("G").agg(pl.col(SHARES).sum())
    for column in SHARES:
        assert bins[column].to_list() == pytest.approx([1.0, 1.0], abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 64), st.integers(1, 1000)), min_size=1, max_size=40),
    st.sampled_from([2.0, 3.0, 8.0, 257.0, math.inf]),
    st.integers(1, 23),
)
def test_bin_shares_sum_to_one_for_any_histogram(rows: list[tuple[int, int]], G: float, bins: int) -> None:
    by_p = {k / 64: w for k, w in rows}
    p = sorted(by_p)
    weights = [by_p[value] for value in p]
    out = budget_summary(hist_of(p, weights), (), [G], bins=bins)
    in_bins = out.filter(pl.col("segment") == "bin")
    assert bins == in_bins.height
    assert float(sum(weights)) == in_bins["prompts"].sum()
    if any(0 < value < 1 for value in p):
        for column in SHARES:
            assert abs(math.fsum(in_bins[column].to_list()) - 1.0) <= 1e-12


def test_summary_columns_are_in_the_documented_order(bigmath: pl.DataFrame) -> None:
    assert bigmath.columns == COLUMNS


def test_segments_come_in_order_bins_then_extreme_medium_all(bigmath: pl.DataFrame) -> None:
    expected = ["bin"] * 10 + ["extreme", "medium", "all"]
    assert expected == bigmath.filter(pl.col("G") == "8")["segment"].to_list()


def test_g_is_a_string_label_in_csv_and_json() -> None:
    as_csv = invoke("budget", TOY, "--G", "4,inf", "-f", "csv").stdout.splitlines()
    as_json = json.loads(invoke("budget", TOY, "--G", "4,inf", "-f", "json").stdout)
    assert list(dict.fromkeys(line.split(",")[0] for line in as_csv[1:])) == ["4", "inf"]
    assert list(dict.fromkeys(row["G"] for row in as_json)) == ["4", "inf"]


def test_counts_csv_with_weight_col_gives_identical_output_to_the_expanded_parquet() -> None:
    args = ("--G", "4,8,inf", "--bins", "7", "--format", "csv")
    expanded = invoke("budget", BIGMATH, *args)
    weighted = invoke("budget", BIGMATH_COUNTS, "--weight-col", "count", *args)
    assert 0 == expanded.exit_code
    assert 0 == weighted.exit_code
    assert expanded.stdout == weighted.stdout


def fsum_segments(p: list[float], prompts: list[float], G: float, bins: int) -> dict[str, list[float]]:
    """Per segment (bins by index, then extreme, medium, all): fsum of prompts, of GRPO and of Dr. GRPO weight."""
    q, w = np.array(p), np.array(prompts)
    grpo = w * (kernels.grpo_weight_limit(q) if math.isinf(G) else kernels.expected_sigma(q, int(G)))
    drgrpo = w * (
        kernels.drgrpo_weight_limit(q) if math.isinf(G) else kernels.expected_sigma_squared(q, int(G))
    )
    # The documented rule, written independently: the largest b with fl(b / bins) ≤ p (the last bin closed).
    index = np.array([max(b for b in range(bins) if b / bins <= x) for x in q])
    masks = {f"bin{b}": index == b for b in range(bins)}
    masks |= {"extreme": (q < 0.1) | (q > 0.9), "medium": (q >= 0.4) & (q <= 0.6), "all": q == q}
    return {name: [math.fsum(x[mask]) for x in (w, grpo, drgrpo)] for name, mask in masks.items()}


# Segment sums run in the histogram's fixed order: exact to far below this against correctly rounded sums.
SUMS = 1e-12


def assert_exact_sums(out: pl.DataFrame, p: list[float], prompts: list[float], G: float, bins: int) -> None:
    expected = fsum_segments(p, prompts, G, bins)
    names = [f"bin{b}" for b in range(bins)] + ["extreme", "medium", "all"]
    for name, row in zip(names, out.iter_rows(named=True), strict=True):
        n, grpo, drgrpo = expected[name]
        total = expected["all"]
        assert pytest.approx(n, rel=SUMS) == row["prompts"], name
        for weight, whole, column in ((grpo, total[1], "grpo_share"), (drgrpo, total[2], "drgrpo_share")):
            if whole > 0:
                assert pytest.approx(weight / whole, rel=SUMS, abs=1e-300) == row[column], name
            else:
                assert row[column] is None, name


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0.0, 1.0, allow_subnormal=True),
            st.sampled_from([1.0, 3.0])
            | st.floats(0.0, 1e300, allow_subnormal=True)
            | st.integers(0, 2**40).map(float),
        ),
        min_size=1,
        max_size=80,
    ),
    st.sampled_from([2.0, 8.0, 100.0, math.inf]),
)
def test_segment_sums_match_correctly_rounded_sums_of_any_weights(
    rows: list[tuple[float, float]], G: float
) -> None:
    # Subnormal, tiny and huge weights (2^990 and up), repeated p: every sum agrees with fsum's.
    p, prompts = [q for q, _ in rows], [w for _, w in rows]
    hist = pl.DataFrame({"p": p, "prompts": prompts, "rows": [1] * len(p)})
    assert_exact_sums(budget_summary(hist, (), [G], bins=5), p, prompts, G, 5)


@pytest.mark.parametrize("batch", [1, 3, 64])
def test_sums_do_not_depend_on_how_the_rows_are_batched(monkeypatch: pytest.MonkeyPatch, batch: int) -> None:
    rng = np.random.default_rng(7)
    p = np.concatenate([rng.random(300), [0.0, 1.0, 0.4, 0.6, 0.1, 0.9]]).tolist()
    prompts = (rng.random(306) * 10.0 ** rng.integers(-5, 5, 306)).tolist()
    monkeypatch.setattr(sums, "BATCH_ROWS", batch)
    rows = pl.LazyFrame({"p": p, "prompts": prompts})
    out = budget_summary(rows, (), [8, math.inf], bins=5)
    assert_exact_sums(out.filter(pl.col("G") == "8"), p, prompts, 8, 5)
    assert_exact_sums(out.filter(pl.col("G") == "inf"), p, prompts, math.inf, 5)


def test_by_groups_need_not_be_contiguous_rows() -> None:
    rng = np.random.default_rng(3)
    hist = pl.DataFrame(
        {"source": rng.choice(["a", "b", "c"], 200), "p": rng.random(200), "prompts": rng.integers(1, 9, 200)}
    ).with_columns(rows=pl.col("prompts"))
    ordered = hist.sort("source", "p")
    expected = budget_summary(ordered, ["source"], [8, math.inf], bins=4)
    # Sums run in row order, so a shuffled histogram may differ in the last bits only.
    assert_frame_equal(expected, budget_summary(hist, ["source"], [8, math.inf], bins=4), rel_tol=1e-13)
    assert expected["source"].unique(maintain_order=True).to_list() == ["a", "b", "c"]


# ---------------------------------------------------------------------------------- hand values


def test_large_group_shares_are_sqrt_and_product_weights_by_hand() -> None:
    # p = 0.5: sqrt(p(1-p)) = 0.5, p(1-p) = 0.25;  p = 0.1: 0.3 and 0.09.
    out = budget_summary(hist_of([0.1, 0.5]), (), [math.inf], extreme=0.2)
    extreme = segment(out, "extreme")
    shares = (extreme["grpo_share"], extreme["drgrpo_share"])
    assert shares == pytest.approx((0.3 / 0.8, 0.09 / 0.34), rel=1e-14)
    assert extreme["grpo_over_drgrpo"] == pytest.approx((0.3 / 0.8) / (0.09 / 0.34), rel=1e-14)


def test_finite_group_weights_match_brute_force_enumeration() -> None:
    p, G = [0.1, 0.3, 0.5, 0.85], 5

    def e_sigma(q: float) -> float:
        return sum(comb(G, k) * q**k * (1 - q) ** (G - k) * math.sqrt(k * (G - k)) / G for k in range(G + 1))

    def e_sigma2(q: float) -> float:
        return sum(comb(G, k) * q**k * (1 - q) ** (G - k) * k * (G - k) / G**2 for k in range(G + 1))

    out = budget_summary(hist_of(p, [1, 2, 3, 4]), (), [G], bins=2)
    grpo = [w * e_sigma(q) for q, w in zip(p, [1, 2, 3, 4], strict=True)]
    drgrpo = [w * e_sigma2(q) for q, w in zip(p, [1, 2, 3, 4], strict=True)]
    low = segment(out, "bin", "5")  # first bin: p < 0.5
    assert sum(grpo[:2]) / sum(grpo) == pytest.approx(low["grpo_share"], rel=1e-12)
    assert sum(drgrpo[:2]) / sum(drgrpo) == pytest.approx(low["drgrpo_share"], rel=1e-12)


def test_silent_rate_is_the_prompt_mean_of_p_silent_per_segment() -> None:
    p, w = [0.05, 0.2, 0.5, 0.95], [3, 1, 2, 5]
    out = budget_summary(hist_of(p, w), (), [6], extreme=0.1)
    expected = (3 * (0.05**6 + 0.95**6) + 5 * (0.95**6 + 0.05**6)) / 8
    assert expected == pytest.approx(segment(out, "extreme", "6")["silent_rate"], rel=1e-13)


def test_silent_rate_is_null_at_inf() -> None:
    out = budget_summary(hist_of([0.2, 0.5]), (), [math.inf])
    assert out["silent_rate"].is_null().all()


def test_prompts_never_or_always_solved_are_counted_but_weigh_nothing() -> None:
    out = budget_summary(hist_of([0.0, 1.0, 0.5], [4, 6, 1]), (), [8, math.inf])
    for G in ("8", "inf"):
        extreme = segment(out, "extreme", G)
        assert 10 == extreme["prompts"], G
        assert 0.0 == extreme["grpo_share"], G
        assert 0.0 == extreme["drgrpo_share"], G
        assert extreme["grpo_over_drgrpo"] is None, G
        medium = segment(out, "medium", G)
        assert 1.0 == medium["grpo_share"], G
        assert 1.0 == medium["drgrpo_share"], G


def test_empty_bins_appear_with_no_prompts_and_zero_shares() -> None:
    out = budget_summary(hist_of([0.35, 0.45]), (), [8], bins=4)
    bins = out.filter(pl.col("segment") == "bin")
    assert bins["p_lo"].to_list() == [0.0, 0.25, 0.5, 0.75]
    assert bins["prompts"].to_list() == [0, 2, 0, 0]
    assert bins["grpo_share"].to_list() == [0.0, 1.0, 0.0, 0.0]


def test_bins_put_each_p_where_the_shared_bin_rule_does() -> None:
    p = [k / 100 for k in range(101)]
    out = budget_summary(hist_of(p), (), [8], bins=10).filter(pl.col("segment") == "bin")
    expected = np.bincount(bin_index(p, 10), minlength=10)
    assert expected.tolist() == out["prompts"].to_list()


def test_extreme_and_medium_boundaries_follow_the_options() -> None:
    out = budget_summary(hist_of([0.2, 0.3, 0.7, 0.8]), (), [8], extreme=0.2, medium=(0.3, 0.7))
    extreme, medium = segment(out, "extreme", "8"), segment(out, "medium", "8")
    assert 0 == extreme["prompts"]
    assert 2 == medium["prompts"]
    assert (0.3, 0.7) == (medium["p_lo"], medium["p_hi"])


def test_extreme_rows_show_no_edges_since_the_segment_is_not_an_interval() -> None:
    out = budget_summary(hist_of([0.05, 0.5, 0.95]), (), [8])
    extreme = segment(out, "extreme", "8")
    assert (None, None) == (extreme["p_lo"], extreme["p_hi"])


def test_the_table_view_states_the_extreme_segment_in_words() -> None:
    text = invoke("budget", TOY, "--extreme", "0.2", "--format", "table").stdout
    assert "extreme: p < 0.2 or p > 0.8" in text


def test_every_by_group_has_its_own_budget() -> None:
    out = csv_of(invoke("budget", TOY, "--by", "source", "--G", "8,inf", "--format", "csv"))
    alls = out.filter(pl.col("segment") == "all")
    assert alls["source"].to_list() == ["algebra", "algebra", "geometry", "geometry"]
    assert alls["grpo_share"].to_list() == [1.0] * 4
    sums = out.filter(pl.col("segment") == "bin").group_by("source", "G").agg(pl.col("drgrpo_share").sum())
    assert sums["drgrpo_share"].to_list() == pytest.approx([1.0] * 4, abs=1e-12)


# ---------------------------------------------------------------------------------- unbiased estimator


def test_unbiased_with_g_equal_to_n_gives_the_large_group_plugin_shares() -> None:
    # Drawing all n logged samples leaves no randomness: σ = sqrt(p̂(1 − p̂)) exactly.
    counts = ("--k-col", "k", "--n-col", "n", "--weight-col", "count", "--format", "csv")
    unbiased = csv_of(invoke("budget", BIGMATH_COUNTS, "--G", "64", "--estimator", "unbiased", *counts))
    plugin = csv_of(invoke("budget", BIGMATH_COUNTS, "--G", "inf", "--estimator", "plugin", *counts))
    for column in ("grpo_share", "drgrpo_share"):
        assert plugin[column].to_list() == pytest.approx(unbiased[column].to_list(), abs=1e-12)


def test_unbiased_grpo_weight_is_the_hypergeometric_mean_of_sigma() -> None:
    k, n, G = np.array([1, 3, 5]), 8, 4

    def weight(kk: int) -> float:
        pmf = [comb(kk, j) * comb(n - kk, G - j) / comb(n, G) for j in range(G + 1)]
        return sum(pmf[j] * math.sqrt(j * (G - j)) / G for j in range(G + 1))

    hist = pl.DataFrame({"k": k, "n": [n] * 3, "p": k / n, "prompts": [1, 1, 1], "rows": [1, 1, 1]})
    out = budget_summary(hist, (), [G], estimator="unbiased", bins=2)
    w = [weight(int(x)) for x in k]
    assert (w[0] + w[1]) / sum(w) == pytest.approx(segment(out, "bin", "4")["grpo_share"], rel=1e-12)


def test_unbiased_rejects_g_inf_as_a_usage_error() -> None:
    args = ("--k-col", "k", "--n-col", "n", "--estimator", "unbiased", "--G", "inf")
    result = invoke("budget", BIGMATH_COUNTS, *args)
    assert 2 == result.exit_code
    assert "--G inf" in result.stderr


# ---------------------------------------------------------------------------------- options and views


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("--extreme", "0.7"), "--extreme"),
        (("--extreme", "0"), "--extreme"),
        (("--medium", "0.6,0.4"), "--medium"),
        (("--medium", "0.4"), "--medium"),
        (("--bins", "0"), "--bins"),
        (("--G", "0"), "--G"),
        (("--G", "abc"), "--G"),
        (("--G", "1"), "--G"),
    ],
)
def test_bad_options_are_usage_errors_that_name_the_option(args: tuple[str, ...], option: str) -> None:
    result = invoke("budget", TOY, *args, "--format", "csv")
    assert 2 == result.exit_code
    assert "" == result.stdout
    assert option in result.stderr


def test_table_view_leads_with_the_extreme_share_sentence() -> None:
    result = invoke("budget", BIGMATH, "--G", "8", "--estimator", "plugin", "--format", "table")
    first = headline(result.stdout)
    expected = "At G=8, GRPO gives 16.5% of its gradient to extreme prompts, against 13.9% for Dr. GRPO"
    assert first == expected + " (×1.19)."


def test_table_view_draws_a_bar_for_both_methods_and_names_dapo() -> None:
    lines = invoke("budget", TOY, "--G", "8", "--format", "table").stdout.splitlines()
    bin_rows = [line for line in lines if " bin " in line]
    assert all(line.count("█") + line.count("·") == 2 * BAR_WIDTH for line in bin_rows if "█" in line)
    assert any("DAPO" in line and "equal GRPO" in line for line in lines)


def test_the_whole_help_explains_the_three_operations_on_sigma() -> None:
    text = " ".join(invoke("budget", "--help-all").stdout.split())
    phrases = ("divides the advantages by σ", "E[σ²]", "DAPO's shares equal GRPO's")
    assert all(phrase in text for phrase in phrases)


@given(
    st.integers(1, 1000),
    st.floats(0.0, 0.5, exclude_min=True, exclude_max=True),
    st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)).map(sorted).filter(lambda m: m[0] < m[1]),
    st.lists(st.floats(0.0, 1.0, allow_subnormal=True), min_size=1, max_size=50),
)
def test_every_pass_rate_falls_in_one_of_at_most_bins_plus_four_pieces(
    bins: int, extreme: float, medium: list[float], p: list[float]
) -> None:
    from sigmatool.budget import Pieces
    from sigmatool.options import Segments

    seg = Segments(bins, extreme, (medium[0], medium[1]))
    pieces = Pieces(seg)
    cuts = [extreme, 1.0 - extreme, *medium, *(b / bins for b in range(bins + 1))]
    near = [float(np.nextafter(c, side)) for c in cuts for side in (0.0, 2.0)]
    values = np.clip(np.array([*p, *cuts, *near]), 0.0, 1.0)
    found = pieces.of(values)
    assert pieces.codes.size <= bins + 4
    assert found.min() >= 0
    assert found.max() < pieces.codes.size

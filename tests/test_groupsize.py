"""`sigmatool groupsize`: docs/theory.md's table of exact G, minimality, the summary's definitions and the CLI."""

from __future__ import annotations

import io
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sigmatool import group_sizes, groupsize_summary, kernels
from sigmatool.errors import UsageError
from sigmatool.groupsize import COLUMNS, GroupSizeOptions, law_group_sizes
from tests.conftest import BIGMATH, BIGMATH_COUNTS, csv_of, headline, invoke

PAPER_P = ("0.5", "0.3", "0.7", "0.1", "0.9", "0.05", "0.95")
# docs/theory.md §4: the exact G per p (0.3 and 0.7 alike, and so on) at φ* = 0.90, 0.95, 0.99.
PAPER_G = {
    "0.90": {"0.5": 7, "0.3": 9, "0.1": 22, "0.05": 42},
    "0.95": {"0.5": 11, "0.3": 14, "0.1": 36, "0.05": 69},
    "0.99": {"0.5": 51, "0.3": 61, "0.1": 144, "0.05": 273},
}
TWIN = {"0.7": "0.3", "0.9": "0.1", "0.95": "0.05"}
PER_PROMPT = ["id", "p", "group_size", "fidelity_at_group_size", "silent_at_group_size", "reachable"]


@pytest.fixture
def paper_csv(tmp_path: Path) -> Path:
    path = tmp_path / "paper.csv"
    path.write_text("pass_rate\n" + "\n".join(PAPER_P) + "\n")
    return path


def hist_of(p: list[float], prompts: list[float] | None = None) -> pl.DataFrame:
    return pl.DataFrame({"p": p, "prompts": prompts or [1.0] * len(p)})


def exact_law(p: str, target: str) -> int:
    """⌈1/(8 ε p (1 − p))⌉ in exact rational arithmetic."""
    eps = 1 - Fraction(target)
    return math.ceil(1 / (8 * eps * Fraction(p) * (1 - Fraction(p))))


def is_minimal(p: float, G: float, target: float, std: str = "population", min_G: int = 2) -> bool:
    """φ(G) reaches the target and φ(G − 1) does not (or G is the smallest allowed), by one-value calls."""
    G = int(G)
    reaches = float(kernels.fidelity(p, G, std=std)) >= target
    below = G == min_G or float(kernels.fidelity(p, G - 1, std=std)) < target
    return reaches and below


# --------------------------------------------------------------------------------------------- the paper


@pytest.mark.parametrize("target", ["0.90", "0.95", "0.99"])
def test_per_prompt_reproduces_the_papers_exact_group_sizes(paper_csv: Path, target: str) -> None:
    out = csv_of(
        invoke("groupsize", paper_csv, "--fidelity", target, "--per-prompt", "--law", "--format", "csv")
    )
    expected = [PAPER_G[target][TWIN.get(p, p)] for p in PAPER_P]
    assert expected == out["group_size"].to_list()


@pytest.mark.parametrize("target", ["0.90", "0.95", "0.99"])
def test_law_column_is_the_ceiling_of_the_closed_form(paper_csv: Path, target: str) -> None:
    out = csv_of(
        invoke("groupsize", paper_csv, "--fidelity", target, "--per-prompt", "--law", "--format", "csv")
    )
    assert [exact_law(p, target) for p in PAPER_P] == out["group_size_law"].to_list()


def test_law_at_p_half_and_ninety_percent_is_five_not_six() -> None:
    # 1/(8·(1 − 0.9)·0.25) is 5.000000000000001 in float64; the law is 5.
    assert [5.0] == law_group_sizes([0.5], 0.9).tolist()


def test_per_prompt_columns_are_in_the_documented_order(paper_csv: Path) -> None:
    out = csv_of(invoke("groupsize", paper_csv, "--per-prompt", "--law", "--format", "csv"))
    assert ["id", "p", "group_size", "group_size_law", *PER_PROMPT[3:]] == out.columns


def test_fidelity_and_silent_at_group_size_are_the_kernels_at_that_g(paper_csv: Path) -> None:
    out = csv_of(invoke("groupsize", paper_csv, "--per-prompt", "--format", "csv"))
    p, G = out["p"].to_numpy(), out["group_size"].to_numpy()
    assert np.allclose(kernels.fidelity(p, G), out["fidelity_at_group_size"].to_numpy(), rtol=1e-12, atol=0)
    assert np.allclose(p**G + (1 - p) ** G, out["silent_at_group_size"].to_numpy(), rtol=1e-12, atol=0)


# --------------------------------------------------------------------------------------------- minimality


@settings(max_examples=75, deadline=None)
@given(
    p=st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True),
    target=st.floats(min_value=0.5, max_value=0.995),
    std=st.sampled_from(["population", "bessel"]),
)
def test_group_size_is_the_smallest_g_reaching_the_target(p: float, target: float, std: str) -> None:
    (G,) = group_sizes([p], target, std=std).tolist()
    if math.isnan(G):
        assert float(kernels.fidelity(p, 4096, std=std)) < target
    else:
        assert is_minimal(p, G, target, std)


def test_vectorised_answers_are_minimal_for_many_values_at_once() -> None:
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(0, 1, 1500), 10 ** rng.uniform(-6, -0.3, 1500)])
    p = np.concatenate([p, 1 - p, p[:100]])  # twins p, 1 − p and repeats
    G = group_sizes(p, 0.95)
    ok = np.isfinite(G)
    reaches = kernels.fidelity(p[ok], G[ok]) >= 0.95
    below = (G[ok] == 2) | (kernels.fidelity(p[ok], G[ok] - 1) < 0.95)
    beyond = kernels.fidelity(p[~ok], 4096) < 0.95
    assert reaches.all()
    assert below.all()
    assert beyond.all()


@pytest.mark.parametrize(("G", "target"), [(7, 0.9), (22, 0.9), (100, 0.95), (1000, 0.9)])
def test_values_on_a_threshold_get_the_minimal_g(G: int, target: float) -> None:
    # Bisect to the last float where φ(G, q) crosses the target; take its neighbours and their mirrors.
    lo, hi = 1e-9, 0.5
    while np.nextafter(lo, 1) < hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if float(kernels.fidelity(mid, G)) >= target else (mid, hi)
    near = [lo, hi]
    for _ in range(8):
        near += [np.nextafter(near[-2], 0), np.nextafter(near[-1], 1)]
    values = np.array(near + [1 - x for x in near])
    answers = group_sizes(values, target)
    assert [True] * len(values) == [is_minimal(p, g, target) for p, g in zip(values, answers, strict=True)]


@pytest.mark.parametrize(("target", "std"), [(0.9, "population"), (0.99, "bessel")])
def test_values_just_past_each_threshold_get_the_minimal_g_among_many(target: float, std: str) -> None:
    # Many values take the tabulated-threshold route; each G's crossing q is found here by bisection
    # on the kernel, and values 1e-7 (relative) to either side of it must still get the minimal G.
    G = np.arange(2, 400)
    G = G[kernels.fidelity(0.5, G, std=std) >= target]
    lo, hi = np.full(G.shape, 1e-9), np.full(G.shape, 0.5)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        up = kernels.fidelity(mid, G, std=std) >= target
        lo, hi = np.where(up, lo, mid), np.where(up, mid, hi)
    near = np.concatenate([hi * (1 + 1e-7), lo * (1 - 1e-7)])
    filler = np.random.default_rng(5).uniform(0.001, 0.999, 200_000)
    answers = group_sizes(np.concatenate([near, filler]), target, std=std)[: near.size]
    reaches = kernels.fidelity(near, answers, std=std) >= target
    below = (answers == 2) | (kernels.fidelity(near, answers - 1, std=std) < target)
    assert (True, True) == (bool(reaches.all()), bool(below.all()))


@pytest.mark.parametrize("G", [2, 3, 8, 33, 256, 4096])
def test_fidelity_rises_with_min_p_one_minus_p_at_fixed_g(G: int) -> None:
    # The algorithm's premise: φ(G, ·) is symmetric about ½ and rises on (0, ½].
    q = np.concatenate([np.geomspace(1e-7, 0.5, 1500), np.linspace(0.45, 0.5, 300)])
    q = np.sort(1 - (1 - q))  # values whose mirror 1 − q is exact
    phi = kernels.fidelity(q, G)
    assert (np.diff(phi) >= -1e-14).all()
    assert np.allclose(phi, kernels.fidelity(1 - q, G), rtol=1e-12, atol=0)


def test_min_g_is_respected() -> None:
    assert [10.0, 42.0] == group_sizes([0.5, 0.05], 0.9, min_G=10).tolist()


def test_bessel_answer_is_minimal_for_the_bessel_scaled_fidelity() -> None:
    (G,) = group_sizes([0.5], 0.9, std="bessel").tolist()
    scaled = [float(kernels.fidelity(0.5, g)) * math.sqrt((g - 1) / g) for g in range(2, 40)]
    assert next(g for g, f in zip(range(2, 40), scaled, strict=True) if f >= 0.9) == G


# --------------------------------------------------------------------------------------------- options


@pytest.mark.parametrize(("target", "expected"), [(0.9, 10.0), (0.95, 20.0), (0.99, 100.0)])
def test_drgrpo_needs_one_over_epsilon_at_every_p(target: float, expected: float) -> None:
    assert [expected, expected, expected] == group_sizes(
        [0.5, 0.05, 0.999], target, objective="drgrpo"
    ).tolist()


def test_max_silent_takes_the_larger_of_the_two_group_sizes() -> None:
    def silent_size(p: float, s: float) -> int:
        return next(G for G in range(2, 10_000) if p**G + (1 - p) ** G <= s)

    # p = 0.05: fidelity needs 42, silent ≤ 1% needs more; p = 0.5: fidelity needs 7, silent ≤ 1% needs 8.
    expected = [max(42, silent_size(0.05, 0.01)), max(7, silent_size(0.5, 0.01))]
    assert expected == group_sizes([0.05, 0.5], 0.9, max_silent=0.01).tolist()


def test_prompts_beyond_max_g_are_unreachable() -> None:
    assert [22.0, None] == [None if math.isnan(g) else g for g in group_sizes([0.1, 0.05], 0.9, max_G=40)]


def test_always_and_never_solved_prompts_are_unreachable() -> None:
    assert [True, True] == [math.isnan(g) for g in group_sizes([0.0, 1.0], 0.9)]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--fidelity", "0"], "--fidelity"),
        (["--fidelity", "1"], "--fidelity"),
        (["--fidelity", "1.5"], "--fidelity"),
        (["--min-G", "0"], "--min-G"),
        (["--min-G", "50", "--max-G", "40"], "--max-G"),
        (["--method", "ppo"], "--method"),
        (["--std", "sample"], "--std"),
        (["--method", "drgrpo", "--std", "bessel"], "--std"),
        (["--max-silent", "0"], "--max-silent"),
    ],
)
def test_bad_options_are_usage_errors_naming_the_option(args: list[str], option: str) -> None:
    result = invoke("groupsize", BIGMATH, *args, "--format", "csv")
    assert 2 == result.exit_code
    assert option in result.stderr
    assert "Traceback" not in result.stderr


def test_library_options_raise_usage_error() -> None:
    with pytest.raises(UsageError, match="--fidelity"):
        GroupSizeOptions(target=1.0)


# --------------------------------------------------------------------------------------------- summary


def test_summary_definitions_on_a_weighted_hand_example() -> None:
    # Exact G at φ* = 0.9: 7, 9, 22, 42 with weights 5, 3, 1, 1; CDF 0.5, 0.8, 0.9, 1.0; plus 2 unreachable.
    hist = hist_of([0.5, 0.3, 0.1, 0.05, 0.0, 1.0], [5.0, 3.0, 1.0, 1.0, 1.0, 1.0])
    row = groupsize_summary(hist, (), GroupSizeOptions(0.9), bins=None).row(0, named=True)
    expected = {
        "segment": "all",
        "p_lo": 0.0,
        "p_hi": 1.0,
        "prompts": 12.0,
        "unreachable": 2.0,
        "not_identified": 0,
        "g_min": 7,
        "g_median": 7,
        "g_p90": 22,
        "g_max": 42,
        "mean_rollouts_schedule": (5 * 7 + 3 * 9 + 22 + 42) / 10,
        "uniform_g_needed": 42,
        "savings": 42 / ((5 * 7 + 3 * 9 + 22 + 42) / 10),
        "share_at_target_uniform": 0.5,
    }
    assert expected == {k: pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for k, v in row.items()}


@pytest.mark.parametrize(
    ("weights", "median", "p90"),
    [
        ([1.0, 1.0, 1.0, 1.0], 9, 42),  # CDF 0.25, 0.5, 0.75, 1: the median is reached exactly at 9
        ([0.1, 0.1, 0.1, 0.7], 42, 42),
        ([0.3, 0.2, 0.4, 0.1], 9, 22),  # CDF 0.3, 0.5, 0.9, 1 (in float, 0.3 + 0.2 + 0.4 < 0.9)
    ],
)
def test_percentiles_are_the_smallest_g_whose_weighted_cdf_reaches_q(
    weights: list[float], median: int, p90: int
) -> None:
    hist = hist_of([0.5, 0.3, 0.1, 0.05], weights)
    row = groupsize_summary(hist, (), GroupSizeOptions(0.9), bins=None).row(0, named=True)
    assert median == row["g_median"]
    assert p90 == row["g_p90"]


def test_share_at_target_uniform_below_min_g_uses_the_fidelity_at_that_g() -> None:
    # φ(8, 0.5) = 0.9278 ≥ 0.9 although --min-G 10 assigns G = 10; φ(8, 0.3) < 0.9.
    hist = hist_of([0.5, 0.3])
    row = groupsize_summary(hist, (), GroupSizeOptions(0.9, min_size=10), bins=None).row(0, named=True)
    assert 10 == row["g_min"]
    assert 0.5 == row["share_at_target_uniform"]


def test_summary_with_no_reachable_prompt_has_nulls() -> None:
    row = groupsize_summary(hist_of([0.0, 1.0]), (), GroupSizeOptions(0.9), bins=None).row(0, named=True)
    assert 2.0 == row["unreachable"]
    assert row["g_median"] is None
    assert row["savings"] is None
    assert row["share_at_target_uniform"] is None


def test_summary_rows_are_all_then_every_bin() -> None:
    out = csv_of(invoke("groupsize", BIGMATH, "--bins", "4", "--format", "csv"))
    assert ["all"] + ["bin"] * 4 == out["segment"].to_list()
    assert [0.0, 0.0, 0.25, 0.5, 0.75] == out["p_lo"].to_list()
    assert (*COLUMNS, "estimator") == tuple(out.columns)


def test_each_summary_row_names_its_estimator() -> None:
    plain = csv_of(invoke("groupsize", BIGMATH, "--bins", "2", "--estimator", "plugin", "--format", "csv"))
    prior = csv_of(invoke("groupsize", BIGMATH, "--bins", "2", "--prior", "beta", "--format", "csv"))
    assert ["plug-in"] * 3 == plain["estimator"].to_list()
    assert ["prior beta"] * 3 == prior["estimator"].to_list()


def test_each_summary_row_names_what_sized_its_prompts_under_the_rule() -> None:
    # Big-Math logs 64 answers: the middle bins' sizes are all within 64; the edges hold p̂ ∈ {0, 1}.
    out = csv_of(invoke("groupsize", BIGMATH, "--bins", "4", "--format", "csv"))
    assert [
        "plug-in + prior npmle",
        "plug-in + prior npmle",
        "plug-in",
        "plug-in",
        "plug-in + prior npmle",
    ] == (out["estimator"].to_list())


def test_bins_zero_gives_the_overall_row_only() -> None:
    assert ["all"] == csv_of(invoke("groupsize", BIGMATH, "--bins", "0", "--format", "csv"))[
        "segment"
    ].to_list()


def test_bin_prompts_add_up_to_the_overall_row() -> None:
    out = csv_of(invoke("groupsize", BIGMATH, "--format", "csv"))
    bins = out.filter(pl.col("segment") == "bin")
    assert out["prompts"][0] == bins["prompts"].sum()
    assert out["unreachable"][0] == bins["unreachable"].sum()


def test_bigmath_unreachable_share_is_the_papers_always_silent_share() -> None:
    args = ("--bins", "0", "--estimator", "plugin", "--format", "csv")
    row = csv_of(invoke("groupsize", BIGMATH, *args)).row(0, named=True)
    assert 215_608 == row["prompts"]
    assert 0.1118 == round(row["unreachable"] / row["prompts"], 4)


def test_weighted_histogram_gives_byte_identical_output() -> None:
    args = ("--fidelity", "0.95", "--law", "--format", "csv")
    expanded = invoke("groupsize", BIGMATH, *args)
    weighted = invoke("groupsize", BIGMATH_COUNTS, "--weight-col", "count", *args)
    assert 0 == weighted.exit_code
    assert expanded.stdout == weighted.stdout


def test_law_adds_percentile_columns_to_the_summary(paper_csv: Path) -> None:
    out = csv_of(invoke("groupsize", paper_csv, "--law", "--bins", "0", "--format", "csv"))
    # Law values 5, 6, 6, 14, 14, 27, 27: median 14, 90th percentile 27.
    assert [*COLUMNS, "g_median_law", "g_p90_law", "estimator"] == out.columns
    assert 14 == out["g_median_law"][0]
    assert 27 == out["g_p90_law"][0]


def test_by_repeats_the_rows_per_group(tmp_path: Path) -> None:
    path = tmp_path / "by.csv"
    path.write_text("source,pass_rate\na,0.5\na,0.05\nb,0.3\nb,0\n")
    out = csv_of(invoke("groupsize", path, "--by", "source", "--bins", "2", "--format", "csv"))
    alls = out.filter(pl.col("segment") == "all")
    assert ["source", *COLUMNS, "estimator"] == out.columns
    assert ["a", "b"] == alls["source"].to_list()
    assert [42, 9] == alls["g_max"].to_list()
    assert [0.0, 1.0] == alls["unreachable"].to_list()


def test_per_prompt_keeps_input_order_ids_and_by(tmp_path: Path) -> None:
    path = tmp_path / "ids.csv"
    path.write_text("task,source,pass_rate\nx,a,0.05\ny,b,1\nz,a,0.5\n")
    out = csv_of(
        invoke("groupsize", path, "--per-prompt", "--by", "source", "--id-col", "task", "--format", "csv")
    )
    assert ["source", *PER_PROMPT] == out.columns
    assert ["x", "y", "z"] == out["id"].to_list()
    assert [42, None, 7] == out["group_size"].to_list()
    assert [True, False, True] == out["reachable"].to_list()


def test_per_prompt_jsonl_gives_null_for_unreachable(paper_csv: Path, tmp_path: Path) -> None:
    path = tmp_path / "two.csv"
    path.write_text("pass_rate\n0\n0.5\n")
    result = invoke("groupsize", path, "--per-prompt", "--format", "jsonl")
    rows = pl.read_ndjson(io.StringIO(result.stdout))
    assert [None, 7] == rows["group_size"].to_list()


def test_table_view_leads_with_the_headline() -> None:
    result = invoke("groupsize", BIGMATH, "--estimator", "plugin", "--format", "table")
    assert 0 == result.exit_code
    first = headline(result.stdout)
    assert first.startswith("To reach 90% fidelity: median G = ")
    assert "11.2% of prompts are unreachable (always or never solved)" in first


def test_headline_names_prompts_beyond_max_g() -> None:
    result = invoke("groupsize", BIGMATH, "--max-G", "50", "--format", "table")
    assert "need G > 50" in headline(result.stdout)


# ------------------------------------------------------------------------------- the rule of each cell


@pytest.fixture
def fifty_samples(tmp_path: Path) -> Path:
    """Counts of n = 50: one prompt per k, and 40 more at k = 25 (p̂ = ½ needs G = 7 at φ* = 0.9)."""
    path = tmp_path / "fifty.csv"
    rows = [f"p{k:02d},{k},50" for k in range(51)] + [f"p25-{i:02d},25,50" for i in range(40)]
    path.write_text("prompt_id,k,n\n" + "\n".join(rows) + "\n")
    return path


def sized(path: Path, *args: str) -> pl.DataFrame:
    out = invoke("groupsize", path, "--k-col", "k", "--n-col", "n", "--id-col", "prompt_id", "--per-prompt",
                 "--format", "csv", *args)  # fmt: skip
    assert 0 == out.exit_code, out.stderr
    return csv_of(out).with_columns(pl.col("id").str.slice(1, 2).cast(pl.Int64).alias("k"))


def npmle_sizes(k: list[int], min_G: int = 2) -> list[float]:
    """The NPMLE prior's group sizes at φ* = 0.9 for these counts of 50, from the prior layer."""
    from sigmatool.prior import fit_prior, posterior_group_size

    ks = np.array([*range(51), *[25] * 40])
    prior = fit_prior(ks, np.full(ks.size, 50), np.ones(ks.size), kind="npmle")
    return posterior_group_size(prior, np.array(k), 50, 0.9, min_G=min_G).tolist()


def test_prior_none_sizes_within_n_at_p_hat_and_leaves_larger_sizes_not_identified(
    fifty_samples: Path,
) -> None:
    out = sized(fifty_samples, "--prior", "none")
    beyond = [k for k in range(51) if not 0 < k < 50 or group_sizes([k / 50], 0.9)[0] > 50]
    assert [1, 2, 48, 49] == [k for k in beyond if 0 < k < 50]  # p̂ = 0.02 needs G = 103 at p̂
    assert 7 == out.filter(pl.col("k") == 25)["group_size"].unique().item()
    assert [None] * len(beyond) == out.filter(pl.col("k").is_in(beyond))["group_size"].to_list()
    assert 50 >= out["group_size"].max()  # type: ignore[operator]


def test_prior_none_counts_the_prompts_beyond_n_as_not_identified(fifty_samples: Path) -> None:
    args = ("--k-col", "k", "--n-col", "n", "--prior", "none", "--bins", "0", "--format", "csv")
    row = csv_of(invoke("groupsize", fifty_samples, *args)).row(0, named=True)
    assert 6 == row["not_identified"]  # k = 0, 1, 2, 48, 49, 50
    assert 0 == row["unreachable"]
    assert "plug-in + not identified" == row["estimator"]


def test_default_sizes_within_n_at_p_hat_and_beyond_n_under_the_npmle_prior(fifty_samples: Path) -> None:
    out = sized(fifty_samples)
    assert 7 == out.filter(pl.col("k") == 25)["group_size"].unique().item()
    assert npmle_sizes([1, 49], min_G=51) == out.filter(pl.col("k").is_in([1, 49]))["group_size"].to_list()


def test_default_gives_no_size_beyond_n_that_the_prior_does_not_give(fifty_samples: Path) -> None:
    out = sized(fifty_samples).filter(pl.col("id").str.len_chars() == 3)
    beyond = out.filter(pl.col("group_size") > 50).sort("k")
    assert npmle_sizes(beyond["k"].to_list(), min_G=51) == beyond["group_size"].cast(pl.Float64).to_list()


def test_prior_npmle_sizes_every_prompt_under_the_prior(fifty_samples: Path) -> None:
    out = sized(fifty_samples, "--prior", "npmle").filter(pl.col("id").str.len_chars() == 3).sort("k")
    expected = npmle_sizes(list(range(51)))
    assert [None if math.isnan(g) else int(g) for g in expected] == out["group_size"].to_list()


def test_estimator_plugin_sizes_every_prompt_at_p_hat(fifty_samples: Path) -> None:
    out = sized(fifty_samples, "--estimator", "plugin").filter(pl.col("k") == 1)
    assert 103 == out["group_size"].item()
    assert 103 == group_sizes([0.02], 0.9)[0]


def test_estimator_unbiased_is_refused_by_groupsize(fifty_samples: Path) -> None:
    out = invoke("groupsize", fifty_samples, "--k-col", "k", "--n-col", "n", "--estimator", "unbiased")
    assert 2 == out.exit_code
    assert "--estimator unbiased" in out.stderr


def test_few_prompts_identify_no_prior_and_their_sizes_beyond_n_are_not_identified(tmp_path: Path) -> None:
    path = tmp_path / "few.csv"
    path.write_text("k,n\n1,4\n0,4\n4,4\n")  # p̂ = ¼ needs G = 12 > 4 at φ* = 0.9; 0 and 1 need more
    out = invoke("groupsize", path, "--k-col", "k", "--n-col", "n", "--bins", "0", "--format", "table")
    assert 0 == out.exit_code
    assert "no prompt has a size the data identify" in headline(out.stdout)
    assert "100.0% would need G beyond their n samples" in headline(out.stdout)
    assert "fewer than the 30 a prior needs" in out.stderr

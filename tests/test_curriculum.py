"""``sigmatool curriculum``: each schedule's per-step figures against an independent computation on the
bundled Big-Math sample, the exported order against its prediction, each option's reach, bad input.

The independent side works per prompt (the program works per distinct value), finds the inclusion
probabilities π_i = min(1, c w_i), Σ π_i = B by bisection on c (the program by sorting), and reads the
sample's rates as k of 64 with the unbiased silent probability ``[C(k, G) + C(64 − k, G)] / C(64, G)``.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy import special, stats

from tests.conftest import BIGMATH, TOY, csv_of, headline, invoke, one_error_line, run_cli, run_in

FloatArray = NDArray[np.float64]
N = 64  # the sample's llama8b_solve_rate is k / 64


@cache
def _counts() -> FloatArray:
    rates = pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_numpy()
    return np.asarray(np.round(rates * N), dtype=np.float64)


def _silent(k: FloatArray, G: int) -> FloatArray:
    return np.asarray((special.comb(k, G) + special.comb(N - k, G)) / special.comb(N, G))


def _pi(w: FloatArray, B: int) -> FloatArray:
    """min(1, c w) summing to B, c found by bisection."""
    lo, hi = 0.0, 1.0
    while np.minimum(1.0, hi * w).sum() < B:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if np.minimum(1.0, mid * w).sum() < B else (lo, mid)
    return np.minimum(1.0, hi * w)


def _expected(w: FloatArray, f: FloatArray, B: int) -> float:
    pi = _pi(w, B)
    return float((pi * f).sum() / pi.sum())


def _run(*args: object) -> pl.DataFrame:
    return csv_of(invoke("curriculum", BIGMATH, "--format", "csv", *args))


@pytest.mark.parametrize("step", [0, 4, 9])
def test_gaussian_steps_are_the_weighted_silent_probabilities(step: int) -> None:
    k = _counts()
    out = _run("--steps", 10, "--mean", "0.9:0.2", "--width", "0.1", "--batch-size", 1000)
    mu = 0.9 + (0.2 - 0.9) * step / 9
    w = np.exp(-((k / N - mu) ** 2) / (2 * 0.1**2))
    row = out.filter(pl.col("step") == step).row(0, named=True)
    assert row["mean"] == pytest.approx(mu, abs=1e-12)
    assert row["silent_rate"] == pytest.approx(_expected(w, _silent(k, 8), 1000), rel=1e-9)
    assert row["pass_rate"] == pytest.approx(_expected(w, k / N, 1000), rel=1e-9)


def test_pools_weigh_each_pool_by_its_weight_and_uniformly_within() -> None:
    k = _counts()
    p = k / N
    out = _run("--steps", 1, "--schedule", "pools", "--pools", "0-0.2:1,0.2-0.8:3,0.5-1:2", "-G", 4)
    first = (p >= 0) & (p <= 0.2)
    second = ~first & (p >= 0.2) & (p <= 0.8)
    third = ~first & ~second & (p >= 0.5)
    w = first * 1.0 / first.sum() + second * 3.0 / second.sum() + third * 2.0 / third.sum()
    assert out["silent_rate"][0] == pytest.approx(_expected(w, _silent(k, 4), 512), rel=1e-9)


@pytest.mark.parametrize("weight", ["variance", "hardness"])
def test_buckets_give_each_quantile_bucket_an_equal_share(weight: str) -> None:
    k = _counts()
    p = k / N
    out = _run("--steps", 1, "--schedule", "buckets", "--buckets", 4, "--bucket-weight", weight)
    below = np.searchsorted(np.sort(p), p, side="left")  # prompts with a smaller p
    tied = np.searchsorted(np.sort(p), p, side="right") - below
    bucket = np.minimum(((below + tied / 2) / p.size * 4).astype(int), 3)
    inner = 4 * p * (1 - p) if weight == "variance" else 1 - p
    w = np.zeros_like(p)
    for b in range(4):
        at = bucket == b
        w[at] = inner[at] / inner[at].sum()
    assert out["silent_rate"][0] == pytest.approx(_expected(w, _silent(k, 8), 512), rel=1e-9)


def test_a_band_draws_uniformly_inside_it() -> None:
    k = _counts()
    p = k / N
    out = _run("--steps", 1, "--schedule", "band", "--band", "0.25,0.75", "-G", 16)
    inside = (p >= 0.25) & (p <= 0.75)
    assert out["silent_rate"][0] == pytest.approx(float(_silent(k[inside], 16).mean()), rel=1e-9)


def test_easy_first_steps_take_the_easiest_prompts_in_turn() -> None:
    k = _counts()
    order = np.argsort(-k, kind="stable")
    out = _run("--steps", 30, "--schedule", "easy-first", "--batch-size", 8000, "--every", 7)
    for row in out.iter_rows(named=True):
        t = row["step"]
        taken = order[np.arange(t * 8000, (t + 1) * 8000) % k.size]
        assert row["silent_rate"] == pytest.approx(float(_silent(k[taken], 8).mean()), rel=1e-9)
        seen = min(max((t + 1) * 8000 - k.size, 0), 8000) / 8000
        assert row["repeat_rate"] == pytest.approx(seen)


def test_uniform_sampling_is_the_headline_s_baseline() -> None:
    k = _counts()
    result = invoke("curriculum", BIGMATH, "--steps", 5, "--format", "table")
    assert result.exit_code == 0, result.stderr
    assert f"{_silent(k, 8).mean():.1%} with uniform sampling" in headline(result.stdout)


def test_dropping_solved_and_unsolved_prompts_leaves_them_out() -> None:
    k = _counts()
    out = _run("--steps", 1, "--schedule", "band", "--band", "0,1", "--drop-solved", "--drop-unsolved")
    kept = (k > 0) & (k < N)
    assert out["silent_rate"][0] == pytest.approx(float(_silent(k[kept], 8).mean()), rel=1e-9)


def test_groups_are_blended_in_proportion_to_their_size_or_as_given() -> None:
    toy = pl.read_csv(TOY)
    p, src = toy["pass_rate"].to_numpy(), toy["source"].to_numpy()

    def silent16(G: int = 4) -> FloatArray:  # the toy's rates are read as rates: the definition is exact
        return np.asarray(p**G + (1 - p) ** G)

    base = ["--schedule", "band", "--band", "0,1", "--batch-size", 4, "--steps", 1, "--by", "source"]
    blended = csv_of(
        invoke("curriculum", TOY, *base, "-G", 4, "--blend", "algebra=3,geometry=1", "-f", "csv")
    )
    w = np.where(src == "algebra", 3 / (src == "algebra").sum(), 1 / (src == "geometry").sum())
    assert blended["silent_rate"][0] == pytest.approx(_expected(w, silent16(), 4), rel=1e-9)
    plain = csv_of(invoke("curriculum", TOY, *base, "-G", 4, "-f", "csv"))
    assert plain["silent_rate"][0] == pytest.approx(float(silent16().mean()), rel=1e-9)


def test_the_exported_order_draws_what_the_table_predicts(tmp_path: Path) -> None:
    k = _counts()
    path = tmp_path / "order.parquet"
    T, B = 40, 2000
    out = _run("--steps", T, "--batch-size", B, "--mean", "0.7:0.3", "--export-order", path, "--seed", 3)
    order = pl.read_parquet(path)
    assert (T * B, T) == (order.height, order["step"].n_unique())
    assert order.group_by("step").agg(pl.col("row").n_unique())["row"].min() == B  # distinct within a step
    source = pl.read_parquet(BIGMATH)
    assert order["llama8b_solve_rate"].to_list() == source["llama8b_solve_rate"][order["row"]].to_list()
    # Each drawn prompt's group of 8 is drawn from its 64 logged answers, as the unbiased estimator has it.
    drawn = k[order["row"].to_numpy()]
    right = stats.hypergeom.rvs(N, drawn.astype(int), 8, random_state=np.random.default_rng(0))
    silent = float(((right == 0) | (right == 8)).mean())
    predicted = float(out["silent_rate"].mean())
    assert abs(silent - predicted) < 5 * math.sqrt(predicted * (1 - predicted) / (T * B))


def test_the_export_draws_each_prompt_with_its_inclusion_probability(tmp_path: Path) -> None:
    path = tmp_path / "order.csv"
    T, B = 400, 5
    csv_of(invoke("curriculum", TOY, "--schedule", "pools", "--pools", "0-0.3:1,0.3-1:3", "--batch-size", B,
                  "--steps", T, "--export-order", path, "--format", "csv"))  # fmt: skip
    weights = csv_of(invoke("curriculum", TOY, "--schedule", "pools", "--pools", "0-0.3:1,0.3-1:3",
                            "--batch-size", B, "--per-prompt", "--format", "csv"))  # fmt: skip
    drawn = pl.read_csv(path)["row"].value_counts()
    freq = np.zeros(weights.height)
    freq[drawn["row"].to_numpy()] = drawn["count"].to_numpy() / T
    pi = weights["weight"].to_numpy() * B
    assert np.abs(freq - pi).max() < 5 * np.sqrt(pi * (1 - pi) / T).max() + 1e-9


def test_per_prompt_weights_sum_to_one_and_name_each_pool() -> None:
    out = csv_of(invoke("curriculum", TOY, "--schedule", "pools", "--pools", "0-0.3:1,0.3-0.9:3",
                        "--batch-size", 4, "--per-prompt", "--format", "csv"))  # fmt: skip
    assert out["weight"].sum() == pytest.approx(1.0)
    assert out.columns[:5] == pl.read_csv(TOY).columns
    assert set(out["pool"].drop_nulls().to_list()) == {"0-0.3", "0.3-0.9"}
    assert out.filter(pl.col("pool").is_null())["weight"].sum() == 0.0


# Reach: each option changes what it should.
def test_every_thins_the_rows_and_keeps_the_last() -> None:
    assert [0, 4, 8, 9] == _run("--steps", 10, "--every", 4)["step"].to_list()


def test_epochs_set_the_run_length_from_the_prompts_drawn() -> None:
    out = _run("--schedule", "band", "--band", "0,1", "--epochs", 1, "--batch-size", 100_000)
    assert out["step"].max() == math.ceil(215_608 / 100_000) - 1


@pytest.mark.parametrize(
    ("flag", "a", "b"), [("--width", 0.05, 0.3), ("-G", 4, 16), ("--mean", "0.5:0.5", "0.9")]
)
def test_each_gaussian_setting_moves_the_silent_share(flag: str, a: object, b: object) -> None:
    assert _run("--steps", 2, flag, a)["silent_rate"][0] != _run("--steps", 2, flag, b)["silent_rate"][0]


def test_the_seed_changes_the_draws_and_repeats_them(tmp_path: Path) -> None:
    paths = [tmp_path / f"{i}.csv" for i in range(3)]
    for path, seed in zip(paths, (1, 1, 2), strict=True):
        _run("--steps", 2, "--export-order", path, "--seed", seed)
    texts = [path.read_text() for path in paths]
    assert texts[0] == texts[1]
    assert texts[0] != texts[2]


def test_a_prior_reads_the_pass_rates_that_weigh_prompts() -> None:
    toy = ("--k-col", "k", "--n-col", "n", "--schedule", "band", "--band", "0.05,0.95", "--batch-size", 4)
    toy = (*toy, "--steps", 1, "-f", "csv")
    plain = csv_of(invoke("curriculum", TOY, *toy))
    prior = csv_of(invoke("curriculum", TOY, *toy, "--prior", "1,1"))
    assert plain["pass_rate"][0] != prior["pass_rate"][0]


def test_a_pool_that_runs_dry_is_named_in_the_headline() -> None:
    result = invoke("curriculum", TOY, "--schedule", "pools", "--pools", "0-0.3:1,0.3-1:1", "--batch-size", 4,
                    "--steps", 10, "--format", "table")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    # Half of each step's 4 prompts come from the pool's 6: steps 0, 1 and 2 use them all up.
    assert "runs out of 0-0.3 (6 prompts) at step 3" in headline(result.stdout)


def test_the_plot_draws_silent_share_and_pass_rate(tmp_path: Path) -> None:
    result = invoke(
        "curriculum", BIGMATH, "--steps", 20, "--plot", tmp_path / "c.png", "-o", tmp_path / "c.csv"
    )
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "c.png").stat().st_size > 10_000


# Bad input: one line, exit 2 (a usage error), through a real process for each class.
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--schedule", "pools", "--pools", "0-1.2:1"], "--pools: HI is a pass rate in [0, 1]"),
        (["--schedule", "pools", "--pools", "0-0.5:0"], "has a weight ≤ 0"),
        (["--schedule", "pools", "--pools", "0.3-0.301:1,0-1:1"], "--pools: 0.3-0.301 holds no prompt"),
        (["--mean", "1.2:0.3"], "--mean: START is a pass rate in [0, 1]"),
        (["--mean", "0.8:-1"], "--mean: END is a pass rate in [0, 1]"),
        (["--width", "0"], "--width: the Gaussian's width S is a number > 0"),
        (["--grader-error", "0.6,0.4"], "FP + FN = 1 ≥ 1"),
        (["--per-prompt"], "change with the step: use --export-order"),
        (["-G", "4,8"], "give one --G"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(args: list[str], said: str) -> None:
    # The first case through a real process, the rest in this one (the same entry point).
    run = run_cli if args[-1] == "0-1.2:1" else run_in
    done = run("curriculum", TOY, *args, "--batch-size", "4")
    assert done.returncode == 2
    assert said in one_error_line(done.stderr)


def test_a_batch_larger_than_the_schedule_s_prompts_is_a_data_error() -> None:
    done = invoke("curriculum", TOY, "--batch-size", 21)
    assert done.exit_code == 1
    assert "fewer than --batch-size 21" in one_error_line(done.stderr)


# Random files and random schedules (`make test-slow`): a documented exit code, never a traceback, and every
# step's figures inside what its prompts allow.
RATES = st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=40)
SCHEDULES = st.sampled_from(
    [
        ["--schedule", "gaussian", "--mean", "0.9:0.1", "--width", "0.2"],
        ["--schedule", "pools", "--pools", "0-0.5:1,0.5-1:2"],
        ["--schedule", "band", "--band", "0.1,0.9"],
        ["--schedule", "buckets", "--buckets", "3", "--bucket-weight", "hardness"],
        ["--schedule", "easy-first"],
    ]
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rates=RATES, schedule=SCHEDULES, batch=st.integers(1, 12), steps=st.integers(1, 6), G=st.integers(1, 9)
)
def test_random_schedules_stay_inside_their_prompts(
    tmp_path: Path, rates: list[float], schedule: list[str], batch: int, steps: int, G: int
) -> None:
    path = tmp_path / "rates.csv"
    pl.DataFrame({"pass_rate": rates}).write_csv(path)
    args = (*schedule, "--batch-size", batch, "--steps", steps, "-G", G, "--drop-solved", "-f", "csv")
    result = invoke("curriculum", path, *args)
    assert result.exit_code in (0, 1, 2), result.stderr
    assert "Traceback" not in result.stderr
    if result.exit_code:
        one_error_line(result.stderr)
        return
    out = csv_of(result)
    p = np.array([x for x in pl.read_csv(path)["pass_rate"].to_list() if x < 1.0])
    silent = p**G + (1 - p) ** G
    assert out["silent_rate"].min() >= silent.min() - 1e-12
    assert out["silent_rate"].max() <= silent.max() + 1e-12
    assert out["pass_rate"].min() >= p.min() - 1e-12
    assert out["effective_prompts"].max() <= p.size + 1e-9
    assert out["repeat_rate"].is_between(0.0, 1.0).all()


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(flag=st.sampled_from(["--pools", "--mean", "--band", "--blend", "--grader-error", "--width"]),
       text=st.text(st.sampled_from("0123456789.,:-=ab "), max_size=12))  # fmt: skip
def test_any_schedule_text_is_taken_or_refused_in_one_line(flag: str, text: str) -> None:
    schedule = {"--pools": "pools", "--band": "band"}.get(flag, "gaussian")
    result = invoke("curriculum", TOY, "--schedule", schedule, flag, text, "--batch-size", 4, "--steps", 2)
    assert result.exit_code in (0, 1, 2), result.stderr
    if result.exit_code:
        one_error_line(result.stderr)


def test_export_order_of_an_input_with_a_row_column_keeps_it_and_names_ours_apart(tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("row,pass_rate\n" + "\n".join(f"{100 + i},{(i % 7) / 8}" for i in range(30)) + "\n")
    path = tmp_path / "order.csv"
    out = invoke("curriculum", source, "--schedule", "band", "--band", "0,1", "--batch-size", 4, "--steps", 3,
                 "-G", 2, "--export-order", path, "--format", "csv")  # fmt: skip
    assert 0 == out.exit_code, out.stderr
    order = pl.read_csv(path)
    assert ["step", "curriculum_row", "row", "pass_rate"] == order.columns
    assert (order["curriculum_row"] + 100).to_list() == order["row"].to_list()  # the input's own, kept


def test_per_prompt_of_an_input_with_a_weight_column_names_ours_apart(tmp_path: Path) -> None:
    source = tmp_path / "weights.csv"
    source.write_text("weight,pass_rate\n" + "\n".join(f"{i},{(i % 7) / 8}" for i in range(30)) + "\n")
    out = invoke("curriculum", source, "--schedule", "band", "--band", "0,1", "--batch-size", 4, "-G", 2,
                 "--per-prompt", "--format", "csv")  # fmt: skip
    assert 0 == out.exit_code, out.stderr
    assert ["weight", "pass_rate", "curriculum_weight"] == csv_of(out).columns

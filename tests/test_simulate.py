"""`sigmatool simulate`: the paper's controlled run (docs/theory.md §6), reproducibility, and the CLI contract."""

from __future__ import annotations

import math
import re
import shlex
from math import comb
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import Result

from sigmatool import run_simulation as simulate
from sigmatool.cli.simulate import simulate_command
from tests.conftest import BIGMATH, BIGMATH_COUNTS, ROOT, TOY, csv_of, invoke

SUMMARY_COLUMNS = [
    "method",
    "silent_r2",
    "start_mean_p",
    "final_mean_p",
    "start_hardest_quartile_mean_p",
    "final_hardest_quartile_mean_p",
    "samples_drawn",
    "samples_vs_grpo",
    "extreme_share_measured",
    "extreme_share_predicted",
]
TRACE_COLUMNS = [
    "step",
    "method",
    "observed_silent",
    "predicted_silent",
    "mean_p",
    "q1_mean_p",
    "q2_mean_p",
    "q3_mean_p",
    "q4_mean_p",
    "samples_drawn",
]
# A small run for the properties that do not need the paper's scale.
SMALL = ("--prompts", "500", "--steps", "20")


def _by_method(summary: pl.DataFrame) -> dict[str, dict[str, float]]:
    return {row["method"]: row for row in summary.iter_rows(named=True)}


@pytest.fixture(scope="module", params=[7, 8], ids=["seed7", "seed8"])
def default_run(request: pytest.FixtureRequest) -> dict[str, dict[str, float]]:
    """The default run (Big-Math start, 6,000 prompts, G = 8, 150 steps) and a second seed."""
    return _by_method(csv_of(invoke("simulate", "--seed", request.param, "--format", "csv")))


@pytest.fixture(scope="module")
def half_and_twentieth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A start of exactly 3,000 prompts at p = 0.5 and 3,000 at p = 0.05 (weights, drawn without replacement)."""
    path = tmp_path_factory.mktemp("start") / "start.csv"
    path.write_text("pass_rate,count\n0.5,3000\n0.05,3000\n0,500\n1,500\n")
    return path


def _trace(*args: object) -> pl.DataFrame:
    return csv_of(invoke("simulate", "--trace", "--format", "csv", *args))


# ------------------------------------------------------------------------------- the paper's figures


def test_default_run_predicts_the_silent_fraction_with_r2_of_at_least_099(
    default_run: dict[str, dict[str, float]],
) -> None:
    assert {"grpo": True, "drgrpo": True, "dapo": True} == {
        m: r["silent_r2"] >= 0.99 for m, r in default_run.items()
    }


def test_default_run_grpo_brings_the_hardest_quartile_to_at_least_097(
    default_run: dict[str, dict[str, float]],
) -> None:
    assert default_run["grpo"]["final_hardest_quartile_mean_p"] >= 0.97


def test_default_run_drgrpo_leaves_the_hardest_quartile_at_088(
    default_run: dict[str, dict[str, float]],
) -> None:
    assert default_run["drgrpo"]["final_hardest_quartile_mean_p"] == pytest.approx(0.88, abs=0.03)


def test_default_run_dapo_draws_35_times_grpos_samples(default_run: dict[str, dict[str, float]]) -> None:
    assert default_run["dapo"]["samples_vs_grpo"] == pytest.approx(3.5, abs=0.15)


def test_default_run_measured_extreme_shares_are_within_half_a_point_of_the_closed_forms(
    default_run: dict[str, dict[str, float]],
) -> None:
    gaps = {
        m: abs(r["extreme_share_measured"] - r["extreme_share_predicted"]) for m, r in default_run.items()
    }
    assert dict.fromkeys(gaps, True) == {m: gap <= 0.005 for m, gap in gaps.items()}


def test_default_run_starts_from_the_same_population_for_every_method(
    default_run: dict[str, dict[str, float]],
) -> None:
    starts = {(r["start_mean_p"], r["start_hardest_quartile_mean_p"]) for r in default_run.values()}
    assert 1 == len(starts)


def test_predicted_extreme_shares_on_a_large_big_math_start_match_the_paper() -> None:
    # docs/theory.md §5: 17.0 % (GRPO) vs 14.3 % (Dr. GRPO) at G = 8 on the simulation's start population.
    args = ("--prompts", "200000", "--steps", "1", "--methods", "grpo,drgrpo", "--format", "csv")
    shares = {
        r["method"]: r["extreme_share_predicted"]
        for r in csv_of(invoke("simulate", *args)).iter_rows(named=True)
    }
    assert shares == {"grpo": pytest.approx(0.170, abs=0.005), "drgrpo": pytest.approx(0.143, abs=0.005)}


# ------------------------------------------------------------------------------- the model, by hand


def _binomial_pmf(G: int, p: float) -> list[float]:
    return [comb(G, k) * p**k * (1 - p) ** (G - k) for k in range(G + 1)]


def _expected_sigma(G: int, p: float) -> float:
    return sum(w * math.sqrt(k * (G - k)) / G for k, w in enumerate(_binomial_pmf(G, p)))


def test_predicted_extreme_shares_are_the_exact_expected_updates(half_and_twentieth: Path) -> None:
    out = csv_of(
        invoke(
            "simulate", "--init", half_and_twentieth, "--weight-col", "count", *SMALL[2:], "--format", "csv"
        )
    )
    shares = {r["method"]: r["extreme_share_predicted"] for r in out.iter_rows(named=True)}
    grpo = _expected_sigma(8, 0.05) / (_expected_sigma(8, 0.05) + _expected_sigma(8, 0.5))
    drgrpo = 0.05 * 0.95 / (0.05 * 0.95 + 0.25)  # E[σ²] = p(1 − p)(1 − 1/G); the factor cancels
    assert shares == {
        "grpo": pytest.approx(grpo, rel=1e-12),
        "drgrpo": pytest.approx(drgrpo, rel=1e-12),
        "dapo": pytest.approx(grpo, rel=1e-12),
    }


def test_start_population_with_weights_is_drawn_without_replacement(half_and_twentieth: Path) -> None:
    args = ("--init", half_and_twentieth, "--weight-col", "count", "--steps", "1", "--methods", "grpo")
    out = csv_of(invoke("simulate", *args, "--format", "csv"))
    # All 6,000 interior prompts are taken: half at 0.05 (the two hardest quartiles), half at 0.5.
    assert 0.275 == pytest.approx(out["start_mean_p"][0], abs=1e-12)
    assert 0.05 == pytest.approx(out["start_hardest_quartile_mean_p"][0], abs=1e-12)


def test_first_step_predicted_silent_fraction_is_all_right_plus_all_wrong(
    half_and_twentieth: Path,
) -> None:
    trace = _trace("--init", half_and_twentieth, "--weight-col", "count", "--steps", "1", "--methods", "grpo")
    expected = (0.5**8 + 0.5**8 + 0.05**8 + 0.95**8) / 2
    assert expected == pytest.approx(trace["predicted_silent"][0], rel=1e-12)


@pytest.mark.parametrize("method", ["grpo", "drgrpo", "dapo"])
def test_one_step_from_one_half_moves_the_mean_p_by_the_expected_update(tmp_path: Path, method: str) -> None:
    # θ ← θ + lr · gain with gain = σ, σ² or (DAPO, cap T) the σ of the first non-silent of T draws.
    start = tmp_path / "half.csv"
    start.write_text("pass_rate,count\n0.5,40000\n")
    G, lr, T = 8, 0.5, 4
    pmf = _binomial_pmf(G, 0.5)
    silent = pmf[0] + pmf[G]
    sigma = [math.sqrt(k * (G - k)) / G for k in range(G + 1)]
    gain = {"grpo": sigma, "drgrpo": [s * s for s in sigma], "dapo": sigma}[method]
    # DAPO: the first non-silent draw has the binomial law given k ∉ {0, G}; with prob. P^T none is.
    weights = [w * (1 - silent**T) / (1 - silent) if 0 < k < G else 0.0 for k, w in enumerate(pmf)]
    if method != "dapo":
        weights = pmf
    expected_p = sum(w / (1 + math.exp(-lr * g)) for w, g in zip(weights, gain, strict=True))
    if method == "dapo":
        expected_p += silent**T * 0.5
    trace = _trace(
        "--init", start, "--weight-col", "count", "--prompts", "40000", "--steps", "1", "--methods", method
    )
    assert expected_p == pytest.approx(trace["mean_p"][0], abs=3e-4)


def test_dapo_samples_drawn_in_a_step_follow_the_capped_expected_draws(tmp_path: Path) -> None:
    start = tmp_path / "tenth.csv"
    start.write_text("pass_rate,count\n0.1,40000\n")
    silent = 0.1**8 + 0.9**8
    draws = sum(silent**t for t in range(4))  # 1 + P + P² + P³
    trace = _trace("--init", start, "--weight-col", "count", "--prompts", "40000", "--steps", "1")
    samples = dict(zip(trace["method"], trace["samples_drawn"], strict=True))
    assert 8 * 40000 == samples["grpo"]
    assert 8 * 40000 == samples["drgrpo"]
    assert 8 * 40000 * draws == pytest.approx(samples["dapo"], rel=0.01)


# ------------------------------------------------------------------------------- reproducibility


def test_same_seed_writes_byte_identical_trace_files(tmp_path: Path) -> None:
    paths = [tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "a.csv", tmp_path / "b.csv"]
    for path in paths:
        assert invoke("simulate", *SMALL, "--trace", "-o", path).exit_code == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[2].read_bytes() == paths[3].read_bytes()


def test_different_seeds_give_different_traces() -> None:
    assert not _trace(*SMALL, "--seed", "1").equals(_trace(*SMALL, "--seed", "2"))


def test_a_method_run_alone_reproduces_its_rows_of_the_full_run() -> None:
    full = _trace(*SMALL).filter(pl.col("method") == "dapo")
    assert full.equals(_trace(*SMALL, "--methods", "dapo"))


def test_library_function_returns_the_cli_trace_and_summary() -> None:
    trace, summary = simulate(prompts=500, steps=20)
    assert trace.equals(_trace(*SMALL))
    assert SUMMARY_COLUMNS == summary.columns


# ------------------------------------------------------------------------------- output contract


def test_trace_has_one_row_per_step_and_method_in_the_documented_columns() -> None:
    trace = _trace(*SMALL)
    steps = [step for step in range(1, 21) for _ in range(3)]
    methods = ["grpo", "drgrpo", "dapo"] * 20
    assert TRACE_COLUMNS == trace.columns
    assert steps == trace["step"].to_list()
    assert methods == trace["method"].to_list()


def test_summary_columns_are_in_the_documented_order() -> None:
    assert SUMMARY_COLUMNS == csv_of(invoke("simulate", *SMALL, "--format", "csv")).columns


def test_summary_agrees_with_the_trace() -> None:
    trace = _trace(*SMALL)
    summary = _by_method(csv_of(invoke("simulate", *SMALL, "--format", "csv")))
    grpo_samples = trace.filter(pl.col("method") == "grpo")["samples_drawn"].sum()
    for method, row in summary.items():
        part = trace.filter(pl.col("method") == method)
        observed, predicted = part["observed_silent"].to_numpy(), part["predicted_silent"].to_numpy()
        r2 = 1 - ((observed - predicted) ** 2).sum() / ((observed - observed.mean()) ** 2).sum()
        assert r2 == pytest.approx(row["silent_r2"], rel=1e-9), method
        assert part["mean_p"][-1] == pytest.approx(row["final_mean_p"], rel=1e-9), method
        assert part["q1_mean_p"][-1] == pytest.approx(row["final_hardest_quartile_mean_p"], rel=1e-9), method
        share = part["samples_drawn"].sum() / grpo_samples
        assert share == pytest.approx(row["samples_vs_grpo"], rel=1e-9), method


def test_methods_come_in_canonical_order_whatever_the_order_given() -> None:
    out = csv_of(invoke("simulate", *SMALL, "--methods", "dapo, grpo", "--format", "csv"))
    assert ["grpo", "dapo"] == out["method"].to_list()


def test_table_view_leads_with_the_headline() -> None:
    result = invoke("simulate", *SMALL, "--format", "table")
    assert result.exit_code == 0
    assert re.match(
        r"After 20 steps at G=8 on 500 prompts: hardest quartile p=0\.\d\d \(GRPO\), 0\.\d\d \(Dr\. GRPO\)",
        result.stdout,
    )


# ------------------------------------------------------------------------------- start populations


def test_counts_with_weights_give_the_same_trace_as_the_per_prompt_parquet() -> None:
    # A weight w stands for w prompts: the histogram CSV and the per-prompt file are the same population.
    from_parquet = _trace(*SMALL, "--init", BIGMATH)
    from_counts = _trace(
        *SMALL, "--init", BIGMATH_COUNTS, "--k-col", "k", "--n-col", "n", "--weight-col", "count"
    )
    assert from_parquet.equals(from_counts)


def test_default_start_is_the_bundled_big_math_sample_not_stdin() -> None:
    piped = invoke("simulate", *SMALL, "--trace", "--format", "csv", input="pass_rate\n0.5\n")
    assert piped.stdout == _trace(*SMALL, "--init", BIGMATH).write_csv()


def test_too_few_prompts_are_drawn_with_replacement_and_say_so() -> None:
    result = invoke("simulate", "--init", TOY, "--prompts", "100", "--steps", "5", "--format", "csv")
    assert 0 == result.exit_code
    assert "with replacement" in result.stderr


def test_beta_mix_start_is_the_symmetric_fallback_mixture() -> None:
    out = csv_of(
        invoke("simulate", "--init", "beta-mix", "--steps", "1", "--methods", "grpo", "--format", "csv")
    )
    # Equal mixture of Beta(0.7, 1.6) and Beta(1.6, 0.7), clipped symmetrically: mean ½.
    assert 0.5 == pytest.approx(out["start_mean_p"][0], abs=0.015)


def test_beta_mix_takes_no_input_options() -> None:
    result = invoke("simulate", "--init", "beta-mix", "--col", "pass_rate")
    assert 2 == result.exit_code
    assert "beta-mix" in result.stderr


# ------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--prompts", "0"),
        ("--G", "1"),
        ("--lr", "-1"),
        ("--lr", "0"),
        ("--steps", "0"),
        ("--dapo-cap", "0"),
        ("--methods", "ppo"),
        ("--methods", ","),
    ],
)
def test_impossible_options_are_usage_errors_naming_the_option(option: str, value: str) -> None:
    result = invoke("simulate", option, value)
    assert 2 == result.exit_code
    assert option in result.stderr
    assert "Traceback" not in result.stderr


def test_data_without_interior_pass_rates_is_a_data_error(write_csv) -> None:  # type: ignore[no-untyped-def]
    result: Result = invoke("simulate", "--init", write_csv("pass_rate\n0\n1\n1\n0\n"))
    assert 1 == result.exit_code
    assert "no interior pass rates" in result.stderr


def test_the_help_example_writes_the_trace_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    example = re.search(r"^\s+sigmatool (simulate .+)$", simulate_command.__doc__ or "", flags=re.MULTILINE)
    assert example is not None
    monkeypatch.chdir(tmp_path)
    args = shlex.split(example.group(1).replace("sample_data/", f"{ROOT}/sample_data/"))
    assert invoke(*args, "--steps", "2").exit_code == 0
    written = tmp_path / args[args.index("-o") + 1]
    read = pl.read_parquet if written.suffix == ".parquet" else pl.read_csv
    assert TRACE_COLUMNS == read(written).columns


def test_docs_usage_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "docs" / "simulate.md").read_text()
    commands = re.findall(r"^(sigmatool simulate[^#\n]*)", text, flags=re.MULTILINE)
    assert len(commands) >= 4
    monkeypatch.chdir(tmp_path)
    for command in commands:
        args = shlex.split(command.replace("sample_data/", f"{ROOT}/sample_data/"))[1:]
        # The full-length runs are checked above; here each command only has to run (a short run).
        assert invoke(*args, "--steps", "2", "--prompts", "500").exit_code == 0, command


def test_library_takes_pass_rates_directly_and_draws_only_interior_ones() -> None:
    trace, summary = simulate(np.array([0.0, 0.3, 1.0]), prompts=5, steps=2, methods="grpo")
    assert 2 == trace.height
    assert 0.3 == pytest.approx(summary["start_mean_p"][0], rel=1e-12)

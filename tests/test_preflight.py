"""``preflight``: the exact figures against verl's loop enumerated on tiny datasets and simulated on Big-Math."""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool import preflight
from sigmatool.estimators import Valuation
from sigmatool.trainers.loops import from_config, resolved
from sigmatool.trainers.settings import LoopSettings, overrides, read_config, read_yaml
from tests.conftest import ROOT, invoke
from tests.preflight_reference import (
    agg_loss,
    crash_over_batches,
    enumerate_step,
    keep_chance,
    shuffled_epoch_crash,
    simulate_run,
    simulate_shuffled,
    simulate_steps,
)

# Simulations of the batch loop (10^5 steps per setting): `make test-slow` runs them.
pytestmark = pytest.mark.slow

PLUGIN = Valuation("plugin")
SIGMAS = 4.0


def _bigmath(below: float | None = None) -> pl.DataFrame:
    """Big-Math's histogram with --samples 64: k = round(64 p̂), n = 64."""
    rates = pl.read_parquet(ROOT / "sample_data" / "bigmath_solve_rates.parquet")["llama8b_solve_rate"]
    k = (rates * 64).round().cast(pl.Int64)
    hist = k.value_counts(name="prompts").sort("llama8b_solve_rate")
    hist = hist.rename({"llama8b_solve_rate": "k"}).with_columns(n=pl.lit(64, pl.Int64))
    hist = hist.with_columns(p=pl.col("k") / pl.col("n"))
    return hist if below is None else hist.filter(pl.col("p") < below)


@pytest.fixture(scope="module")
def full() -> pl.DataFrame:
    return _bigmath()


@pytest.fixture(scope="module")
def hard() -> pl.DataFrame:
    return _bigmath(0.2)


def _step(hist: pl.DataFrame, n: int, B: int, T: int, M: int) -> preflight.Step:
    keep = preflight.keep_probabilities(hist, n, PLUGIN)
    return preflight.step(keep.rate, B, T, n, M)


# ------------------------------------------------------------------------------------ tiny, enumerated

TINY_P = [Fraction(1, 2), Fraction(3, 10), Fraction(1)]
TINY_W = [1, 2, 1]


def _tiny(n: int, B: int, T: int, M: int) -> tuple[dict[str, Fraction], preflight.Step]:
    hist = pl.DataFrame({"p": [float(x) for x in TINY_P], "prompts": TINY_W})
    return enumerate_step(TINY_P, TINY_W, n, B, T, M), _step(hist, n, B, T, M)


TINY_CASES = [(2, 2, 2, 2), (2, 3, 2, 2), (3, 2, 3, 2), (1, 2, 3, 2)]
FIGURES = {
    "batches": "expected_batches",
    "crash": "p_crash",
    "generated": "generated",
    "silent": "silent",
    "surplus": "surplus",
    "lost": "lost_in_crash",
    "trained": "trained",
}


@pytest.mark.parametrize(("n", "B", "T", "M"), TINY_CASES)
@pytest.mark.parametrize("figure", FIGURES)
def test_a_step_matches_the_enumerated_loop(n: int, B: int, T: int, M: int, figure: str) -> None:
    exact, s = _tiny(n, B, T, M)
    assert float(exact[figure]) == pytest.approx(getattr(s, FIGURES[figure]), rel=1e-12, abs=1e-12)


def test_a_batch_kept_count_is_binomial_in_the_mean_keep_rate() -> None:
    q = keep_chance(np.array([float(x) for x in TINY_P]), 2)
    rate = float(np.dot(q, TINY_W) / sum(TINY_W))
    exact, _ = _tiny(2, 2, 2, 1)  # one batch of two: a crash is fewer than two kept
    assert float(exact["crash"]) == pytest.approx(1 - rate**2, rel=1e-12)


def test_the_batches_distribution_sums_with_the_crash_to_one(full: pl.DataFrame) -> None:
    s = _step(full, 16, 300, 512, 3)
    assert 1.0 == pytest.approx(float(s.batches.sum()) + s.p_crash, abs=1e-12)


# ------------------------------------------------------------------------- Big-Math, simulated


# (data, gen batch size, cap, simulated steps): the asked setting at 10^5 steps, tighter ones at fewer.
SIMULATED = [
    ("full", 1024, 3, 100_000),  # the asked setting: never short
    ("hard", 1024, 3, 100_000),
    ("full", 760, 1, 20_000),  # a coin flip per step
    ("full", 260, 3, 10_000),  # three batches needed, crashes often
    ("hard", 1024, 1, 50_000),
    ("hard", 330, 3, 50_000),
]


@pytest.fixture(scope="module")
def simulated(full: pl.DataFrame, hard: pl.DataFrame) -> dict[tuple[str, int, int], object]:
    out = {}
    for name, B, M, steps in SIMULATED:
        hist = full if name == "full" else hard
        p, w = hist["p"].to_numpy(), hist["prompts"].cast(pl.Float64).to_numpy()
        out[(name, B, M)] = simulate_steps(p, w, 16, B, 512, M, steps, seed=B * 10 + M)
    return out


@pytest.mark.parametrize(("name", "B", "M"), [s[:3] for s in SIMULATED])
@pytest.mark.parametrize("figure", FIGURES)
def test_a_step_agrees_with_the_simulated_loop(
    name: str, B: int, M: int, figure: str, full: pl.DataFrame, hard: pl.DataFrame, simulated: dict
) -> None:
    sim = simulated[(name, B, M)]
    exact = getattr(_step(full if name == "full" else hard, 16, B, 512, M), FIGURES[figure])
    assert abs(exact - sim.mean[figure]) <= SIGMAS * sim.se[figure] + 1e-9 * max(abs(exact), 1.0)


def _simulated_crash(hist: pl.DataFrame, B: int, M: int) -> float:
    p, w = hist["p"].to_numpy(), hist["prompts"].cast(pl.Float64).to_numpy()
    return simulate_steps(p, w, 16, B, 512, M, 100_000, seed=B).mean["crash"]


def _search(safe: Callable[[int], bool], grid: list[int]) -> int:
    """The first grid point that is safe, by bisection (safety rises with the gen batch size)."""
    lo, hi = -1, len(grid) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if safe(grid[mid]) else (mid, hi)
    return grid[hi]


def test_the_smallest_safe_multiplier_is_the_simulations(hard: pl.DataFrame) -> None:
    settings = LoopSettings(train_batch_size=512, n=16, max_gen_batches=3, steps=1, risk=0.05)
    keep = preflight.keep_probabilities(hard, 16, PLUGIN)
    exact = preflight.min_safe_gen_batch_size(keep, settings)
    grid = list(range(16, 1024 + 1, 16))  # gen batch sizes in steps of 1/32 of the train batch
    searched = _search(lambda B: _simulated_crash(hard, B, 3) <= settings.risk, grid)
    assert searched == next(B for B in grid if B >= exact)


def test_the_smallest_safe_cap_is_the_first_cap_that_is_safe(full: pl.DataFrame) -> None:
    settings = LoopSettings(train_batch_size=512, gen_batch_size=200, n=16, steps=300, risk=0.01)
    keep = preflight.keep_probabilities(full, 16, PLUGIN)
    scan = next(M for M in range(1, 50) if preflight.crash_of(keep, settings, 200, M)[1] <= 0.01)
    assert scan == preflight.min_safe_max_gen_batches(keep, settings)


EPOCHS = LoopSettings(train_batch_size=64, n=8, max_gen_batches=2, epochs=3, risk=0.01)


def test_the_smallest_safe_gen_batch_of_an_epochs_run_is_safe(hard: pl.DataFrame) -> None:
    keep = preflight.keep_probabilities(hard, 8, PLUGIN)
    B = preflight.min_safe_gen_batch_size(keep, EPOCHS)
    assert preflight.crash_of(keep, EPOCHS, B, 2)[1] <= 0.01


def test_one_less_than_the_smallest_safe_gen_batch_is_not(hard: pl.DataFrame) -> None:
    keep = preflight.keep_probabilities(hard, 8, PLUGIN)
    B = preflight.min_safe_gen_batch_size(keep, EPOCHS)
    assert preflight.crash_of(keep, EPOCHS, B - 1, 2)[1] > 0.01


# ------------------------------------------------------------------------------- over a run


@pytest.mark.parametrize(("B", "M", "batches"), [(260, 3, 40), (380, 2, 25), (760, 1, 9)])
def test_an_epochs_run_crashes_as_the_markov_chain_over_batches(
    full: pl.DataFrame, B: int, M: int, batches: int
) -> None:
    s = _step(full, 16, B, 512, M)
    assert crash_over_batches(s.batches, batches) == pytest.approx(
        preflight.run_crash(s, total_batches=batches), rel=1e-9, abs=1e-12
    )


def test_a_run_of_steps_crashes_unless_every_step_survives(full: pl.DataFrame) -> None:
    s = _step(full, 16, 760, 512, 1)
    assert 1 - (1 - s.p_crash) ** 7 == pytest.approx(preflight.run_crash(s, steps=7), rel=1e-12)


def test_an_endless_loop_never_crashes(hard: pl.DataFrame) -> None:
    assert 0.0 == _step(hard, 16, 128, 512, 0).p_crash


def test_an_endless_loop_draws_as_the_simulation(hard: pl.DataFrame) -> None:
    p, w = hard["p"].to_numpy(), hard["prompts"].cast(pl.Float64).to_numpy()
    sim = simulate_steps(p, w, 16, 128, 512, 0, 20_000, seed=5)
    exact = _step(hard, 16, 128, 512, 0).expected_batches
    assert abs(exact - sim.mean["batches"]) <= SIGMAS * sim.se["batches"]


# ----------------------------------------------------------------------- without replacement


def test_the_variance_ratio_is_the_shuffled_batches(hard: pl.DataFrame) -> None:
    rng = np.random.default_rng(3)
    q = keep_chance(hard["p"].to_numpy(), 16)
    population = np.repeat(q, hard["prompts"].to_numpy())[:: len(q)]  # a small population: the FPC shows
    B, draws = 400, 10_000
    picked = np.array([rng.choice(population.size, B, replace=False) for _ in range(draws)])
    kept = rng.binomial(1, population[picked]).sum(axis=1)
    keep = preflight.Keep(population, np.ones_like(population))
    expected = B * keep.rate * (1 - keep.rate) * keep.variance_ratio(B)
    # the variance of a sample variance of near-normal counts: 2σ⁴/(draws − 1)
    assert abs(kept.var(ddof=1) - expected) <= SIGMAS * expected * math.sqrt(2 / (draws - 1))


# ------------------------------------------------------------------------------ the plain loop


def _sampled_lost(hist: pl.DataFrame, B: int, n: int, lengths: tuple[int, int], batches: int) -> dict:
    """The update's lost share per aggregation, computed on sampled batches with verl's agg_loss."""
    rng = np.random.default_rng(11)
    p, w = hist["p"].to_numpy(), hist["prompts"].cast(pl.Float64).to_numpy()
    out: dict[str, list[float]] = {m: [] for m in ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")}
    width = max(lengths)
    for _ in range(batches):
        prompts = rng.choice(p.size, B, p=w / w.sum())
        rewards = rng.random((B, n)) < p[prompts][:, None]
        silent = np.repeat(rewards.std(axis=1) == 0, n)
        length = np.where(silent, lengths[1], lengths[0])
        mask = (np.arange(width)[None, :] < length[:, None]).astype(np.float64)
        loss = np.where(silent, 0.0, 1.0)[:, None] * np.ones_like(mask)  # informative rows carry the gradient
        for mode in out:
            alone = agg_loss(loss[~silent], mask[~silent], mode) if (~silent).any() else 1.0
            out[mode].append(1.0 - agg_loss(loss, mask, mode) / alone)
    return {mode: (np.mean(v), np.std(v, ddof=1) / math.sqrt(len(v))) for mode, v in out.items()}


@pytest.mark.parametrize("lengths", [(5, 5), (5, 10)])
@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum"])
def test_the_lost_update_is_the_sampled_batches(
    hard: pl.DataFrame, lengths: tuple[int, int], mode: str
) -> None:
    keep = preflight.keep_probabilities(hard, 4, PLUGIN)
    ratio = lengths[1] / lengths[0] if mode == "token-mean" else 1.0
    exact = preflight.lost_shares(keep.rate, 16, ratio)["lost_" + mode.replace("-", "_")]
    mean, se = _sampled_lost(hard, 16, 4, lengths, 4000)[mode]
    assert abs(exact - mean) <= SIGMAS * se


def test_the_chance_of_a_mostly_silent_batch_is_the_binomial_tail() -> None:
    rate, B = 0.6, 20
    tail = sum(math.comb(B, z) * (1 - rate) ** z * rate ** (B - z) for z in range(11, B + 1))
    assert tail == pytest.approx(preflight.silent_over(rate, B, 0.5), rel=1e-12)


# -------------------------------------------------------------------------------------- configs

VERL_DAPO = """\
data:
  tokenizer: null
  train_files: ~/data/dapo-math-17k.parquet
  prompt_key: prompt
  gen_batch_size: ${data.train_batch_size}
  train_batch_size: 1024
  val_batch_size: null # deprecated
  shuffle: True
actor_rollout_ref:
  model:
    override_config: { }
  actor:
    loss_agg_mode: "token-mean" # / "seq-mean-token-sum"
    checkpoint:
      contents: ['model', 'optimizer']
  rollout:
    name: vllm
    n: 1 # > 1 for grpo
    val_kwargs:
      n: 1
algorithm:
  filter_groups:
    enable: False # We try to avoid forgetting to set enable
    metric: null # acc / score / seq_reward
    max_num_gen_batches: 0 # Non-positive values mean no upper limit
trainer:
  logger: [ 'console', 'wandb' ]
  total_epochs: 30
  total_training_steps: null
"""


@pytest.fixture
def verl_config(tmp_path: Path) -> str:
    path = tmp_path / "dapo_trainer.yaml"
    path.write_text(VERL_DAPO)
    return str(path)


def test_the_yaml_reader_reads_what_pyyaml_reads() -> None:
    import yaml

    flat = read_yaml(VERL_DAPO)
    parsed = yaml.safe_load(VERL_DAPO)
    assert (
        parsed["algorithm"]["filter_groups"]["max_num_gen_batches"]
        == flat["algorithm.filter_groups.max_num_gen_batches"]
    )


def test_a_verl_config_follows_its_interpolation(verl_config: str) -> None:
    assert 1024 == resolved(read_config(verl_config), "data.gen_batch_size")


def test_a_verl_config_gives_the_loop_settings(verl_config: str) -> None:
    settings, _ = from_config(read_config(verl_config), LoopSettings(), verl_config)
    assert LoopSettings(1024, 1024, 1, 0, False, None, 30) == settings  # total_training_steps: null


def test_overrides_win_over_the_file(verl_config: str) -> None:
    values = {
        **read_config(verl_config),
        **overrides(
            [
                "data.train_batch_size=512",
                "data.gen_batch_size=1536",
                "actor_rollout_ref.rollout.n=16",
                "algorithm.filter_groups.enable=True",
                "+algorithm.filter_groups.max_num_gen_batches=10",
            ]
        ),
    }
    settings, _ = from_config(values, LoopSettings(), verl_config)
    assert LoopSettings(512, 1536, 16, 10, True, None, 30) == settings


def test_the_keys_read_are_noted(verl_config: str) -> None:
    _, read = from_config(read_config(verl_config), LoopSettings(), verl_config)
    assert f"data.gen_batch_size=1024 ({verl_config})" in read


def test_a_trl_config_gives_its_prompts_per_batch(tmp_path: Path) -> None:
    path = tmp_path / "grpo.json"
    path.write_text('{"num_generations": 8, "per_device_train_batch_size": 64, "max_steps": 500}')
    settings, _ = from_config(read_config(str(path)), LoopSettings(), str(path))
    assert LoopSettings(8, 8, 8, 10, False, 500, None) == settings


# ------------------------------------------------------------------------------------------ the CLI

BIGMATH = str(ROOT / "sample_data" / "bigmath_solve_rates.parquet")
CONTRACT = (
    "train_batch_size",
    "gen_batch_size",
    "n",
    "max_gen_batches",
    "keep_rate",
    "expected_gen_batches",
    "p_crash_step",
    "p_crash_run",
    "rollouts_generated",
    "rollouts_trained",
    "min_safe_gen_batch_size",
    "min_safe_max_gen_batches",
)


def _csv(*args: str) -> pl.DataFrame:
    result = invoke("preflight", BIGMATH, "--samples", "64", *args, "--format", "csv")
    assert 0 == result.exit_code, result.stderr
    return pl.read_csv(io.StringIO(result.stdout))


def test_the_csv_has_the_contract_columns() -> None:
    assert [] == [c for c in CONTRACT if c not in _csv().columns]


def test_the_csv_is_the_analysis(full: pl.DataFrame) -> None:
    row = _csv("--gen-batch-size", "760", "--max-gen-batches", "1", "--estimator", "plugin").row(
        0, named=True
    )
    assert _step(full, 16, 760, 512, 1).p_crash == pytest.approx(row["p_crash_step"], rel=1e-12)


def test_by_default_a_group_of_16_of_64_samples_is_kept_at_the_papers_unbiased_rate() -> None:
    # docs/theory.md §2: 30.19 % of groups of 16 drawn from the 64 logged samples are silent.
    assert 1 - 0.3019 == pytest.approx(_csv()["keep_rate"][0], abs=5e-5)


def test_the_command_line_reads_a_verl_config_and_its_overrides(verl_config: str) -> None:
    row = _csv(
        "--config", verl_config, "actor_rollout_ref.rollout.n=16", "algorithm.filter_groups.enable=True"
    )
    assert (1024, 1024, 16, 0, 30) == (
        row["train_batch_size"][0],
        row["gen_batch_size"][0],
        row["n"][0],
        row["max_gen_batches"][0],
        row["epochs"][0],
    )


def test_a_flag_wins_over_the_config(verl_config: str) -> None:
    row = _csv("--config", verl_config, "actor_rollout_ref.rollout.n=8", "--n", "4")
    assert 4 == row["n"][0]


def test_the_plot_is_written(tmp_path: Path) -> None:
    result = invoke("preflight", BIGMATH, "--format", "csv", "--plot", str(tmp_path / "crash.png"))
    assert 0 == result.exit_code, result.stderr
    assert (tmp_path / "crash.png").stat().st_size > 0


def test_by_is_refused() -> None:
    result = invoke("preflight", BIGMATH, "--by", "prompt_index")
    assert 2 == result.exit_code


# A run that ends at whichever comes first: its epochs' batches or total_training_steps (verl's fit).
RUNS = [
    # (keep rate, B, T, M, batches per epoch, epochs, steps): safe to always crashing, either limit binding
    (0.5, 20, 8, 3, 6, 2, 4),
    (0.3, 20, 8, 3, 10, 2, 50),
    (0.35, 12, 6, 2, 7, 3, 5),
    (0.6, 10, 8, 0, 9, 1, None),
    (0.2, 10, 8, 2, 8, 2, 3),
    # both limits can bind (S < batches < S M): the sums over the steps done
    (0.35, 12, 6, 2, 7, 1, 5),
    (0.3, 20, 8, 3, 10, 2, 12),
]


@pytest.mark.parametrize(("q", "B", "T", "M", "per_epoch", "epochs", "steps"), RUNS)
def test_a_run_of_epochs_and_steps_is_verls_fit_loop(
    q: float, B: int, T: int, M: int, per_epoch: int, epochs: int, steps: int | None
) -> None:
    s = preflight.step(q, B, T, 4, M)
    crash, done, drawn = preflight.run_outcome(s, steps, per_epoch * epochs)
    sim = simulate_run(q, B, T, M, per_epoch, epochs, steps, runs=40_000, seed=11)
    runs = 40_000
    # A crash chance near 0 or 1 leaves the simulation no spread: its binomial error at the model's value.
    assert abs(crash - sim.mean["crash"]) <= 5 * max(sim.se["crash"], math.sqrt(crash * (1 - crash) / runs))
    for name, value in (("steps", done), ("batches", drawn)):
        assert abs(value - sim.mean[name]) <= 5 * sim.se[name] + 1e-6 * value, name  # rare events: unseen


# Without replacement: a shuffled dataloader draws each prompt once per epoch.
def test_the_first_step_of_a_shuffled_epoch_is_exact_and_the_run_within_its_stated_error() -> None:
    q = [Fraction(1, 10), Fraction(3, 10), Fraction(1, 2), Fraction(7, 10), Fraction(9, 10), Fraction(2, 5)]
    first, run = shuffled_epoch_crash(q, B=2, T=2, M=2, steps=2)
    keep = preflight.Keep(np.array([float(x) for x in q]), np.ones(len(q)))
    shuffled = preflight.step(keep.rate, 2, 2, 1, 2, keep.law)
    assert shuffled.p_crash == pytest.approx(float(first), rel=1e-12)
    replaced = preflight.run_crash(preflight.step(keep.rate, 2, 2, 1, 2), 2, len(q) // 2)
    assert (0.4100, 0.4168) == (round(float(run), 4), round(replaced, 4))  # docs/preflight.md's figures
    assert abs(replaced - float(run)) < 0.01


def test_a_shuffled_epoch_s_first_step_is_the_simulations() -> None:
    rng = np.random.default_rng(5)
    q = keep_chance(rng.beta(0.5, 1.5, 2000), 8)
    keep = preflight.Keep(q, np.ones(q.size))
    B, T, M, steps, runs = 150, 170, 2, 5, 40_000
    first, run = simulate_shuffled(q, B, T, M, steps, runs, seed=5)
    exact = preflight.step(keep.rate, B, T, 8, M, keep.law).p_crash
    assert abs(exact - first.mean) <= 4 * first.se
    replaced = preflight.run_crash(preflight.step(keep.rate, B, T, 8, M), steps, q.size // B)
    assert abs(replaced - run.mean) <= 0.01 + 4 * run.se  # docs/preflight.md: within 0.01 of the truth


def test_a_tiny_crash_chance_reads_the_same_in_the_headline_and_the_table() -> None:
    # Three generation batches of 512 all short of 512 kept prompts: about 1e-188 per run, not 0.
    args = ("preflight", ROOT / "sample_data" / "bigmath_solve_rates.parquet", "--samples", "64")
    data = invoke(*args, "--max-gen-batches", "3", "--format", "csv")
    assert 0 < pl.read_csv(io.StringIO(data.stdout))["p_crash_run"][0] < 1e-100
    out = invoke(*args, "--max-gen-batches", "3", "--format", "table")
    assert "crashes with probability <0.001 within 150 steps (<0.001 per step)" in " ".join(
        out.stdout.split()
    )
    row = next(line for line in out.stdout.splitlines() if "│" in line)
    assert "<0.001" in [cell.strip() for cell in row.split("│")]

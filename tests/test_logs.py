"""Rollout logs beyond the trainers: verifiers, NeMo-Gym and open-instruct as their writers lay them out
(tests/log_fixtures.py cites each writer), any log followed step by step (track --rollouts), a step whose
answers moved, and a prompt key that holds several prompts. Expected numbers are computed here from the
fixtures' own tables, with exact fractions."""

from __future__ import annotations

import io
import json
import math
from collections import defaultdict
from fractions import Fraction
from itertools import product
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool import examplerun as er
from sigmatool.track.moved import group_pmfs, poisson_binomial, two_sided
from tests.conftest import invoke, one_error_line, run_cli, run_in
from tests.log_fixtures import Prompt, write_nemo_gym, write_open_instruct, write_verifiers

A = [
    Prompt("What is 2+2?", (1, 1, 0, 1)),
    Prompt("Solve x+1=3", (0, 0, 0, 0)),
    Prompt("Name a prime", (1, 0, 1, 0)),
]
B = [
    Prompt("What is 2+2?", (1, 1, 1, 1)),
    Prompt("Solve x+1=3", (1, 0, 0, 0)),
    Prompt("Name a prime", (1, 1, 1, 0)),
]
OLD = [Prompt("What is 2+2?", (1, 1, 0)), Prompt("Solve x+1=3", (0, 0, 1)), Prompt("Name a prime", (0, 0, 0)),
       Prompt("Integrate x", (1, 1, 1))]  # fmt: skip


def silent(counts: list[tuple[int, int]], G: int) -> float:
    """The mean over prompts of the unbiased [C(k, G) + C(n − k, G)] / C(n, G), exactly."""
    total = sum(Fraction(math.comb(k, G) + math.comb(n - k, G), math.comb(n, G)) for k, n in counts)
    return float(total / len(counts))


def counts(*runs: list[Prompt]) -> list[tuple[int, int]]:
    """Per prompt text, k and n over the runs given."""
    pooled: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for run in runs:
        for p in run:
            pooled[p.text][0] += sum(p.rewards)
            pooled[p.text][1] += len(p.rewards)
    return [(k, n) for k, n in pooled.values()]


def csv(*args: object) -> pl.DataFrame:
    done = run_in(*args, "--format", "csv")
    assert 0 == done.returncode, done.stderr
    return pl.read_csv(io.StringIO(done.stdout))


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of three vf-eval runs of one environment: two checkpoints, one run from the 'id' era."""
    base = tmp_path_factory.mktemp("vf") / "outputs"
    write_verifiers(base, "math-python", "org/model-step-200", "9f2c1a0b", B, seed=1)
    write_verifiers(base, "math-python", "org/model-step-50", "3c4d5e6f", A, seed=2)
    write_verifiers(base, "math-python", "org/model-step-100", "0a1b2c3d", OLD, era="id")
    return base


def test_verifiers_pools_every_run_by_problem(evals: Path) -> None:
    out = csv("silent", evals, "--from", "verifiers", "--G", "2")
    assert silent(counts(A, B, OLD), 2) == pytest.approx(out["silent_rate"].item(), abs=1e-12)
    assert 4 == out["prompts"].item()


@pytest.mark.parametrize("by", ["model", "run"])
def test_verifiers_keeps_models_and_runs_apart(evals: Path, by: str) -> None:
    out = csv("silent", evals, "--from", "verifiers", "--G", "3", "--by", by)
    expected = {"org/model-step-50": A, "org/model-step-200": B, "org/model-step-100": OLD}
    runs = {"math-python--org--model-step-50/3c4d5e6f": A, "math-python--org--model-step-200/9f2c1a0b": B,
            "math-python--org--model-step-100/0a1b2c3d": OLD}  # fmt: skip
    for label, rate in zip(out[by], out["silent_rate"], strict=True):
        prompts = (expected if by == "model" else runs)[label]
        assert silent(counts(prompts), 3) == pytest.approx(rate, abs=1e-12)
    assert 3 == out.height


def test_an_id_era_run_is_keyed_by_its_true_example(evals: Path) -> None:
    """vf-eval wrote id = i // r while its rows cycled: keyed by id, one key holds three problems."""
    old = next(evals.glob("evals/*step-100/*/results.jsonl"))
    done = run_in("silent", old, "--from", "verifiers", "--G", "2", "--format", "csv")
    assert silent(counts(OLD), 2) == pytest.approx(
        pl.read_csv(io.StringIO(done.stdout))["silent_rate"].item()
    )
    assert "keyed by row mod num_examples (4, metadata.json)" in done.stderr
    by_id = run_in("silent", old, "--rollouts", "--prompt-col", "id", "--reward-col", "reward", "--G", "2")
    assert "prompt keys of 'id' hold several different 'prompt' texts" in by_id.stderr


def test_track_follows_eval_runs_in_checkpoint_order(evals: Path) -> None:
    done = run_in("track", evals, "--from", "verifiers", "--format", "csv")
    steps = pl.read_csv(io.StringIO(done.stdout))
    means = [
        sum(map(sum, (p.rewards for p in run))) / sum(len(p.rewards) for p in run) for run in (A, OLD, B)
    ]
    assert means == pytest.approx(steps["mean_reward"].to_list())
    assert "step 1 = the run math-python--org--model-step-50/3c4d5e6f" in done.stderr


def test_nemo_gym_rollouts_and_reward_profile_read_the_same_counts(tmp_path: Path) -> None:
    prompts = [Prompt("a", (1, 0, 1, 1), "math"), Prompt("b", (0, 0, 0, 1), "math"), Prompt("c", (1, 1, 1, 1), "code"),
               Prompt("d", (0, 1, 0, 1), "code")]  # fmt: skip
    rollouts = write_nemo_gym(tmp_path / "rollouts.jsonl", prompts, profile=True)
    whole = csv("silent", tmp_path, "--from", "nemo-gym", "--G", "2")
    assert silent(counts(prompts), 2) == pytest.approx(whole["silent_rate"].item(), abs=1e-12)
    profile = csv("silent", tmp_path / "rollouts_reward_profiling.jsonl", "--from", "nemo-gym", "--G", "2")
    assert whole["silent_rate"].item() == pytest.approx(profile["silent_rate"].item(), abs=1e-15)
    agents = csv("silent", rollouts, "--from", "nemo-gym", "--G", "2", "--by", "agent")
    for agent, rate in zip(agents["agent"], agents["silent_rate"], strict=True):
        assert silent(counts([p for p in prompts if p.label == agent]), 2) == pytest.approx(rate, abs=1e-12)


def test_open_instruct_traces_read_per_step_and_dataset(tmp_path: Path) -> None:
    steps = {
        0: [Prompt("p1", (10, 0, 10, 0), "math"), Prompt("p2", (0, 0, 10, 10), "gsm8k")],
        1: [Prompt("p1", (10, 10, 10, 0), "math"), Prompt("p3", (10, 0, 0, 0), "gsm8k")],
        2: [Prompt("p2", (10, 0, 0, 0), "gsm8k"), Prompt("p3", (0, 10, 0, 10), "gsm8k")],
    }
    files = write_open_instruct(tmp_path, "grpo__1__1769000000", steps, shard_rows=10)
    assert 2 == len(files)
    binary = {
        s: [Prompt(p.text, tuple(r // 10 for r in p.rewards), p.label) for p in ps] for s, ps in steps.items()
    }
    out = csv("silent", tmp_path, "--from", "open-instruct", "--G", "2", "--by", "step")
    for step, rate in zip(out["step"], out["silent_rate"], strict=True):
        assert silent(counts(binary[step]), 2) == pytest.approx(rate, abs=1e-12)
    per = csv("silent", tmp_path, "--from", "open-instruct", "--G", "2", "--by", "dataset")
    for label, rate in zip(per["dataset"], per["silent_rate"], strict=True):
        mine = [p for ps in binary.values() for p in ps if p.label == label]
        assert silent(counts(mine), 2) == pytest.approx(rate, abs=1e-12)


def test_an_open_instruct_format_bonus_needs_a_threshold(tmp_path: Path) -> None:
    write_open_instruct(tmp_path, "run__1__1", {0: [Prompt("p", (11, 1, 10, 0))]})
    done = run_cli("silent", tmp_path, "--from", "open-instruct")
    assert 1 == done.returncode
    line = one_error_line(done.stderr)
    assert "not 10 (right) or 0 (wrong)" in line
    assert "--threshold" in line
    assert "row" in line
    fine = csv("silent", tmp_path, "--from", "open-instruct", "--threshold", "10", "--G", "2")
    assert silent([(2, 4)], 2) == pytest.approx(fine["silent_rate"].item())


@pytest.mark.parametrize("log", ["verifiers", "nemo-gym", "open-instruct"])
def test_a_log_read_without_from_names_its_writer(tmp_path: Path, log: str) -> None:
    if log == "verifiers":
        path = write_verifiers(tmp_path, "env", "m", "run", A)
    elif log == "nemo-gym":
        path = write_nemo_gym(tmp_path / "r.jsonl", A)
    else:
        path = write_open_instruct(tmp_path, "r__1__1", {0: A})[0]
    done = run_in("silent", path)
    assert 1 == done.returncode
    assert f"read it with --from {log}" in one_error_line(done.stderr)


# --------------------------------------------------------------------------------- any log, step by step


def test_track_on_any_log_equals_track_on_the_same_rollouts_as_verl_dumps(tmp_path: Path) -> None:
    rows, _ = er.generate(er.RunSpec(prompts=40, steps=6, batch=20, group_size=4, drift=0.0, seed=4))
    er.write_verl_dump(rows, tmp_path / "verl")
    log = tmp_path / "log.parquet"
    rows.select("step", "input", pl.col("acc").cast(pl.Int64).alias("reward")).write_parquet(log)
    verl = csv("track", tmp_path / "verl", "--from", "verl")
    plain = csv(
        "track", log, "--rollouts", "--prompt-col", "input", "--reward-col", "reward", "--step-col", "step"
    )
    assert verl.equals(plain)
    named = rows.with_columns(("ckpt-" + (pl.col("step") * 50).cast(pl.String)).alias("ckpt"))
    named.select("ckpt", "input", pl.col("acc").alias("reward")).write_parquet(log)
    by_name = csv(
        "track", log, "--rollouts", "--prompt-col", "input", "--reward-col", "reward", "--step-col", "ckpt"
    )
    assert verl.drop("step").equals(by_name.drop("step"))


def collapsed_log(path: Path, collapse: int | None) -> Path:
    """8 steps of 5 groups of 3 answers; at step ``collapse`` every answer is wrong."""
    rng = np.random.default_rng(11)
    rates = [0.9, 0.85, 0.95, 0.8, 0.9]
    rows = [
        {"step": s, "problem": f"q{q}", "reward": 0 if s == collapse else int(rng.random() < rates[q])}
        for s in range(1, 9)
        for q in range(5)
        for _ in range(3)
    ]
    pl.DataFrame(rows).write_csv(path)
    return path


# How track reads collapsed_log's file.
TRACK_COLLAPSED = ("--rollouts", "--prompt-col", "problem", "--reward-col", "reward", "--step-col", "step")


@pytest.mark.parametrize("collapse", [5, None])
def test_a_collapsed_step_of_five_groups_is_flagged_and_a_steady_run_is_not(
    tmp_path: Path, collapse: int | None
) -> None:
    log = collapsed_log(tmp_path / "run.csv", collapse)
    args = ["track", log, *TRACK_COLLAPSED]
    steps = csv(*args)
    flagged = steps.filter(pl.col("drift"))
    if collapse is None:
        assert 0 == flagged.height
        return
    assert [5] == flagged["step"].to_list()
    assert "all wrong up" in flagged["moved"].item()
    assert "mean reward down" in flagged["moved"].item()
    assert not abs(flagged["silent_z"].item()) >= 4  # the silent share alone could not tell
    assert "is a collapse" in run_in(*args, "--format", "table").stdout


def brute_p(G: list[int], k_other: list[int], n_other: list[int], observed: int, what: str) -> float:
    """The two-sided exact p-value by enumerating every outcome of the step's groups, with fractions."""
    pmfs = []
    for g, ko, no, k in zip(G, k_other, n_other, OBSERVED_K, strict=True):
        K, N = ko + k, no + g
        pmfs.append(
            [Fraction(math.comb(K, j) * math.comb(N - K, g - j), math.comb(N, g)) for j in range(g + 1)]
        )
    stat = {"reward": lambda ks: sum(ks), "all_wrong": lambda ks: sum(k == 0 for k in ks),
            "all_right": lambda ks: sum(k == g for k, g in zip(ks, G, strict=True))}[what]  # fmt: skip
    lower = upper = Fraction(0)
    for ks in product(*[range(g + 1) for g in G]):
        prob = math.prod((pmf[k] for pmf, k in zip(pmfs, ks, strict=True)), start=Fraction(1))
        value = stat(ks)
        lower += prob if value <= observed else 0
        upper += prob if value >= observed else 0
    return float(min(Fraction(1), 2 * min(lower, upper)))


OBSERVED_K = [0, 1, 3]


@pytest.mark.parametrize("what", ["reward", "all_wrong", "all_right"])
def test_the_exact_tests_equal_enumeration(what: str) -> None:
    G, k_other, n_other = [3, 3, 4], [7, 2, 5], [9, 6, 8]
    K = np.array(k_other, dtype=float) + np.array(OBSERVED_K)
    pmfs = group_pmfs(np.array(G), K, np.array(n_other, dtype=float), np.full(3, np.nan))
    if what == "reward":
        dist = np.ones(1)
        for row, g in zip(pmfs, G, strict=True):
            dist = np.convolve(dist, row[: g + 1])
        observed, p = sum(OBSERVED_K), two_sided(dist, sum(OBSERVED_K))
    else:
        q = pmfs[np.arange(3), G] if what == "all_right" else pmfs[:, 0]
        observed = sum(k == g for k, g in zip(OBSERVED_K, G, strict=True)) if what == "all_right" else 1
        p = two_sided(poisson_binomial(q), observed)
    assert brute_p(G, k_other, n_other, observed, what) == pytest.approx(p, rel=1e-12)


# --------------------------------------------------------------------------------------------- NeMo-RL


def test_nemo_rl_splits_one_prompt_drawn_twice_in_a_step(tmp_path: Path) -> None:
    """grpo_train with dynamic sampling: groups are whole and contiguous; one prompt drawn twice gives 2G rows."""
    rows = []
    for prompt, rewards in [
        ("a", [1, 0, 1, 0]),
        ("a", [1, 1, 0, 0]),
        ("b", [0, 1, 1, 1]),
        ("c", [1, 0, 0, 0]),
    ]:
        for r in rewards:
            rows.append({"content": [[prompt, "answer"]], "rewards": [float(r)], "idx": len(rows)})
    (tmp_path / "train_data_step1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    steps = csv("track", tmp_path, "--from", "nemo-rl")
    assert [4] == steps["groups"].to_list()
    assert [4.0] == steps["mean_group_size"].to_list()


# ------------------------------------------------------------------------------------ every prompt's story


def test_per_prompt_gives_each_status_from_a_run_built_for_it(tmp_path: Path) -> None:
    # Per prompt, its right answers of 2 in steps 1-4 (None: not drawn that step).
    story = {
        "never": [0, 0, 0, None],
        "always": [2, 1, 2, 2],
        "learned": [0, 0, 1, 2],
        "forgotten": [2, 1, 0, 0],
        "unstable": [1, 0, 2, None],
    }
    rows = [
        {"step": s, "q": q, "reward": int(j < k)}
        for q, ks in story.items()
        for s, k in enumerate(ks, start=1)
        if k is not None
        for j in range(2)
    ]
    log = tmp_path / "run.csv"
    pl.DataFrame(rows).write_csv(log)
    args = ["track", log, "--rollouts", "--prompt-col", "q", "--reward-col", "reward", "--step-col", "step"]
    out = csv(*args, "--per-prompt")
    status = dict(zip(out["prompt"].cast(pl.UInt64), out["status"], strict=True))
    keys = {q: pl.Series([q]).hash().item() for q in story}
    assert {
        "never": "never solved",
        "always": "always solved",
        "learned": "learned at step 3",
        "forgotten": "forgotten at step 3",
        "unstable": "unstable",
    } == {q: status[keys[q]] for q in story}
    learned = out.filter(pl.col("prompt").cast(pl.UInt64) == keys["learned"]).row(0, named=True)
    assert (0 + 0 + 1 + 2, 8, 4, 1, 3, 1, 2) == tuple(
        learned[c]
        for c in ("k", "n", "steps", "first_step", "first_solved_step", "steps_all_right", "steps_all_wrong")
    )
    assert "1:0/2 2:0/2 3:1/2 4:2/2" == learned["per_step"]


@pytest.mark.parametrize("extra", [("--summary",), ("--plot", "run.png")])
def test_per_prompt_beside_another_view_is_one_usage_line(tmp_path: Path, extra: tuple[str, ...]) -> None:
    log = collapsed_log(tmp_path / "run.csv", None)
    shown = [str(tmp_path / e) if e.endswith(".png") else e for e in extra]
    args = ["track", log, *TRACK_COLLAPSED]
    done = run_cli(*args, "--per-prompt", *shown)
    assert 2 == done.returncode
    assert "--per-prompt" in one_error_line(done.stderr)
    assert "" == done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv"]


@pytest.mark.slow  # three reports and a track: `make test-slow`
def test_report_tracks_a_rollout_log_given_its_step_column(tmp_path: Path) -> None:
    """report --rollouts … --step-col adds the run's track section, whose headline is track's own; without
    --step-col the page has none."""
    from tests.log_fixtures import ENGINE_ROLLOUTS, write_engine_log

    log = write_engine_log(tmp_path / "log.parquet", steps=3, per_step=100)
    args = (*ENGINE_ROLLOUTS, "--prior", "beta")
    pages = {}
    for name, extra in (("tracked", ("--step-col", "step")), ("plain", ())):
        done = invoke("report", log, *args, *extra, "-o", tmp_path / f"{name}.md")
        assert 0 == done.exit_code, done.stderr
        pages[name] = (tmp_path / f"{name}.md").read_text()
    assert "## Tracking a run" in pages["tracked"]
    assert "## Tracking a run" not in pages["plain"]
    table = invoke("track", log, *args, "--step-col", "step", "--format", "table")
    first = " ".join(table.stdout.split("\n\n")[0].split())  # track's headline, unwrapped
    assert first.split(". ")[0] in " ".join(pages["tracked"].split())

"""``sigmatool export --for``: what each trainer reads, checked by the trainer's own code (copied in
tests/trainer_excerpts.py with file, lines and commit) — prime-rl's DifficultyPoolSampler on the TOML,
open-instruct's parser and difficulty map on the rows — and the bad inputs, one line each."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import tomllib

from sigmatool.integrations.exports import prime_rl
from sigmatool.integrations.schedule import ScheduleError, read_schedule
from tests import trainer_excerpts as ref
from tests.conftest import TOY, invoke, one_error_line, run_cli

POOLS = "0-0.2:1,0.3-0.8:3,0.8-1:2"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Schedules of the toy data, written once: pools and band weights, an order, a plan."""
    d = tmp_path_factory.mktemp("schedules")
    runs = {
        "pools": ["--schedule", "pools", "--pools", POOLS, "--batch-size", "2", "--per-prompt", "-o"],
        "band": ["--schedule", "band", "--band", "0.2,0.8", "--batch-size", "3", "--per-prompt", "-o"],
        "order": ["--schedule", "band", "--batch-size", "4", "--steps", "6", "--export-order"],
        "gaussian": ["--mean", "0.5", "--batch-size", "2", "--per-prompt", "-o"],
    }
    out = {}
    for name, args in runs.items():
        out[name] = d / f"{name}.parquet"
        shown = ["--format", "csv"] if name == "order" else []
        assert 0 == invoke("curriculum", TOY, *args, out[name], *shown).exit_code
    out["plan"] = d / "plan.csv"
    assert 0 == invoke("plan", TOY, "--per-prompt", "--sizes", "8", "-o", out["plan"]).exit_code
    out["plans"] = d / "plans.csv"
    assert 0 == invoke("plan", TOY, "--per-prompt", "-o", out["plans"]).exit_code
    return out


def _toml(path: Path) -> dict[str, object]:
    """The export under a source of prime-rl's orchestrator config, parsed."""
    result = invoke("export", "--for", "prime-rl", path)
    assert 0 == result.exit_code, result.stderr
    text = '[[orchestrator.train.source]]\nname = "toy"\n\n' + result.stdout
    sampler = tomllib.loads(text)["orchestrator"]["train"]["source"][0]["curriculum"]["sampler"]
    assert isinstance(sampler, dict)
    return sampler


def _pool_sampler(sampler: dict[str, object], n: int) -> ref.DifficultyPoolSampler:
    pools = {name: ref.DifficultyPoolConfig(**pool) for name, pool in sampler["pools"].items()}  # type: ignore[attr-defined]
    config = ref.DifficultyPoolSamplerConfig(pools=pools, seed=int(sampler["seed"]))  # type: ignore[call-overload]
    return ref.DifficultyPoolSampler(config, [ref.Task(str(i)) for i in range(n)])


def _prime_weights(path: Path) -> np.ndarray:
    """Each task's chance per draw in prime-rl's sampler, every task at its pass rate (``__next__``'s list)."""
    rates = pl.read_parquet(path)["pass_rate"].to_list()
    sampler = _pool_sampler(_toml(path), len(rates))
    sampler.task_rewards = {str(i): p for i, p in enumerate(rates)}
    w = np.array([sampler.pools[sampler.task_pool(t.key)].weight for t in sampler.tasks])
    return w / w.sum()


def test_the_prime_rl_table_is_a_difficulty_pool_sampler(made: dict[str, Path]) -> None:
    assert "difficulty_pool" == _toml(made["pools"])["type"]


@pytest.mark.parametrize("name", ["pools", "band"])
def test_prime_rl_draws_each_prompt_with_the_curriculums_weight(made: dict[str, Path], name: str) -> None:
    expected = pl.read_parquet(made[name])["weight"].fill_null(0).to_numpy()
    np.testing.assert_allclose(expected, _prime_weights(made[name]), rtol=0, atol=1e-12)


def test_prime_rl_weights_per_task_average_one(made: dict[str, Path]) -> None:
    rates = pl.read_parquet(made["pools"])["pass_rate"].to_list()
    sampler = _pool_sampler(_toml(made["pools"]), len(rates))
    sampler.task_rewards = {str(i): p for i, p in enumerate(rates)}
    w = [sampler.pools[sampler.task_pool(t.key)].weight for t in sampler.tasks]
    assert 1.0 == pytest.approx(sum(w) / len(w), abs=1e-12)


def test_prime_rl_never_draws_a_prompt_outside_the_pools(made: dict[str, Path]) -> None:
    rates = pl.read_parquet(made["pools"])["pass_rate"].to_list()
    sampler = _pool_sampler(_toml(made["pools"]), len(rates))
    sampler.task_rewards = {str(i): p for i, p in enumerate(rates)}
    drawn = {rates[int(next(sampler).key)] for _ in range(2000)}
    assert [] == [p for p in drawn if not (p <= 0.2 or 0.3 <= p)]


def test_the_move_chance_is_the_binomial_sum_over_prime_rls_pools(made: dict[str, Path]) -> None:
    schedule = read_schedule(made["pools"])
    sampler = _pool_sampler(_toml(made["pools"]), 1)
    G, total = 8, 0.0
    for p, w in zip(schedule.p.tolist(), schedule.weights.tolist(), strict=True):  # type: ignore[union-attr]
        sampler.task_rewards = {"0": p}
        own = sampler.task_pool("0")
        for k in range(G + 1):
            sampler.task_rewards = {"0": k / G}
            if sampler.task_pool("0") != own:
                total += w * math.comb(G, k) * p**k * (1 - p) ** (G - k)
    assert total == pytest.approx(prime_rl(schedule)[1], abs=1e-12)


def test_prime_rl_and_the_schedule_draw_the_same_prompts(made: dict[str, Path]) -> None:
    assert 0 == prime_rl(read_schedule(made["pools"]))[2]


# ------------------------------------------------------------------------------------------- open-instruct


@pytest.fixture(scope="module")
def counts(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, list[dict[str, object]]]:
    """Sixty prompts with counts (many ties), ids shuffled, and open-instruct's rows for them."""
    rng = np.random.default_rng(3)
    n = rng.choice([4, 8, 16], size=60)
    k = rng.binomial(n, rng.beta(0.7, 0.9, size=60))
    ids = [f"q{i}" for i in rng.permutation(60)]
    frame = pl.DataFrame({"id": ids, "k": k, "n": n})
    path = tmp_path_factory.mktemp("oi") / "counts.csv"
    frame.write_csv(path)
    out = path.with_name("rows.jsonl")
    result = invoke("export", "--for", "open-instruct", path, "--k-col", "k", "--n-col", "n", "--id-col", "id",
                    "-o", out)  # fmt: skip
    assert 0 == result.exit_code, result.stderr
    return frame, [json.loads(line) for line in out.read_text().splitlines()]


def _their_map(frame: pl.DataFrame) -> list[ref.DifficultyRow]:
    """open-instruct's map of the same counts: rows in instance-id order, as its main() sorts them."""
    rows = [
        ref.DifficultyRow(f"toy::{i}", ref.expand_binary_attempt_scores(pass_count=k, attempt_count=n))
        for i, k, n in frame.iter_rows()
    ]
    rows.sort(key=lambda r: r.instance_id)
    prior, _ = ref.estimate_beta_prior(rows, prior_mode="empirical-bayes")
    ref.apply_beta_binomial_difficulty(rows, prior=prior, lower_quantile=0.1, num_buckets=5)
    return rows


def test_open_instructs_parser_takes_every_row(counts: tuple[pl.DataFrame, list[dict[str, object]]]) -> None:
    config = ref.DifficultyCurriculumMetadataConfig()
    errors = [ref._parse_difficulty_metadata(row, i, config).error for i, row in enumerate(counts[1])]
    assert [None] * 60 == errors


@pytest.mark.parametrize("name", ["posterior_mean", "posterior_lower_bound", "expected_quantile"])
def test_open_instruct_difficulty_is_its_maps_within_1e_3(
    counts: tuple[pl.DataFrame, list[dict[str, object]]], name: str
) -> None:
    theirs = {r.instance_id: getattr(r.difficulty, name) for r in _their_map(counts[0])}
    ours = {f"toy::{row['id']}": row["difficulty"][name] for row in counts[1]}  # type: ignore[index]
    assert [] == [i for i in theirs if abs(theirs[i] - ours[i]) > 1e-3]


def test_open_instruct_buckets_are_its_maps(counts: tuple[pl.DataFrame, list[dict[str, object]]]) -> None:
    theirs = {r.instance_id: r.difficulty.bucket_index for r in _their_map(counts[0])}
    ours = {f"toy::{row['id']}": row["difficulty"]["bucket_index"] for row in counts[1]}  # type: ignore[index]
    assert theirs == ours


def test_open_instruct_rows_keep_every_input_column(
    counts: tuple[pl.DataFrame, list[dict[str, object]]],
) -> None:
    assert ["id", "k", "n", "difficulty"] == list(counts[1][0])


# ----------------------------------------------------------------------------------------------- verl, TRL


def test_verl_overrides_plug_the_sampler_in(made: dict[str, Path]) -> None:
    lines = invoke("export", "--for", "verl", made["order"]).stdout.splitlines()
    assert "data.sampler.class_name=ScheduleSampler" in lines


def test_verl_08_overrides_read_the_order_in_sequence(made: dict[str, Path]) -> None:
    lines = invoke("export", "--for", "verl", made["order"], "--trainer-version", "0.8").stdout.splitlines()
    assert {f"data.train_files={made['order']}", "data.shuffle=False", "data.train_batch_size=4"} <= set(
        lines
    )


def test_trl_lines_make_the_scheduled_trainer(made: dict[str, Path]) -> None:
    text = invoke("export", "--for", "trl", made["band"]).stdout
    assert f"Trainer = scheduled(GRPOTrainer, {json.dumps(str(made['band']))})" in text


def test_the_export_writes_to_o(made: dict[str, Path], tmp_path: Path) -> None:
    invoke("export", "--for", "verl", made["order"], "-o", tmp_path / "verl.txt")
    assert "data.sampler.class_name=ScheduleSampler" in (tmp_path / "verl.txt").read_text()


# ------------------------------------------------------------------------------------------------ bad input


@pytest.fixture(scope="module")
def foreign() -> tuple[int, str]:
    """``export`` of a file sigmatool did not write, through a real process: its exit code and error line."""
    done = run_cli("export", "--for", "verl", TOY)
    return done.returncode, one_error_line(done.stderr)


def test_a_file_sigmatool_did_not_write_exits_2(foreign: tuple[int, str]) -> None:
    assert 2 == foreign[0]


def test_a_file_sigmatool_did_not_write_is_named_in_one_line(foreign: tuple[int, str]) -> None:
    assert f"{TOY}: not a schedule sigmatool wrote" in foreign[1]


@pytest.mark.parametrize(
    ("name", "args", "words"),
    [
        ("order", ["--for", "prime-rl"], "pools or band"),
        ("gaussian", ["--for", "prime-rl"], "pools or band"),
        ("band", ["--for", "verl", "--trainer-version", "0.8"], "no sampler plug"),
        ("plan", ["--for", "verl", "--trainer-version", "0.9.1"], "no sampler plug"),
        ("plans", ["--for", "trl"], "sizes 8, 16"),
    ],
)
def test_a_schedule_the_trainer_cannot_take_is_one_line_exit_2(
    made: dict[str, Path], name: str, args: list[str], words: str
) -> None:
    done = run_cli("export", *args, made[name])
    assert 2 == done.returncode
    assert words in one_error_line(done.stderr)


def test_open_instruct_without_counts_is_one_line_exit_2() -> None:
    done = run_cli("export", "--for", "open-instruct", TOY)
    assert 2 == done.returncode
    assert "pass counts" in one_error_line(done.stderr)


def test_reading_a_file_sigmatool_did_not_write_raises_value_error() -> None:
    with pytest.raises(ValueError, match="not a schedule sigmatool wrote"):
        read_schedule(TOY)


def test_reading_a_plan_of_several_sizes_raises_value_error(made: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="a trainer runs one G per run"):
        read_schedule(made["plans"])


def test_a_schedule_error_is_a_value_error() -> None:
    assert issubclass(ScheduleError, ValueError)


def test_the_prime_rl_seed_is_the_schedules(made: dict[str, Path]) -> None:
    record = json.loads(pl.read_parquet_metadata(made["pools"])["sigmatool"])
    assert record["seed"] == _toml(made["pools"])["seed"]


# ----------------------------------------------------------------------------------- what made a schedule


def _record(path: Path) -> dict[str, object]:
    record = json.loads(pl.read_parquet_metadata(path)["sigmatool"])
    assert isinstance(record, dict)
    return record


def test_an_order_records_its_run(made: dict[str, Path]) -> None:
    record = _record(made["order"])
    assert ("curriculum", "order", 4, 6, 8) == tuple(record[k] for k in ("command", "kind", "B", "T", "G"))


def test_a_schedule_records_its_input_rows_and_columns(made: dict[str, Path]) -> None:
    assert {"rows": 20, "p_col": "pass_rate", "files": [str(TOY)]}.items() <= _record(made["pools"])[
        "input"
    ].items()  # type: ignore[attr-defined]


def test_a_schedule_records_its_pools(made: dict[str, Path]) -> None:
    assert [[0, 0.2, 1], [0.3, 0.8, 3], [0.8, 1, 2]] == _record(made["pools"])["schedule"]["pools"]  # type: ignore[index]


def test_a_csv_schedule_has_its_record_beside_it(made: dict[str, Path]) -> None:
    record = json.loads(Path(f"{made['plan']}.sigmatool.json").read_text())
    assert ("plan", [8]) == (record["kind"], record["schedule"]["sizes"])


def test_per_prompt_rows_on_stdout_leave_no_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    invoke("plan", TOY, "--per-prompt", "--format", "csv")
    assert [] == list(tmp_path.iterdir())


def test_a_files_record_names_the_command_that_made_it(made: dict[str, Path]) -> None:
    assert str(_record(made["order"])["argv"]).startswith("sigmatool curriculum ")


def test_an_open_instruct_row_without_counts_gets_a_null_difficulty(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text("id,k,n\na,1,4\nb,,4\nc,3,4\n")
    result = invoke(
        "export", "--for", "open-instruct", path, "--k-col", "k", "--n-col", "n", "--format", "jsonl"
    )
    assert [False, True, False] == [
        json.loads(line)["difficulty"] is None for line in result.stdout.splitlines()
    ]


def test_a_trainer_version_for_another_trainer_is_a_usage_error(made: dict[str, Path]) -> None:
    result = invoke("export", "--for", "trl", made["pools"], "--trainer-version", "0.19")
    assert 2 == result.exit_code

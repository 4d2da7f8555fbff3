"""``silent --invalid skip|mask|zero``: a rollout log's invalid rewards (null, NaN, ±inf, text), each way of
reading them checked against the enumeration of every G-subset of each prompt's rollouts."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import csv_of, invoke, one_error_line, run_cli

# Per prompt, its rewards as logged: 1, 0 or something invalid.
LOG = {
    "q1": ["1", "0", "error", "1", "nan"],
    "q2": ["1", "1", "", "1"],
    "q3": ["0", "inf", "0", "0", "1", "-inf"],
    "q4": ["1", "0", "1", "0", "0", "1", "error"],
}


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "log.csv"
    lines = ["prompt,reward", *(f"{q},{r}" for q, rewards in LOG.items() for r in rewards)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _valid(r: str) -> int | None:
    return int(r) if r in ("0", "1") else None


def _group_silent(group: list[int | None], mode: str) -> bool:
    """A group's silence as the trainer sees it under each reading of invalid rewards."""
    if mode == "zero":
        return len({0 if x is None else x for x in group}) == 1
    valid = [x for x in group if x is not None]
    return len(set(valid)) <= 1  # mask: fewer than two valid, or all agree


def _enumerated(mode: str, G: int) -> float:
    shares = []
    for rewards in LOG.values():
        values = [_valid(r) for r in rewards]
        pool = [x for x in values if x is not None] if mode == "skip" else values
        if len(pool) < G:
            continue
        subsets = list(itertools.combinations(pool, G))
        shares.append(sum(_group_silent(list(s), mode) for s in subsets) / len(subsets))
    return float(np.mean(shares))


def _summary(tmp_path: Path, mode: str, *extra: object) -> pl.DataFrame:
    return csv_of(invoke("silent", _write(tmp_path), "--rollouts", "--prompt-col", "prompt", "--reward-col",
                         "reward", "--invalid", mode, "--G", "2,3", *extra, "-f", "csv"))  # fmt: skip


@pytest.mark.parametrize("mode", ["skip", "mask", "zero"])
@pytest.mark.parametrize("G", [2, 3])
def test_silent_share_is_the_enumeration_of_g_subsets(tmp_path: Path, mode: str, G: int) -> None:
    row = _summary(tmp_path, mode).filter(pl.col("G") == G).row(0, named=True)
    assert row["silent_rate"] == pytest.approx(_enumerated(mode, G), abs=1e-12)
    assert row[f"silent_rate_{mode}"] == row["silent_rate"]


def test_invalid_rollouts_and_share(tmp_path: Path) -> None:
    row = _summary(tmp_path, "mask").row(0, named=True)
    invalid = sum(_valid(r) is None for rewards in LOG.values() for r in rewards)
    total = sum(len(rewards) for rewards in LOG.values())
    assert (row["invalid_rollouts"], row["invalid_share"]) == (invalid, pytest.approx(invalid / total))


def test_skip_is_the_plain_silent_share_of_the_valid_rewards(tmp_path: Path) -> None:
    row = _summary(tmp_path, "skip").filter(pl.col("G") == 2).row(0, named=True)
    path = tmp_path / "valid.csv"
    rows = [f"{q},{r}" for q, rewards in LOG.items() for r in rewards if _valid(r) is not None]
    path.write_text("prompt,reward\n" + "\n".join(rows) + "\n")
    plain = csv_of(invoke("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
                          "--G", "2", "-f", "csv"))  # fmt: skip
    assert row["silent_rate"] == pytest.approx(plain["silent_rate"][0], abs=1e-12)


def test_plugin_draws_with_replacement(tmp_path: Path) -> None:
    row = _summary(tmp_path, "zero", "--estimator", "plugin").filter(pl.col("G") == 3).row(0, named=True)
    shares = []
    for rewards in LOG.values():
        values = [_valid(r) for r in rewards]
        draws = list(itertools.product(values, repeat=3))
        shares.append(sum(_group_silent(list(d), "zero") for d in draws) / len(draws))
    assert row["silent_rate"] == pytest.approx(float(np.mean(shares)), abs=1e-12)


def test_per_prompt_rows_count_each_prompts_invalid_rewards(tmp_path: Path) -> None:
    rows = csv_of(invoke("silent", _write(tmp_path), "--rollouts", "--prompt-col", "prompt", "--reward-col",
                         "reward", "--invalid", "mask", "--G", "2", "--per-prompt", "-f", "csv"))  # fmt: skip
    expected = [sum(_valid(r) is None for r in rewards) for rewards in LOG.values()]
    assert rows["invalid"].to_list() == expected


def test_invalid_beside_a_prior_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("silent", _write(tmp_path), "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
                   "--invalid", "mask", "--prior", "beta")  # fmt: skip
    assert done.returncode == 2
    assert "--invalid" in one_error_line(done.stderr)


def _run_log(tmp_path: Path) -> tuple[Path, list[tuple[int, str, list[int | None]]]]:
    """A run of 5 steps, 8 prompts a step, 4 rollouts a group, some rewards invalid."""
    rng = np.random.default_rng(11)
    groups, lines = [], ["step,prompt,reward"]
    for step in range(1, 6):
        for q in range(8):
            p = rng.random()
            rewards: list[int | None] = []
            for _ in range(4):
                text = (
                    str(int(rng.random() < p))
                    if rng.random() > 0.15
                    else str(rng.choice(["error", "nan", ""]))
                )
                rewards.append(_valid(text))
                lines.append(f"{step},q{q},{text}")
            groups.append((step, f"q{q}", rewards))
    path = tmp_path / "run.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, groups


def test_track_counts_each_steps_invalid_rewards(tmp_path: Path) -> None:
    path, groups = _run_log(tmp_path)
    steps = csv_of(invoke("track", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
                          "--step-col", "step", "--invalid", "zero", "-f", "csv"))  # fmt: skip
    for row in steps.iter_rows(named=True):
        mine = [rewards for step, _, rewards in groups if step == row["step"]]
        invalid = sum(x is None for rewards in mine for x in rewards)
        assert row["invalid"] == invalid
        assert row["invalid_share"] == pytest.approx(invalid / sum(len(r) for r in mine), abs=1e-15)
        counted = [r for r in mine if any(x is not None for x in r)]
        zero = [_group_silent(r, "zero") for r in counted]
        assert row["silent_fraction_zero"] == pytest.approx(sum(zero) / len(zero), abs=1e-15)


def test_track_without_invalid_refuses_an_ungradeable_reward(tmp_path: Path) -> None:
    path, _ = _run_log(tmp_path)
    done = invoke("track", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
                  "--step-col", "step", "-f", "csv")  # fmt: skip
    assert done.exit_code == 1


def test_a_log_of_invalid_rewards_alone_has_no_value_and_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("prompt,reward\nq,error\nq,nan\n")
    done = run_cli("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
                   "--invalid", "mask", "-f", "csv")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr

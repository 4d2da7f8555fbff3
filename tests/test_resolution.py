"""``silent --resolution ε``: raw rewards that differ by less than ε tie; checked against the enumeration of
every G-subset (unbiased) and every G-tuple drawn with replacement (plug-in)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import csv_of, invoke, one_error_line, run_cli

RESOLUTION = 0.05


def _log(tmp_path: Path, seed: int = 2) -> tuple[Path, dict[str, list[float]]]:
    """Dense rewards on a coarse grid (so that ties and ranges of exactly ε occur), 5 prompts of 3–6."""
    rng = np.random.default_rng(seed)
    log = {f"q{i}": (rng.integers(0, 8, int(rng.integers(3, 7))) * 0.025).round(3).tolist() for i in range(5)}
    path = tmp_path / "dense.csv"
    lines = ["prompt,reward", *(f"{q},{r!r}" for q, rewards in log.items() for r in rewards)]
    path.write_text("\n".join(lines) + "\n")
    return path, log


def _silent(group: tuple[float, ...], eps: float) -> bool:
    span = max(group) - min(group)
    return span == 0 or span < eps - 1e-12


def _run(path: Path, *extra: object) -> pl.DataFrame:
    return csv_of(invoke("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
                         "--resolution", RESOLUTION, "--G", "2,3", *extra, "-f", "csv"))  # fmt: skip


@pytest.mark.parametrize("G", [2, 3])
def test_silent_and_tie_rates_are_the_enumeration_of_g_subsets(tmp_path: Path, G: int) -> None:
    path, log = _log(tmp_path)
    row = _run(path).filter(pl.col("G") == G).row(0, named=True)
    silent, exact = [], []
    for rewards in log.values():
        subsets = list(itertools.combinations(rewards, G))
        silent.append(sum(_silent(s, RESOLUTION) for s in subsets) / len(subsets))
        exact.append(sum(len(set(s)) == 1 for s in subsets) / len(subsets))
    assert row["silent_rate"] == pytest.approx(np.mean(silent), abs=1e-12)
    assert row["exact_tie_rate"] == pytest.approx(np.mean(exact), abs=1e-12)
    assert row["near_tie_rate"] == pytest.approx(np.mean(silent) - np.mean(exact), abs=1e-12)


def test_plugin_is_the_enumeration_of_draws_with_replacement(tmp_path: Path) -> None:
    path, log = _log(tmp_path)
    row = _run(path, "--estimator", "plugin").filter(pl.col("G") == 3).row(0, named=True)
    silent = []
    for rewards in log.values():
        draws = list(itertools.product(rewards, repeat=3))
        silent.append(sum(_silent(d, RESOLUTION) for d in draws) / len(draws))
    assert row["silent_rate"] == pytest.approx(np.mean(silent), abs=1e-12)


def test_a_range_of_exactly_the_resolution_is_admitted(tmp_path: Path) -> None:
    path = tmp_path / "edge.csv"
    path.write_text("prompt,reward\nq,0.1\nq,0.15\n")
    out = csv_of(invoke("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
                        "--resolution", "0.05", "--G", "2", "-f", "csv"))  # fmt: skip
    assert out["silent_rate"][0] == 0.0


@pytest.mark.parametrize("eps", ["0.3", "1"])
def test_binary_rewards_give_the_plain_silent_share(tmp_path: Path, eps: str) -> None:
    path = tmp_path / "binary.csv"
    rng = np.random.default_rng(8)
    rows = [f"q{i},{int(r)}" for i in range(30) for r in rng.random(6) < rng.random()]
    path.write_text("prompt,reward\n" + "\n".join(rows) + "\n")
    common = ("--rollouts", "--prompt-col", "prompt", "--reward-col", "reward", "--G", "2,4", "-f", "csv")
    plain = csv_of(invoke("silent", path, *common))
    tied = csv_of(invoke("silent", path, *common, "--resolution", eps))
    assert np.allclose(tied["silent_rate"].to_numpy(), plain["silent_rate"].to_numpy(), rtol=0, atol=1e-12)


def test_a_negative_resolution_is_a_usage_error(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    done = run_cli("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
                   "--resolution", "-0.1")  # fmt: skip
    assert done.returncode == 2
    assert "--resolution" in one_error_line(done.stderr)


def test_resolution_with_threshold_is_a_usage_error(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    done = run_cli("silent", path, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward",
                   "--resolution", "0.1", "--threshold", "0.5")  # fmt: skip
    assert done.returncode == 2
    assert "--threshold" in one_error_line(done.stderr)


def _steps_log(tmp_path: Path, dense: bool) -> tuple[Path, list[tuple[int, str, list[float]]]]:
    """A run of 4 steps, 6 prompts a step, 3 rollouts a group: dense rewards on a coarse grid, or 0/1."""
    rng = np.random.default_rng(21 if dense else 22)
    groups, lines = [], ["step,prompt,reward"]
    for step in range(1, 5):
        for q in range(6):
            p = rng.random()
            rewards = [
                float(rng.integers(0, 6) * 0.025) if dense else float(rng.random() < p) for _ in range(3)
            ]
            groups.append((step, f"q{q}", rewards))
            lines += [f"{step},q{q},{r!r}" if dense else f"{step},q{q},{int(r)}" for r in rewards]
    path = tmp_path / "run.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, groups


TRACK = ("--rollouts", "--prompt-col", "prompt", "--reward-col", "reward", "--step-col", "step")


def test_track_steps_are_the_enumeration_of_the_other_steps_subsets(tmp_path: Path) -> None:
    path, groups = _steps_log(tmp_path, dense=True)
    steps = csv_of(invoke("track", path, *TRACK, "--resolution", RESOLUTION, "-f", "csv"))
    for row in steps.iter_rows(named=True):
        mine = [(q, r) for step, q, r in groups if step == row["step"]]
        silent = [_silent(tuple(r), RESOLUTION) for _, r in mine]
        assert row["silent_fraction"] == pytest.approx(np.mean(silent), abs=1e-15)
        expected = []
        for q, r in mine:
            pool = [x for step, other, rs in groups if other == q and step != row["step"] for x in rs]
            subsets = list(itertools.combinations(pool, len(r)))
            expected.append(sum(_silent(s, RESOLUTION) for s in subsets) / len(subsets))
        assert row["expected_silent_fraction"] == pytest.approx(np.mean(expected), abs=1e-12)


def test_track_of_binary_rewards_at_a_resolution_is_the_plain_track(tmp_path: Path) -> None:
    path, _ = _steps_log(tmp_path, dense=False)
    plain = csv_of(invoke("track", path, *TRACK, "-f", "csv"))
    tied = csv_of(invoke("track", path, *TRACK, "--resolution", "0.5", "-f", "csv"))
    for column in ("silent_fraction", "expected_silent_fraction"):
        assert np.allclose(tied[column].to_numpy(), plain[column].to_numpy(), rtol=0, atol=1e-12), column


def test_track_resolution_with_threshold_is_a_usage_error(tmp_path: Path) -> None:
    path, _ = _steps_log(tmp_path, dense=True)
    done = invoke("track", path, *TRACK, "--resolution", "0.1", "--threshold", "0.5")
    assert done.exit_code == 2
    assert "--threshold" in done.stderr

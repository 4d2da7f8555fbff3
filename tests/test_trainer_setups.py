"""Trainer setups beyond the defaults, written as each trainer's own code writes them, read exactly.

NeMo-RL with dynamic sampling, AReaL with several data-parallel workers and AReaL's text files from before
v0.5.2, SkyRL's step-wise trajectories, ROLL with several domains and ROLL's older single file: `silent`
gives the silent rate and `track` the per-step table that the sampled groups give, computed here from the
groups themselves (exact fractions), not from what sigmatool reads.
"""

from __future__ import annotations

import io
import json
import random
from collections import defaultdict
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

from sigmatool.errors import DataError
from sigmatool.trainers.dumps import rollout_counts, scan_trainer
from tests.conftest import invoke
from tests.trainer_fixtures import (
    Group,
    nonzero_std,
    write_areal,
    write_areal_text,
    write_nemo_rl,
    write_roll,
    write_skyrl,
    write_verl,
)

G = 8
PROMPTS = [f"Problem {i}: what is {i} + {i}?" for i in range(6)]


def run(
    seed: int, steps: int = 3, per_step: int = 4, size: int = G, domains: tuple[str, ...] = ()
) -> list[Group]:
    """Groups of ``size`` rewards per step, prompts recurring across steps, some groups all right or all wrong."""
    rng = random.Random(seed)
    groups = []
    for step in range(1, steps + 1):
        for j in range(per_step):
            p = rng.choice([0.0, 0.1, 0.5, 0.8, 1.0])
            rewards = tuple(rng.random() < p for _ in range(size))
            domain = domains[j % len(domains)] if domains else None
            groups.append(Group(step, PROMPTS[(step + j) % len(PROMPTS)], rewards, domain=domain))
    return groups


def true_silent(groups: list[Group], g: int = G) -> float:
    """The plug-in silent rate at group size g from each prompt's pooled rollouts (a prompt: its domain and text)."""
    k: dict[tuple[str | None, str], int] = defaultdict(int)
    n: dict[tuple[str | None, str], int] = defaultdict(int)
    for group in groups:
        for r in group.rewards:
            if r is not None:
                k[group.domain, group.prompt] += int(r)
                n[group.domain, group.prompt] += 1
    rates = [Fraction(k[key], n[key]) for key in n]
    return float(sum(p**g + (1 - p) ** g for p in rates) / len(rates))


def true_step_silent(groups: list[Group]) -> dict[int, float]:
    """Per step, the share of groups whose rewards are all equal."""
    out: dict[int, list[bool]] = defaultdict(list)
    for group in groups:
        out[group.step].append(not nonzero_std(group))
    return {step: sum(flags) / len(flags) for step, flags in sorted(out.items())}


def silent_rate(path: Path, trainer: str) -> float:
    result = invoke(
        "silent",
        path,
        "--from",
        trainer,
        "--G",
        G,
        "--estimator",
        "plugin",
        "--prior",
        "none",
        "--format",
        "csv",
    )
    assert 0 == result.exit_code, result.stderr
    return float(pl.read_csv(io.StringIO(result.stdout))["silent_rate"][0])


def step_silent(path: Path, trainer: str) -> dict[int, float]:
    result = invoke("track", path, "--from", trainer, "--format", "csv")
    assert 0 == result.exit_code, result.stderr
    table = pl.read_csv(io.StringIO(result.stdout))
    return dict(zip(table["step"].to_list(), table["silent_fraction"].to_list(), strict=True))


Setup = tuple[str, Path, list[Group]]  # trainer, folder given to sigmatool, the groups it should read


def _nemo(root: Path) -> Setup:
    groups = run(1)
    write_nemo_rl(root, groups, dynamic=True)
    return "nemo-rl", root, [g for g in groups if nonzero_std(g)]


def _areal_workers(root: Path) -> Setup:
    groups = run(2)
    write_areal(root / "logs", groups, workers=2)
    return "areal", root / "logs", groups


def _areal_text(root: Path) -> Setup:
    groups = run(3)
    write_areal_text(root / "generated", groups)
    return "areal", root / "generated", groups


def _skyrl(root: Path) -> Setup:
    groups = run(4)
    write_skyrl(root, groups, step_wise=True)
    return "skyrl", root, groups


def _roll_domains(root: Path) -> Setup:
    groups = run(5, per_step=6, domains=("math_rule", "code_sandbox"))
    write_roll(root, groups, numbered=True)
    return "roll", root, groups


def _roll_single(root: Path) -> Setup:
    groups = run(6)
    write_roll(root / "dump", groups, single=True)
    return "roll", root, groups


SETUPS: dict[str, Callable[[Path], Setup]] = {
    "nemo-rl dynamic sampling": _nemo,
    "areal two workers": _areal_workers,
    "areal text before v0.5.2": _areal_text,
    "skyrl step-wise": _skyrl,
    "roll two domains": _roll_domains,
    "roll single file": _roll_single,
}


@pytest.fixture(scope="session")
def setups(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Setup]:
    return {name: make(tmp_path_factory.mktemp(name.replace(" ", "-"))) for name, make in SETUPS.items()}


@pytest.mark.parametrize("name", list(SETUPS))
def test_the_silent_rate_is_that_of_the_groups(setups: dict[str, Setup], name: str) -> None:
    trainer, path, groups = setups[name]
    assert pytest.approx(true_silent(groups), rel=1e-12) == silent_rate(path, trainer)


@pytest.mark.parametrize("name", list(SETUPS))
def test_the_step_table_is_that_of_the_groups(setups: dict[str, Setup], name: str) -> None:
    trainer, path, groups = setups[name]
    assert true_step_silent(groups) == step_silent(path, trainer)


def test_the_setups_differ_from_a_naive_reading(setups: dict[str, Setup]) -> None:
    """The fixtures can fail: read as if the setting were off, the numbers differ."""
    _, _, groups = setups["roll two domains"]
    merged = [Group(g.step, str(PROMPTS.index(g.prompt) % 3), g.rewards) for g in groups]
    assert true_silent(groups) != true_silent(merged)


def test_nemo_rl_says_it_reads_filtered_rewards(setups: dict[str, Setup]) -> None:
    _, path, _ = setups["nemo-rl dynamic sampling"]
    result = invoke("silent", path, "--from", "nemo-rl", "--G", G)
    assert "'filtered_rewards'" in result.stderr


def test_nemo_rl_rewards_column_is_the_unfiltered_batch(setups: dict[str, Setup], tmp_path: Path) -> None:
    """Read with --reward-col rewards, the kept rows take the generation batch's rewards by position."""
    _, path, groups = setups["nemo-rl dynamic sampling"]
    result = invoke(
        "silent",
        path,
        "--from",
        "nemo-rl",
        "--reward-col",
        "rewards",
        "--G",
        G,
        "--prior",
        "none",
        "--format",
        "csv",
    )
    assert pytest.approx(true_silent(groups)) != float(
        pl.read_csv(io.StringIO(result.stdout))["silent_rate"][0]
    )


def test_skyrl_step_wise_is_noted(setups: dict[str, Setup]) -> None:
    _, path, _ = setups["skyrl step-wise"]
    result = invoke("silent", path, "--from", "skyrl", "--G", G)
    assert "step_wise_trajectories" in result.stderr


def test_areal_text_that_is_not_a_dump_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "generated" / "3" / "q1.txt"
    path.parent.mkdir(parents=True)
    path.write_text("idx: 1 / 2, seqlen: 9, reward is 1.0.\nsomething else\n")
    with pytest.raises(DataError, match=r"not an AReaL before v0\.5\.2"):
        rollout_counts(scan_trainer("areal", [str(path)]))


def test_areal_text_names_a_reward_that_is_not_binary(tmp_path: Path) -> None:
    write_areal_text(tmp_path, [Group(2, "a?", (True, False))])
    path = next(tmp_path.rglob("*.txt"))
    path.write_text(path.read_text().replace("reward is 1.0.", "reward is 0.5.", 1))
    with pytest.raises(DataError, match=r"field 'reward'.*at row 1"):
        rollout_counts(scan_trainer("areal", [str(path)]))


def test_a_group_that_mixes_prompts_is_named_by_file_and_row(tmp_path: Path) -> None:
    """A uid shared by two prompts (a reward function's bug): the message names a place to open."""
    (path,) = write_verl(tmp_path, [Group(1, "a?", (True, False)), Group(1, "b?", (False, True))], uid=True)
    lines = path.read_text().splitlines()
    uid = json.loads(lines[0])["uid"]
    path.write_text("\n".join(json.dumps(json.loads(line) | {"uid": uid}) for line in lines) + "\n")
    result = invoke("track", path, "--from", "verl", "--format", "csv")
    assert 1 == result.exit_code
    assert f"at {path} row " in result.stderr


# ------------------------------------------------------------------------------------------------ std

RUN = "sample_data/example_run"


@pytest.mark.parametrize("command", ["groupsize", "plan"])
def test_from_uses_the_trainers_std(command: str) -> None:
    default = invoke(command, RUN, "--from", "verl", "--format", "csv")
    assert (
        invoke(command, RUN, "--from", "verl", "--std", "bessel", "--format", "csv").stdout == default.stdout
    )
    assert "--from verl: σ is Bessel's std" in default.stderr


def test_std_given_wins_over_the_trainers() -> None:
    given = invoke("groupsize", RUN, "--from", "verl", "--std", "population", "--format", "csv")
    assert "σ is Bessel's std" not in given.stderr
    assert invoke("groupsize", RUN, "--from", "verl", "--format", "csv").stdout != given.stdout


def test_drgrpo_divides_by_no_std_whatever_the_trainer() -> None:
    result = invoke("groupsize", RUN, "--from", "verl", "--method", "drgrpo", "--format", "csv")
    assert 0 == result.exit_code
    assert "σ is" not in result.stderr


def test_nemo_rl_leave_one_out_std_keeps_population(setups: dict[str, Setup]) -> None:
    _, path, _ = setups["nemo-rl dynamic sampling"]
    default = invoke("groupsize", path, "--from", "nemo-rl", "--format", "csv")
    assert (
        invoke("groupsize", path, "--from", "nemo-rl", "--std", "population", "--format", "csv").stdout
        == default.stdout
    )
    assert "leave-one-out" in default.stderr

"""Grouping sanity: a dump whose prompts collapse to one key, a key that pools several prompts, prompts with
one rollout. Dumps are written as verl and TRL write them (tests/trainer_fixtures.py)."""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest

from sigmatool.load.grouping import key_notes
from tests.conftest import csv_of, invoke
from tests.trainer_fixtures import Group, write_trl, write_verl

# A vision-language run: 16 prompts, each an image and one question; the dump keeps the decoded text only.
QUESTION = "<|vision_start|><|image_pad|><|vision_end|>What is the value of x in the figure?"
G = 64


def _vision_groups(seed: int = 0) -> list[Group]:
    rng = random.Random(seed)
    rates = [rng.random() for _ in range(16)]
    return [Group(1, QUESTION, tuple(rng.random() < p for _ in range(G))) for p in rates]


@pytest.fixture(scope="module")
def vision(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Group]]:
    root = tmp_path_factory.mktemp("vision")
    groups = _vision_groups()
    write_verl(root / "uid", groups, uid=True)
    write_verl(root / "plain", groups)
    return root / "uid", root / "plain", groups


def _stderr(*args: object) -> str:
    result = invoke(*args)
    assert 0 == result.exit_code, result.stderr
    return " ".join(result.stderr.split())


@pytest.mark.parametrize("command", ["silent", "track"])
def test_a_collapsed_prompt_key_is_named(vision, command: str) -> None:  # type: ignore[no-untyped-def]
    _, plain, _ = vision
    said = _stderr(command, plain, "--from", "verl")
    assert "every rollout has the same prompt key 'input'" in said


def test_the_note_names_the_vision_language_cause(vision) -> None:  # type: ignore[no-untyped-def]
    _, plain, _ = vision
    assert "a vision-language run's images are not in it" in _stderr("silent", plain, "--from", "verl")


def test_the_note_names_the_way_out(vision) -> None:  # type: ignore[no-untyped-def]
    _, plain, _ = vision
    assert "--rollouts --prompt-col COL" in _stderr("silent", plain, "--from", "verl")


def test_the_collapsed_key_is_said_once(vision) -> None:  # type: ignore[no-untyped-def]
    _, plain, _ = vision
    assert 1 == _stderr("track", plain, "--from", "verl").count("same prompt key")


def test_with_uid_the_groups_follow_it(vision) -> None:  # type: ignore[no-untyped-def]
    uid, _, groups = vision
    table = csv_of(invoke("track", uid, "--from", "verl", "--format", "csv"))
    assert (len(groups), G, G) == (
        table["groups"].item(),
        table["min_group_size"].item(),
        table["max_group_size"].item(),
    )


def test_with_uid_the_silent_share_is_the_groups(vision) -> None:  # type: ignore[no-untyped-def]
    uid, _, groups = vision
    table = csv_of(invoke("track", uid, "--from", "verl", "--format", "csv"))
    assert sum(len(set(g.rewards)) == 1 for g in groups) / len(groups) == table["silent_fraction"].item()


def test_with_uid_the_collapsed_prompt_key_is_still_named(vision) -> None:  # type: ignore[no-untyped-def]
    uid, _, _ = vision
    assert "every rollout has the same prompt key" in _stderr("track", uid, "--from", "verl")


def test_without_uid_the_step_reads_as_one_group(vision) -> None:  # type: ignore[no-untyped-def]
    _, plain, groups = vision
    table = csv_of(invoke("track", plain, "--from", "verl", "--format", "csv"))
    assert (1, len(groups) * G) == (table["groups"].item(), table["max_group_size"].item())


def test_a_key_that_pools_several_prompts_is_named(tmp_path: Path) -> None:
    rng = random.Random(1)
    groups = [Group(1, f"question {i}", tuple(rng.random() < 0.5 for _ in range(8))) for i in range(15)]
    groups += [Group(1, QUESTION, tuple(rng.random() < 0.5 for _ in range(8))) for _ in range(8)]
    write_trl(tmp_path, groups)
    said = _stderr("silent", tmp_path, "--from", "trl")
    assert "a prompt key of 'prompt'" in said
    assert "holds 64 rollouts against a median of 8" in said


def test_every_prompt_with_one_rollout_is_flagged(tmp_path: Path) -> None:
    groups = [Group(s, f"q{s}-{i}", (bool(i % 2),)) for s in (1, 2) for i in range(10)]
    write_verl(tmp_path, groups)
    assert "every prompt has one usable rollout (n = 1)" in _stderr("silent", tmp_path, "--from", "verl")


def test_the_prompts_with_one_rollout_are_counted(tmp_path: Path) -> None:
    groups = [Group(1, f"q{i}", (True, False, True)) for i in range(7)]
    groups += [Group(1, f"single {i}", (True,)) for i in range(3)]
    write_verl(tmp_path, groups)
    assert "3 of 10 prompts have one usable rollout (n = 1)" in _stderr("silent", tmp_path, "--from", "verl")


def test_rollouts_name_their_prompt_column(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    pl.DataFrame({"q": ["a"] * 6, "r": [1, 0, 1, 1, 0, 0]}).write_csv(path)
    said = _stderr("silent", path, "--rollouts", "--prompt-col", "q", "--reward-col", "r")
    assert "every rollout has the same prompt key 'q'" in said


def test_a_well_grouped_log_gets_no_note() -> None:
    counts = pl.DataFrame({"n": [8, 16, 7], "prompts": [100, 3, 5]})
    assert [] == key_notes(counts, trainer="verl")


def test_one_prompt_per_step_gets_no_note() -> None:
    counts = pl.DataFrame({"step": [1, 2, 3], "n": [6, 6, 6], "prompts": [1, 1, 1]})
    assert [] == key_notes(counts, ("step",), trainer="trl")


def test_one_prompt_over_the_whole_log_gets_a_note() -> None:
    counts = pl.DataFrame({"n": [1024], "prompts": [1]})
    assert 1 == len(key_notes(counts, trainer="verl"))

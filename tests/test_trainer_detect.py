"""A trainer's dump given without --from: the error (or, under --rollouts, a note) names the trainer."""

from __future__ import annotations

from pathlib import Path

import pytest

from sigmatool.trainers.dumps.detect import trainer_of
from tests.conftest import invoke
from tests.trainer_fixtures import WRITERS, Group

GROUPS = [Group(1, "What is 2+2?", (True, False, True)), Group(2, "Name a prime.", (False, False, True))]


@pytest.fixture(scope="session")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One dump file per trainer, as its writer writes it."""
    root = tmp_path_factory.mktemp("detect")
    return {trainer: write(root / trainer, GROUPS)[0] for trainer, write in WRITERS.items()}


@pytest.mark.parametrize("trainer", list(WRITERS))
def test_a_dump_without_from_names_its_trainer(dumps: dict[str, Path], trainer: str) -> None:
    result = invoke("silent", dumps[trainer])
    assert 1 == result.exit_code
    assert f"--from {trainer}\n" in result.stderr
    assert 1 == len(result.stderr.strip().splitlines())


@pytest.mark.parametrize("trainer", list(WRITERS))
def test_rollouts_with_missing_columns_name_the_trainer(dumps: dict[str, Path], trainer: str) -> None:
    result = invoke("silent", dumps[trainer], "--rollouts", "--prompt-col", "q", "--reward-col", "r")
    assert 1 == result.exit_code
    assert f"{'an' if trainer[0] in 'aeio' else 'a'} {trainer} rollout dump" in result.stderr


def test_rollouts_on_a_dump_notes_the_trainer(dumps: dict[str, Path]) -> None:
    result = invoke(
        "silent", dumps["verl"], "--rollouts", "--prompt-col", "input", "--reward-col", "score", "--G", "2",
        "--format", "csv",
    )  # fmt: skip
    assert 0 == result.exit_code
    assert "read it with --from verl" in result.stderr


def test_a_table_of_pass_rates_names_no_trainer() -> None:
    assert trainer_of(["prompt", "completion", "pass_rate"]) is None


def test_areal_is_not_read_as_trl() -> None:
    found = trainer_of(["task_id", "sample_idx", "prompt", "completion", "reward", "step"])
    assert "areal" == (found or ("",))[0]

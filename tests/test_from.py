"""--from: every command reads a trainer's dumps exactly as it reads the same rollouts written as a plain table.

The explicit table is the fixture's own rollouts with the prompt key each reader hashes (tests/trainer_fixtures.py),
read with --rollouts --prompt-col prompt --reward-col reward; the two outputs must be identical, byte for byte.
"""

from __future__ import annotations

import io
import json
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import polars as pl
import pytest

from sigmatool.trainers.std import TRAINER_STD
from tests.conftest import csv_of, invoke, run_in
from tests.trainer_fixtures import WRITERS, Group, rollouts_csv, write_areal, write_trl, write_verl

T, F = True, False
# Repeated prompts in one step, groups of several sizes, all-right and all-wrong groups, missing rewards,
# prompts over several steps.
TABLE = [
    Group(1, "What is 2+2?", (T, F, None, T)),
    Group(1, "Solve x+1=3", (F, F)),
    Group(1, "What is 2+2?", (F, T, T)),
    Group(1, "Name a prime", (T, T, F, F, None)),
    Group(2, "What is 2+2?", (T, T, T)),
    Group(2, "Solve x+1=3", (None, F, T)),
    Group(2, "Name a prime", (T, F)),
    Group(3, "Integrate x dx", (F, F, F, F)),
    Group(3, "Name a prime", (T, T, T)),
]
VARIANTS = [
    ("verl", {}),
    ("verl", {"dapo": True}),
    ("trl", {}),
    ("nemo-rl", {}),
    ("areal", {}),
    ("skyrl", {}),
    ("roll", {}),
]
VARIANT_IDS = [f"{t}{'-' + '-'.join(kw) if kw else ''}" for t, kw in VARIANTS]
COMMANDS = [
    ("silent", "--G", "2,4,8"),
    ("silent", "--G", "2,3", "--estimator", "unbiased"),
    ("silent", "--G", "4", "--by", "step"),
    ("budget", "--G", "4,inf"),
    ("budget", "--G", "8", "--by", "step"),
    ("groupsize", "--fidelity", "0.8"),
    ("groupsize", "--by", "step", "--bins", "0"),
]
EXPLICIT = ("--rollouts", "--prompt-col", "prompt", "--reward-col", "reward")


def dumps(trainer: str, folder: Path, groups: list[Group], **kw: object) -> Path:
    """Write the trainer's dumps under ``folder`` and return the folder (searched like a trainer's own)."""
    WRITERS[trainer](folder, groups, **kw)  # type: ignore[operator]
    return folder


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
@pytest.mark.parametrize(("trainer", "kw"), VARIANTS, ids=VARIANT_IDS)
def test_from_gives_the_output_of_the_explicit_rollout_table(
    trainer: str, kw: dict[str, object], command: tuple[str, ...], tmp_path: Path
) -> None:
    folder = dumps(trainer, tmp_path / "dump", TABLE, **kw)
    table = rollouts_csv(TABLE, tmp_path / "explicit.csv", trainer)
    # With --from, groupsize divides by the trainer's σ: the explicit table is asked for the same one.
    std = ("--std", TRAINER_STD[trainer] or "population") if command[0] == "groupsize" else ()
    explicit = invoke(*command, table, *EXPLICIT, *std, "--format", "csv")
    via_from = invoke(*command, folder, "--from", trainer, "--format", "csv")
    assert explicit.exit_code == 0, explicit.stderr
    assert explicit.stdout == via_from.stdout


@pytest.mark.parametrize(("trainer", "kw"), VARIANTS, ids=VARIANT_IDS)
def test_per_prompt_rows_are_those_of_the_explicit_table(
    trainer: str, kw: dict[str, object], tmp_path: Path
) -> None:
    folder = dumps(trainer, tmp_path / "dump", TABLE, **kw)
    table = rollouts_csv(TABLE, tmp_path / "explicit.csv", trainer)
    args = ("silent", "--G", "2", "--per-prompt", "--format", "csv")
    explicit = csv_of(invoke(*args[:1], table, *args[1:], *EXPLICIT)).drop("id").sort("p")
    via_from = csv_of(invoke(*args[:1], folder, *args[1:], "--from", trainer))
    assert explicit.equals(via_from.drop("id").sort("p"))


def test_per_prompt_ids_are_the_hash_of_the_prompt_text(tmp_path: Path) -> None:
    folder = dumps("verl", tmp_path / "dump", TABLE)
    rows = csv_of(invoke("silent", folder, "--from", "verl", "--per-prompt", "--format", "csv"))
    texts = sorted({g.prompt for g in TABLE})
    assert sorted(pl.Series(texts).hash().to_list()) == sorted(rows["id"].cast(pl.UInt64).to_list())


def test_the_reward_rule_is_named_on_stderr(tmp_path: Path) -> None:
    folder = dumps("verl", tmp_path / "dump", TABLE, dapo=True)
    result = invoke("silent", folder, "--from", "verl", "--format", "csv")
    assert "note: verl: reward from the boolean 'acc' field (true = right)" in result.stderr.splitlines()


def test_reward_col_overrides_the_default_field(tmp_path: Path) -> None:
    folder = dumps("verl", tmp_path / "dump", TABLE, dapo=True)
    result = invoke("silent", folder, "--from", "verl", "--reward-col", "score", "--format", "csv")
    assert "note: verl: reward from 'score': 1 is right, 0 or -1 wrong" in result.stderr.splitlines()


def test_the_dapo_score_gives_what_acc_gives(tmp_path: Path) -> None:
    folder = dumps("verl", tmp_path / "dump", [g for g in TABLE if None not in g.rewards], dapo=True)
    by_acc = invoke("silent", folder, "--from", "verl", "--format", "csv")
    by_score = invoke("silent", folder, "--from", "verl", "--reward-col", "score", "--format", "csv")
    assert by_acc.stdout == by_score.stdout


def test_a_threshold_grades_partial_rewards(tmp_path: Path) -> None:
    files = write_areal(tmp_path / "dump", [Group(1, "a?", (T, F, T, F))])
    for path in files:
        rows = [json.loads(line) | {"reward": 0.75} for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = csv_of(invoke("silent", tmp_path / "dump", "--from", "areal", "--threshold", "0.5", "--G", "2"))
    assert 1.0 == out["silent_rate"].item()


def test_several_trl_reward_columns_ask_for_one(tmp_path: Path) -> None:
    write_trl(tmp_path / "run", TABLE, reward_names=("accuracy_reward", "format_reward"))
    result = invoke("silent", tmp_path / "run", "--from", "trl")
    assert 2 == result.exit_code
    assert (
        "several reward columns (accuracy_reward, format_reward); choose one with --reward-col"
        in result.stderr
    )


def test_a_chosen_trl_reward_column_reads_like_the_table(tmp_path: Path) -> None:
    write_trl(tmp_path / "run", TABLE, reward_names=("accuracy_reward", "format_reward"))
    table = rollouts_csv(TABLE, tmp_path / "explicit.csv", "trl")
    chosen = invoke(
        "silent", tmp_path / "run", "--from", "trl", "--reward-col", "accuracy_reward", "-f", "csv"
    )
    assert invoke("silent", table, *EXPLICIT, "-f", "csv").stdout == chosen.stdout


def test_a_glob_reads_the_files_it_matches(tmp_path: Path) -> None:
    folder = dumps("verl", tmp_path / "dump", TABLE)
    table = rollouts_csv([g for g in TABLE if g.step <= 2], tmp_path / "explicit.csv")
    via_glob = invoke("silent", str(folder / "[12].jsonl"), "--from", "verl", "-f", "csv")
    assert invoke("silent", table, *EXPLICIT, "-f", "csv").stdout == via_glob.stdout


def test_simulate_starts_from_dumps_given_with_init(tmp_path: Path) -> None:
    folder = dumps("verl", tmp_path / "dump", TABLE)
    table = rollouts_csv(TABLE, tmp_path / "explicit.csv")
    args = ("simulate", "--prompts", "50", "--steps", "3", "-f", "csv")
    via_from = invoke(*args, "--init", folder, "--from", "verl")
    assert invoke(*args, "--init", table, *EXPLICIT).stdout == via_from.stdout


# ------------------------------------------------------------------------------------------------ bad input


def sigmatool(*args: object) -> subprocess.CompletedProcess[str]:
    """The installed entry point in a real process, with no stdin."""
    return subprocess.run(
        [sys.executable, "-m", "sigmatool", *map(str, args)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _torch_archive(folder: Path) -> Path:
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "3.jsonl", "w") as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    return folder


def _pickle(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "rollout_0.pt").write_bytes(pickle.dumps({"samples": []}, protocol=4))
    return folder / "rollout_0.pt"


def _parquet_as_verl(folder: Path) -> Path:
    return write_trl(folder, TABLE)[0]


def _csv_as_verl(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "1.jsonl").write_text("input,score\nq,1\n")
    return folder


def _other_trainer(folder: Path) -> Path:
    write_verl(folder, TABLE)
    return folder / "1.jsonl"


def _empty_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("no dumps here\n")
    return folder


def _non_binary(folder: Path) -> Path:
    write_verl(folder, [Group(1, "a?", (T, F))], reorder=False)
    path = folder / "1.jsonl"
    rows = [json.loads(line) | {"score": 0.5} for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


BAD_DUMPS = {
    "torch.save archive": (_torch_archive, "verl", "never unpickles"),
    "pickle file": (_pickle, "verl", "never unpickles"),
    "parquet file as verl": (_parquet_as_verl, "verl", "not a verl dump: cannot read it as JSON lines"),
    "csv file as verl": (_csv_as_verl, "verl", "not a verl dump: cannot read it as JSON lines"),
    "another trainer's dump": (
        _other_trainer,
        "areal",
        "missing field(s) 'task_id', 'prompt' for a areal dump",
    ),
    "folder without dumps": (_empty_folder, "nemo-rl", "no nemo-rl dump file in it or below it"),
    "reward not 0/1": (_non_binary, "verl", "field 'score': reward not 0/1 or ±1"),
}


@pytest.mark.parametrize("case", list(BAD_DUMPS))
def test_bad_dumps_end_in_one_line_and_exit_1(case: str, tmp_path: Path) -> None:
    make, trainer, expected = BAD_DUMPS[case]
    # The first case in a real process, the others in-process through the same entry point.
    run = sigmatool if case == next(iter(BAD_DUMPS)) else run_in
    done = run("silent", make(tmp_path / "run"), "--from", trainer)
    assert 1 == done.returncode
    assert 1 == len(done.stderr.splitlines())
    assert done.stderr.startswith("error: ")
    assert expected in done.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["nothing/here"], "error: nothing/here: no such file"),
        (["nothing/*.jsonl"], "error: nothing/*.jsonl: no file matches this pattern"),
    ],
)
def test_missing_dumps_end_in_one_line_and_exit_1(args: list[str], expected: str, tmp_path: Path) -> None:
    run = sigmatool if args == ["nothing/here"] else run_in
    done = run("silent", *args, "--from", "verl")
    assert 1 == done.returncode
    assert [expected] == done.stderr.splitlines()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--from", "verl"], "give the dump files, globs or the folder that holds them"),
        (["x", "--from", "verl", "--col", "p"], "--col does not apply"),
        (["x", "--from", "verl", "--by", "source"], "--by can only be step"),
        (["-", "--from", "verl"], "not standard input"),
        (["x", "--from", "openrlhf"], "'openrlhf' is not one of"),
    ],
)
def test_misused_from_is_a_usage_error(args: list[str], expected: str) -> None:
    run = sigmatool if args == ["--from", "verl"] else run_in
    done = run("silent", *args)
    assert 2 == done.returncode
    assert 1 == len(done.stderr.splitlines())
    assert expected in done.stderr


def test_the_reward_of_a_rollout_log_is_read_per_row_not_as_a_histogram(tmp_path: Path) -> None:
    folder = dumps("verl", tmp_path / "dump", TABLE)
    result = invoke("silent", folder, "--from", "verl", "--format", "json")
    assert 4 == json.load(io.StringIO(result.stdout))[0]["prompts"]

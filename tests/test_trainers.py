"""Trainer dump readers: the same k and n as the explicit rollout table, discovery, reward rules, refusals."""

from __future__ import annotations

import json
import pickle
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sigmatool.errors import DataError, UsageError
from sigmatool.load import InputOptions, dataset, per_prompt_frame
from sigmatool.trainers.dumps import TRAINERS, find_dump_files, rollout_counts, scan_trainer
from tests.trainer_fixtures import (
    WRITERS,
    Group,
    prompt_key,
    rollouts_csv,
    write_areal,
    write_nemo_rl,
    write_roll,
    write_skyrl,
    write_trl,
    write_verl,
)

T, F = True, False
# Repeated prompts in one step (adjacent and not), varying group sizes, all-right and all-wrong groups,
# missing rewards, a prompt over several steps.
TABLE = [
    Group(1, "What is 2+2?", (T, F, None, T)),
    Group(1, "Solve x+1=3", (F, F)),
    Group(1, "What is 2+2?", (F, T, T)),
    Group(1, "Name a prime", (T,)),
    Group(1, "Name a prime", (T, T, F, F, None)),
    Group(2, "What is 2+2?", (T, T, T)),
    Group(2, "Solve x+1=3", (None, F)),
    Group(3, "Integrate x dx", (F, F, F, F)),
]

VARIANTS = [
    ("verl", {}),
    ("verl", {"reorder": False}),
    ("verl", {"uid": True}),
    ("verl", {"dapo": True}),
    ("trl", {}),
    ("nemo-rl", {}),
    ("nemo-rl", {"val": True}),
    ("areal", {}),
    ("skyrl", {}),
    ("roll", {}),
]


def expected_counts(
    trainer: str, groups: list[Group], folder: Path
) -> dict[tuple[int, int], tuple[int, int]]:
    """(step, prompt hash) -> (k, n) from the explicit table read by ``--rollouts``."""
    csv = rollouts_csv(groups, folder / "explicit.csv", trainer)
    options = InputOptions(
        paths=(str(csv),), rollouts=True, prompt_col="prompt", reward_col="reward", by=("step",)
    )
    with dataset(options) as ds:
        per = per_prompt_frame(ds).collect()
    hashes = per["id"].cast(pl.String).hash()
    return {(s, h): (k, n) for s, h, k, n in zip(per["step"], hashes, per["k"], per["n"], strict=True)}


def read_counts(
    trainer: str, files: list[Path] | list[str], **options: object
) -> dict[tuple[int, int], tuple[int, int]]:
    log = scan_trainer(trainer, [str(f) for f in files], **options)  # type: ignore[arg-type]
    out = rollout_counts(log).filter(pl.col("n") > 0)
    return {(s, p): (k, n) for s, p, k, n in out.select("step", "prompt", "k", "n").iter_rows()}


def write(trainer: str, folder: Path, groups: list[Group], **kw: object) -> list[Path]:
    return WRITERS[trainer](folder, groups, **kw)  # type: ignore[operator, no-any-return]


# ------------------------------------------------------------------------------------------------ counts


@pytest.mark.parametrize(
    ("trainer", "kw"), VARIANTS, ids=[f"{t}-{'-'.join(k) or 'plain'}" for t, k in VARIANTS]
)
def test_reader_counts_equal_the_explicit_rollout_table(
    trainer: str, kw: dict[str, object], tmp_path: Path
) -> None:
    files = write(trainer, tmp_path / "dump", TABLE, **kw)
    assert expected_counts(trainer, TABLE, tmp_path) == read_counts(trainer, files)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(VARIANTS),
    groups=st.lists(
        st.builds(
            Group,
            step=st.integers(1, 3),
            prompt=st.sampled_from(["p one", "p two", "p three", "p four"]),
            rewards=st.lists(st.sampled_from([T, F, None]), min_size=1, max_size=6).map(tuple),
            system=st.sampled_from([None, "Be brief."]),
        ),
        min_size=1,
        max_size=10,
    ),
)
def test_any_group_table_reads_back_to_its_counts(
    variant: tuple[str, dict[str, object]], groups: list[Group]
) -> None:
    trainer, kw = variant
    if all(r is None for g in groups for r in g.rewards):
        groups = [*groups, Group(1, "p one", (T,))]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = write(trainer, folder / "dump", groups, **kw)
        assert expected_counts(trainer, groups, folder) == read_counts(trainer, files)


def test_every_trainer_has_a_fixture() -> None:
    # The logs of eval harnesses and rollout collectors have theirs in tests/log_fixtures.py (tests/test_logs.py);
    # W&B tables, rlprobe and miles theirs in tests/test_wandb_table.py, test_rlprobe.py and test_miles.py.
    others = {"verifiers", "nemo-gym", "open-instruct", "wandb-table", "rlprobe", "miles"}
    assert set(TRAINERS) == set(WRITERS) | others


# ------------------------------------------------------------------------------------------------ groups


def groups_per_prompt(trainer: str, files: list[Path]) -> list[int]:
    out = rollout_counts(scan_trainer(trainer, [str(f) for f in files]))
    return sorted(out["groups"].to_list())


def test_verl_uid_separates_two_groups_of_one_prompt(tmp_path: Path) -> None:
    files = write_verl(tmp_path, TABLE, uid=True)
    assert [1, 1, 1, 1, 2, 2] == groups_per_prompt("verl", files)


def test_verl_without_uid_groups_by_step_and_input(tmp_path: Path) -> None:
    files = write_verl(tmp_path, TABLE)
    assert [1, 1, 1, 1, 1, 1] == groups_per_prompt("verl", files)


def test_nemo_rl_contiguous_runs_are_groups(tmp_path: Path) -> None:
    table = [Group(1, "a?", (T, F)), Group(1, "b?", (T, T)), Group(1, "a?", (F, F)), Group(1, "a?", (T,))]
    files = write_nemo_rl(tmp_path, table)
    # The second and third "a?" groups are adjacent, so they read as one run.
    assert [1, 2] == groups_per_prompt("nemo-rl", files)


def test_nemo_rl_system_message_is_part_of_the_prompt(tmp_path: Path) -> None:
    table = [Group(1, "a?", (T, F), system="Be brief."), Group(1, "a?", (T, T))]
    files = write_nemo_rl(tmp_path, table)
    assert expected_counts("nemo-rl", table, tmp_path) == read_counts("nemo-rl", files)


def test_areal_step_is_the_policy_version_and_a_group_is_a_task(tmp_path: Path) -> None:
    files = write_areal(tmp_path, TABLE)
    out = rollout_counts(scan_trainer("areal", [str(f) for f in files]))
    assert [1, 2, 3] == sorted(set(out["step"].to_list()))
    assert [1, 1, 1, 1, 2, 2] == sorted(out["groups"].to_list())


# ------------------------------------------------------------------------------------------------ rewards


def test_dapo_reward_comes_from_acc(tmp_path: Path) -> None:
    log = scan_trainer("verl", [str(f) for f in write_verl(tmp_path, TABLE, dapo=True)])
    assert "verl: reward from the boolean 'acc' field (true = right)" == log.notes[0]


def test_dapo_plus_minus_one_score_counts_like_acc(tmp_path: Path) -> None:
    files = write_verl(tmp_path, [g for g in TABLE if None not in g.rewards], dapo=True)
    assert read_counts("verl", files) == read_counts("verl", files, reward_col="score")


def test_missing_acc_is_skipped_and_noted(tmp_path: Path) -> None:
    log = scan_trainer("verl", [str(f) for f in write_verl(tmp_path, TABLE, dapo=True)])
    rollout_counts(log)
    assert "verl: skipped 3 rollout(s) with a missing reward" == log.notes[-1]


def rewrite_json_lines(path: Path, change: dict[str, object]) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**row, **change}) + "\n" for row in rows))


def test_a_reward_that_is_not_binary_is_named_with_file_field_and_rows(tmp_path: Path) -> None:
    files = write_areal(tmp_path, [Group(1, "a?", (T, F, T))])
    rewrite_json_lines(files[0], {"reward": 0.5})
    with pytest.raises(
        DataError, match=r"0\.jsonl: field 'reward': reward not 0/1 or ±1 .* at rows 1, 2, 3$"
    ):
        rollout_counts(scan_trainer("areal", [str(files[0])]))


def test_a_threshold_makes_any_number_gradeable(tmp_path: Path) -> None:
    files = write_areal(tmp_path, [Group(1, "a?", (T, F, T))])
    rewrite_json_lines(files[0], {"reward": 0.5})
    assert {1: (3, 3)} == {s: kn for (s, _), kn in read_counts("areal", files, threshold=0.5).items()}


def test_dapo_overlong_penalty_needs_a_threshold(tmp_path: Path) -> None:
    files = write_verl(tmp_path, [Group(1, "a?", (T, F))], dapo=True, reorder=False)
    rows = [json.loads(line) for line in files[0].read_text().splitlines()]
    rows = [{k: v for k, v in row.items() if k != "acc"} | {"score": row["score"] - 0.25} for row in rows]
    files[0].write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match="field 'score'"):
        rollout_counts(scan_trainer("verl", [str(files[0])]))


def test_trl_with_two_reward_columns_asks_which(tmp_path: Path) -> None:
    files = write_trl(tmp_path, TABLE, reward_names=("accuracy_reward", "format_reward"))
    with pytest.raises(UsageError, match=r"several reward columns \(accuracy_reward, format_reward\)"):
        scan_trainer("trl", [str(f) for f in files])


def test_trl_reward_column_chooses_one(tmp_path: Path) -> None:
    files = write_trl(tmp_path, TABLE, reward_names=("accuracy_reward", "format_reward"))
    assert expected_counts("trl", TABLE, tmp_path) == read_counts("trl", files, reward_col="accuracy_reward")


def test_an_unknown_reward_column_is_named(tmp_path: Path) -> None:
    files = write_trl(tmp_path, TABLE)
    with pytest.raises(DataError, match="no reward field 'nope'"):
        scan_trainer("trl", [str(f) for f in files], reward_col="nope")


def test_skyrl_token_level_rewards_are_summed(tmp_path: Path) -> None:
    files = write_skyrl(tmp_path, [Group(1, "a?", (T, F, T))])
    rewrite_json_lines(files[0], {"score": [0.0, 0.0, 1.0]})
    assert {1: (3, 3)} == {s: kn for (s, _), kn in read_counts("skyrl", files).items()}


# ------------------------------------------------------------------------------------------------ files


def test_a_folder_is_searched_for_the_trainers_files(tmp_path: Path) -> None:
    write_trl(tmp_path, TABLE)
    assert [1, 2, 3] == [f.step for f in find_dump_files("trl", [str(tmp_path)])]


def test_a_glob_picks_files_and_their_steps(tmp_path: Path) -> None:
    write_verl(tmp_path, TABLE)
    assert [2, 3] == [f.step for f in find_dump_files("verl", [str(tmp_path / "[23].jsonl")])]


def test_nemo_rl_folder_search_takes_training_dumps_only(tmp_path: Path) -> None:
    write_nemo_rl(tmp_path, TABLE)
    write_nemo_rl(tmp_path, TABLE, val=True)
    names = [Path(f.path).name for f in find_dump_files("nemo-rl", [str(tmp_path)])]
    assert ["train_data_step1.jsonl", "train_data_step2.jsonl", "train_data_step3.jsonl"] == names


def test_skyrl_folder_search_skips_aggregated_results(tmp_path: Path) -> None:
    write_skyrl(tmp_path, TABLE)
    names = {Path(f.path).name for f in find_dump_files("skyrl", [str(tmp_path)])}
    assert {"gsm8k.jsonl", "math_aime.jsonl"} == names


def test_areal_folder_search_skips_eval_rollouts(tmp_path: Path) -> None:
    write_areal(tmp_path, TABLE)
    write_areal(tmp_path / "eval", TABLE)
    (tmp_path / "eval" / "rollout").rename(tmp_path / "eval-rollout")
    assert 8 == len(find_dump_files("areal", [str(tmp_path)]))


def test_a_folder_without_dumps_names_the_pattern(tmp_path: Path) -> None:
    with pytest.raises(
        DataError,
        match=r"no roll dump file in it or below it \(looked for rollout_dump_data\.step_\{N\}\.jsonl, or "
        r"rollout_data\.jsonl\)",
    ):
        find_dump_files("roll", [str(tmp_path)])


def test_an_explicit_file_keeps_its_step_from_the_name(tmp_path: Path) -> None:
    files = write_roll(tmp_path, TABLE)
    assert [3] == [f.step for f in find_dump_files("roll", [str(files[-1])])]


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file"):
        find_dump_files("verl", [str(tmp_path / "7.jsonl")])


def test_an_unknown_trainer_lists_the_known_ones() -> None:
    with pytest.raises(UsageError, match="known trainers: verl, trl, nemo-rl, areal, skyrl, roll"):
        find_dump_files("openrlhf", ["x"])


def test_a_torch_save_archive_is_refused_by_content(tmp_path: Path) -> None:
    path = tmp_path / "rollout_data" / "3.jsonl"
    path.parent.mkdir()
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    with pytest.raises(DataError, match="never unpickles"):
        find_dump_files("verl", [str(path.parent)])


def test_a_pickle_stream_is_refused_by_content(tmp_path: Path) -> None:
    path = tmp_path / "completions_00001.parquet"
    path.write_bytes(pickle.dumps({"rollout_id": 1, "samples": []}, protocol=4))
    with pytest.raises(DataError, match="never unpickles"):
        scan_trainer("trl", [str(path)])


def test_a_file_of_another_trainer_names_the_missing_fields(tmp_path: Path) -> None:
    files = write_verl(tmp_path, TABLE)
    with pytest.raises(DataError, match=r"1\.jsonl: missing field\(s\) 'task_id', 'prompt' for a areal dump"):
        scan_trainer("areal", [str(files[0])])


def test_roll_without_ids_keys_prompts_by_messages(tmp_path: Path) -> None:
    files = write_roll(tmp_path, TABLE, with_id=False)
    log = scan_trainer("roll", [str(f) for f in files])
    assert "roll: prompts keyed by the 'messages' field; grouped by (step, messages)" == log.notes[1]


# ------------------------------------------------------------------------------------------------ reading


def test_jsonl_fields_other_than_the_needed_ones_are_not_parsed(tmp_path: Path) -> None:
    table = [Group(1, f"q{i}?", (T, F)) for i in range(200)]
    path = write_verl(tmp_path, table, reorder=False)[0]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for i, row in enumerate(rows):
        # verl's "gts" is whatever the dataset holds: a list in some rows, text in others.
        row["gts"] = ["1", "2"] if i < 300 else "7"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(pl.exceptions.PolarsError):
        pl.read_ndjson(path, infer_schema_length=100)
    assert 200 == len(read_counts("verl", [path]))


def test_parquet_completions_are_not_read(tmp_path: Path) -> None:
    path = write_trl(tmp_path, TABLE)[0]
    frame = pl.read_parquet(path).with_columns(completion=pl.lit("Z" * 5000))
    frame.write_parquet(path, compression="uncompressed", statistics=False, use_pyarrow=True)
    data = path.read_bytes()
    path.write_bytes(data.replace(b"Z" * 5000, b"\xff" * 5000))  # invalid UTF-8 in every completion
    with pytest.raises(Exception, match=r"(?i)utf-?8"):
        pl.read_parquet(path, columns=["completion"])
    assert expected_counts("trl", [g for g in TABLE if g.step == 1], tmp_path) == read_counts("trl", [path])


def test_counts_stream_one_row_per_key(tmp_path: Path) -> None:
    files = write_verl(tmp_path, TABLE, uid=True)
    out = rollout_counts(scan_trainer("verl", [str(f) for f in files]), keys=("step", "group"))
    assert Counter(g.step for g in TABLE) == Counter(out["step"].to_list())


def test_prompt_key_of_roll_is_its_domain_and_id() -> None:
    assert prompt_key("roll", TABLE[0]).startswith("math_rule\x1fq-")


def test_a_parquet_file_given_as_verl_names_the_trainer(tmp_path: Path) -> None:
    path = write_trl(tmp_path, TABLE)[0]
    with pytest.raises(
        DataError, match=r"completions_00001\.parquet: not a verl dump: cannot read it as JSON lines"
    ):
        scan_trainer("verl", [str(path)])


def test_an_empty_verl_file_is_skipped_and_noted(tmp_path: Path) -> None:
    files = write_verl(tmp_path, TABLE)
    (tmp_path / "4.jsonl").write_text("\n")
    log = scan_trainer("verl", [*map(str, files), str(tmp_path / "4.jsonl")])
    assert f"verl: skipped 1 empty file(s), e.g. {tmp_path / '4.jsonl'}" == log.notes[0]


def test_roll_arrays_of_unequal_length_are_a_data_error(tmp_path: Path) -> None:
    path = write_roll(tmp_path, TABLE)[0]
    columns = json.loads(path.read_text())
    columns["scores"] = columns["scores"][:-1]
    path.write_text(json.dumps(columns) + "\n")
    with pytest.raises(DataError, match="cannot read the roll dump"):
        rollout_counts(scan_trainer("roll", [str(path)]))

"""Loading: every input form gives the same histogram; every bad input a one-line error and its exit code."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from sigmatool import memory
from sigmatool.errors import DataError, ExitCode, UsageError
from sigmatool.load import InputOptions, bundled_sample, dataset, per_prompt_frame, read_histogram
from tests.conftest import BIGMATH, BIGMATH_COUNTS, TOY, csv_of, invoke


def hist(**options: object) -> pl.DataFrame:
    frame = read_histogram(InputOptions(**options)).frame  # type: ignore[arg-type]
    return frame


@pytest.fixture(scope="module")
def toy_frame() -> pl.DataFrame:
    return pl.read_csv(TOY)


# --------------------------------------------------------------------------------------------- same data, same answer


def test_bundled_sample_is_the_sample_data_file() -> None:
    assert (
        hashlib.sha256(BIGMATH.read_bytes()).hexdigest()
        == hashlib.sha256(bundled_sample().read_bytes()).hexdigest()
    )


def test_bigmath_parquet_has_all_prompts() -> None:
    frame = hist(paths=(str(BIGMATH),))
    assert 215_608 == frame["prompts"].sum()
    assert 65 == frame.height


def test_counts_csv_with_weights_equals_expanded_parquet() -> None:
    expanded = hist(paths=(str(BIGMATH),)).select("p", "prompts")
    weighted = hist(paths=(str(BIGMATH_COUNTS),), weight_col="count").select("p", "prompts")
    assert_frame_equal(expanded, weighted)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json", "parquet", "csv.gz"])
def test_every_file_format_gives_the_same_histogram(
    toy_frame: pl.DataFrame, tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / f"toy.{fmt}"
    if fmt == "csv":
        toy_frame.write_csv(path)
    elif fmt == "tsv":
        toy_frame.write_csv(path, separator="\t")
    elif fmt == "jsonl":
        toy_frame.write_ndjson(path)
    elif fmt == "json":
        path.write_text(json.dumps(toy_frame.to_dicts()))
    elif fmt == "parquet":
        toy_frame.write_parquet(path)
    else:
        path.write_bytes(gzip.compress(toy_frame.write_csv().encode()))
    assert_frame_equal(hist(paths=(str(TOY),)), hist(paths=(str(path),)))


def test_a_glob_reads_every_matching_file(toy_frame: pl.DataFrame, tmp_path: Path) -> None:
    toy_frame.head(7).write_parquet(tmp_path / "part-1.parquet")
    toy_frame.tail(13).write_parquet(tmp_path / "part-2.parquet")
    assert_frame_equal(hist(paths=(str(TOY),)), hist(paths=(str(tmp_path / "part-*.parquet"),)))


def test_counts_columns_give_p_as_k_over_n() -> None:
    frame = hist(paths=(str(TOY),), k_col="k", n_col="n")
    assert_frame_equal(frame.select((pl.col("k") / pl.col("n")).alias("p")), frame.select("p"))


def test_samples_turns_rates_into_counts() -> None:
    frame = hist(paths=(str(BIGMATH),), samples=64)
    assert frame["k"].to_list() == list(range(65))


def test_by_column_splits_the_histogram() -> None:
    frame = hist(paths=(str(TOY),), by=("source",))
    assert {"algebra": 10, "geometry": 10} == dict(
        frame.group_by("source").agg(pl.col("prompts").sum()).iter_rows()
    )


def test_rollouts_are_aggregated_to_k_and_n(write_csv) -> None:  # type: ignore[no-untyped-def]
    path = write_csv("pid,r\na,1\na,0\na,1\nb,0\nb,0\nc,true\n".replace("true", "1"))
    frame = hist(paths=(str(path),), rollouts=True, prompt_col="pid", reward_col="r")
    assert [(0, 2), (2, 3), (1, 1)] == list(frame.select("k", "n").iter_rows())


# How a rollout log is read: in one pass when polars works to a memory budget, else in two passes over
# hashed ids; the rows are counted from a Parquet footer or in the same reads as the passes (CSV).
READINGS = [("parquet", True), ("parquet", False), ("csv", True), ("csv", False)]


def _log_file(
    frame: pl.DataFrame, tmp_path: Path, fmt: str, budget: bool, monkeypatch: pytest.MonkeyPatch
) -> Path:
    monkeypatch.delenv(memory.BUDGET_FRACTION, raising=False)
    if budget:
        monkeypatch.setenv(memory.BUDGET_MB, "1024")
    else:
        monkeypatch.delenv(memory.BUDGET_MB, raising=False)
    path = tmp_path / f"log.{fmt}"
    frame.write_parquet(path) if fmt == "parquet" else frame.write_csv(path)
    return path


def _brute_force(ids: np.ndarray, rewards: np.ndarray) -> dict[tuple[int, int], int]:
    """(k, n) → prompts, counted row by row: k the rewards equal to 1, n those equal to 0 or 1; a prompt
    without any (n = 0) is left out."""
    counts: dict[int, list[int]] = {}
    for pid, r in zip(ids.tolist(), rewards.tolist(), strict=True):
        kn = counts.setdefault(pid, [0, 0])
        kn[0] += r == 1
        kn[1] += r in (0, 1)
    expected: dict[tuple[int, int], int] = {}
    for k, n in counts.values():
        if n:
            expected[(k, n)] = expected.get((k, n), 0) + 1
    return expected


@pytest.mark.parametrize(("fmt", "budget"), READINGS)
def test_a_large_rollout_log_is_counted_per_prompt_as_brute_force_counts_it(
    tmp_path: Path, fmt: str, budget: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every prompt's rows must meet in one pass; the bad and the missing rewards must be found and counted.
    rng = np.random.default_rng(11)
    ids = rng.integers(0, 3_000, 40_000)
    rewards = rng.choice(np.array([0.0, 1.0, 1.0, 2.0, np.nan]), ids.size)
    frame = pl.DataFrame({"pid": ids, "r": rewards}).with_columns(pl.col("r").fill_nan(None))
    path = _log_file(frame, tmp_path, fmt, budget, monkeypatch)
    result = read_histogram(
        InputOptions(paths=(str(path),), rollouts=True, prompt_col="pid", reward_col="r", skip_invalid=True)
    )
    expected = _brute_force(ids, rewards)
    got = {(k, n): prompts for k, n, prompts in result.frame.select("k", "n", "prompts").iter_rows()}
    bad, missing = int((rewards == 2.0).sum()), int(np.isnan(rewards).sum())
    notes = [f"skipped {bad:,} row(s) with an invalid value (--skip-invalid)"]
    notes.append(f"skipped {missing:,} rollout row(s) with a null reward")
    assert (expected, notes) == (got, [n for n in result.notes if n.startswith("skipped")])


@pytest.mark.parametrize(("fmt", "budget"), READINGS)
def test_a_clean_rollout_log_is_counted_per_prompt_as_brute_force_counts_it(
    tmp_path: Path, fmt: str, budget: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only 0/1 rewards: the passes count (k, n) alone and find nothing to skip.
    rng = np.random.default_rng(12)
    ids = rng.integers(0, 3_000, 40_000)
    rewards = rng.integers(0, 2, ids.size)
    path = _log_file(pl.DataFrame({"pid": ids, "r": rewards}), tmp_path, fmt, budget, monkeypatch)
    result = read_histogram(InputOptions(paths=(str(path),), rollouts=True, prompt_col="pid", reward_col="r"))
    expected = _brute_force(ids, rewards)
    got = {(k, n): prompts for k, n, prompts in result.frame.select("k", "n", "prompts").iter_rows()}
    assert expected == got
    assert [] == [n for n in result.notes if n.startswith("skipped")]


def test_boolean_rewards_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pl.DataFrame({"pid": ["a", "a", "b"], "ok": [True, False, True]}).write_parquet(path)
    frame = hist(paths=(str(path),), rollouts=True, prompt_col="pid", reward_col="ok")
    assert [(1, 2), (1, 1)] == list(frame.select("k", "n").iter_rows())


def test_threshold_counts_rewards_at_or_above_it_as_right(write_csv) -> None:  # type: ignore[no-untyped-def]
    path = write_csv("pid,r\na,0.2\na,0.7\na,0.5\n")
    frame = hist(paths=(str(path),), rollouts=True, prompt_col="pid", reward_col="r", threshold=0.5)
    assert [(2, 3)] == list(frame.select("k", "n").iter_rows())


def test_null_rates_are_skipped_and_counted(write_csv) -> None:  # type: ignore[no-untyped-def]
    result = read_histogram(InputOptions(paths=(str(write_csv("pass_rate\n0.5\n\n0.25\n")),)))
    assert 2 == result.frame["prompts"].sum()
    assert ["skipped 1 row(s) with a null 'pass_rate'"] == [n for n in result.notes if "skipped" in n]


def test_rate_column_is_detected_by_name_suffix(write_csv) -> None:  # type: ignore[no-untyped-def]
    frame = hist(paths=(str(write_csv("id,qwen_solve_rate\n1,0.5\n")),))
    assert [0.5] == frame["p"].to_list()


def test_per_prompt_frame_keeps_input_order_and_ids() -> None:
    with dataset(InputOptions(paths=(str(TOY),), id_col="prompt_id")) as ds:
        frame = per_prompt_frame(ds).collect()
    assert pl.read_csv(TOY)["prompt_id"].to_list() == frame["id"].to_list()


def test_stdin_is_spooled_and_read_like_a_file() -> None:
    result = invoke("silent", "-", "--format", "csv", input=TOY.read_text())
    assert_frame_equal(csv_of(invoke("silent", TOY, "--format", "csv")), csv_of(result))


def test_piped_stdin_is_read_when_no_data_is_given() -> None:
    result = invoke("silent", "--format", "csv", input=TOY.read_text())
    assert [20] == csv_of(result)["prompts"].to_list()


def test_no_data_and_stdin_from_dev_null_reads_the_bundled_sample() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sigmatool", "silent", "--format", "csv"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    assert 0 == done.returncode
    assert [215_608] == pl.read_csv(io.StringIO(done.stdout))["prompts"].to_list()
    assert "bundled Big-Math sample" in done.stderr


def test_stdin_can_be_jsonl_with_input_format(toy_frame: pl.DataFrame) -> None:
    text = "\n".join(json.dumps(r) for r in toy_frame.to_dicts())
    result = invoke("silent", "--input-format", "jsonl", "--format", "csv", input=text)
    assert_frame_equal(csv_of(invoke("silent", TOY, "--format", "csv")), csv_of(result))


def test_loading_never_modifies_the_input(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_bytes(TOY.read_bytes())
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    invoke("silent", path, "--per-prompt", "-o", tmp_path / "out.csv")
    assert before == (path.read_bytes(), path.stat().st_mtime_ns)


# --------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        ("pass_rate\n0.5\n1.5\n", {}, "pass rate outside [0, 1] at row 2"),
        ("pass_rate\n0.5\n-0.1\n0.3\n", {}, "pass rate outside [0, 1] at row 2"),
        ("pass_rate\n0.5\nnan\n", {}, "NaN is not a pass rate at row 2"),
        ("pass_rate\n0.5\nabc\n", {}, "not a number at row 2"),
        ("pass_rate\n" + "0.5\n" * 20_000 + "oops\n", {}, "not a number at row 20001"),
        ("k,n\n3,4\n5,4\n", {"k_col": "k", "n_col": "n"}, "k is larger than n at row 2"),
        ("k,n\n3,4\n2.5,4\n", {"k_col": "k", "n_col": "n"}, "not a whole number ≥ 0 at row 2"),
        ("k,n\n3,4\n0,0\n", {"k_col": "k", "n_col": "n"}, "n must be at least 1 at row 2"),
        ("pass_rate\n0.5\n0.3\n", {"samples": 4}, "is not a whole number at row 2"),
        ("pass_rate,w\n0.5,1\n0.3,-2\n", {"weight_col": "w"}, "weight must be a finite number ≥ 0 at row 2"),
    ],
)
def test_bad_values_name_the_column_and_row(write_csv, text: str, options: dict, expected: str) -> None:  # type: ignore[no-untyped-def,type-arg]
    with pytest.raises(DataError, match=None) as info:
        hist(paths=(str(write_csv(text)),), **options)
    assert expected in str(info.value)


def test_every_kind_of_bad_value_is_named_at_once(write_csv) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError) as info:
        hist(paths=(str(write_csv("pass_rate\n0.5\nabc\n1.5\nnan\n")),))
    message = str(info.value)
    assert ("row 2", "row 3", "row 4") == tuple(r for r in ("row 2", "row 3", "row 4") if r in message)


def test_skip_invalid_skips_and_counts_bad_rows(write_csv) -> None:  # type: ignore[no-untyped-def]
    result = read_histogram(
        InputOptions(paths=(str(write_csv("pass_rate\n0.5\nabc\n1.5\n0.25\n")),), skip_invalid=True)
    )
    assert 2 == result.frame["prompts"].sum()
    assert any("skipped 2 row(s)" in n for n in result.notes)


def test_non_binary_rewards_are_refused(write_csv) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError, match=r"reward is not 0/1 .* at row 3"):
        hist(
            paths=(str(write_csv("pid,r\na,1\na,0\nb,0.5\n")),),
            rollouts=True,
            prompt_col="pid",
            reward_col="r",
        )


def test_missing_columns_are_listed_with_the_existing_ones() -> None:
    with pytest.raises(
        DataError, match=r"missing column\(s\) 'kk', 'nn' .*; the columns are: prompt_id, source, k, n"
    ):
        hist(paths=(str(TOY),), k_col="kk", n_col="nn")


def test_a_misspelt_column_gets_the_close_names() -> None:
    with pytest.raises(DataError, match=r"missing column\(s\) 'kk', 'nn' \(did you mean 'k', 'n'\?\)"):
        hist(paths=(str(TOY),), k_col="kk", n_col="nn")


def test_a_name_close_to_none_gets_no_guess() -> None:
    with pytest.raises(DataError, match=r"missing column\(s\) 'zzz'; the columns"):
        hist(paths=(str(TOY),), col="zzz")


def test_no_rate_column_lists_numeric_columns(write_csv) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError, match=r"no pass-rate column found .* Numeric columns: score, tries"):
        hist(paths=(str(write_csv("name,score,tries\na,0.5,3\n")),))


def test_several_rate_columns_ask_for_col(write_csv) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError, match="several pass-rate columns"):
        hist(paths=(str(write_csv("pass_rate,accuracy\n0.5,0.5\n")),))


def test_empty_file_is_a_data_error(write_csv) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError, match="the file is empty"):
        hist(paths=(str(write_csv("")),))


def test_header_only_file_has_no_usable_prompts(write_csv) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError, match="no usable prompts"):
        hist(paths=(str(write_csv("pass_rate\n")),))


def test_truncated_parquet_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.parquet"
    path.write_bytes(BIGMATH.read_bytes()[:5000])
    with pytest.raises(DataError, match="cannot read it as parquet"):
        hist(paths=(str(path),))


def test_missing_file_is_a_data_error() -> None:
    with pytest.raises(DataError, match="no such file"):
        hist(paths=("/nonexistent/rates.csv",))


def test_unknown_extension_asks_for_input_format(tmp_path: Path) -> None:
    path = tmp_path / "rates.dat"
    path.write_text("pass_rate\n0.5\n")
    with pytest.raises(UsageError, match="--input-format"):
        hist(paths=(str(path),))


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"rollouts": True}, "--rollouts needs --prompt-col and --reward-col"),
        ({"k_col": "k"}, "--k-col and --n-col go together"),
        ({"prompt_col": "x"}, "need --rollouts"),
        ({"by": ("p",)}, "clash with output columns"),
    ],
)
def test_impossible_option_combinations_are_usage_errors(options: dict, expected: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(UsageError, match=expected):
        hist(paths=(str(TOY),), **options)


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (["--col", "nope"], ExitCode.DATA, "missing column(s) 'nope'"),
        (["--G", "0"], ExitCode.USAGE, "--G"),
        (["--G", "abc"], ExitCode.USAGE, "--G"),
        (
            ["--estimator", "unbiased", "--k-col", "k", "--n-col", "n", "--G", "32"],
            ExitCode.USAGE,
            "larger than the n = 16",
        ),
        (["--bins", "0"], ExitCode.USAGE, "--bins"),
        (["--dapo-cap", "0"], ExitCode.USAGE, "--dapo-cap"),
    ],
)
def test_cli_errors_are_one_line_with_the_documented_exit_code(
    args: list[str], code: int, expected: str
) -> None:
    result = invoke("silent", TOY, *args)
    assert int(code) == result.exit_code
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_data_error_is_a_single_line() -> None:
    result = invoke("silent", TOY, "--col", "nope")
    assert 1 == len(result.stderr.strip().splitlines())


def test_random_rates_match_a_direct_count(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rates = rng.integers(0, 9, size=5000) / 8
    path = tmp_path / "r.parquet"
    pl.DataFrame({"pass_rate": rates}).write_parquet(path)
    values, counts = np.unique(rates, return_counts=True)
    frame = hist(paths=(str(path),))
    assert (values.tolist(), counts.tolist()) == (frame["p"].to_list(), frame["prompts"].to_list())


def test_bad_values_on_stdin_are_named_by_row() -> None:
    result = invoke("silent", input="pass_rate\n0.5\nabc\n1.5\n")
    assert 1 == result.exit_code
    message = result.stderr.strip().removeprefix("error: ")
    assert "<stdin>: column 'pass_rate': not a number at row 2" == message[:50]


def test_text_past_the_type_guess_on_stdin_is_found_by_row() -> None:
    result = invoke("silent", "-", input="pass_rate\n" + "0.5\n" * 20_000 + "abc\n")
    assert 1 == result.exit_code
    assert "not a number at row 20001" in result.stderr


def test_progress_callback_sees_every_input_row() -> None:
    seen: list[int] = []
    read_histogram(InputOptions(paths=(str(BIGMATH),)), on_rows=seen.append)
    assert 215_608 == sum(seen)


def test_counting_rows_for_progress_changes_nothing(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    path = tmp_path / "log.parquet"
    pl.DataFrame(
        {"prompt": rng.integers(0, 300, 20_000), "reward": rng.integers(0, 2, 20_000)}
    ).write_parquet(path)
    options = InputOptions(paths=(str(path),), rollouts=True, prompt_col="prompt", reward_col="reward")
    seen: list[int] = []
    counted = read_histogram(options, on_rows=seen.append).frame
    assert_frame_equal(read_histogram(options).frame, counted)
    assert 20_000 == sum(seen)


@pytest.mark.parametrize(("fmt", "budget"), READINGS)
@pytest.mark.parametrize("clean", [True, False])
def test_a_log_is_read_again_only_when_some_reward_is_not_0_or_1(
    tmp_path: Path, fmt: str, budget: bool, clean: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rows are counted (footer or scan) and compared with the n summed over prompts; a null reward or
    # a 2 makes them differ, and only then are the bad and missing rewards counted per prompt.
    rewards = [1, 0, 1, 1, 0, 0] if clean else [1, 0, None, 1, 0, 0]
    frame = pl.DataFrame({"pid": ["a", "a", "b", "b", "c", "c"], "r": rewards})
    path = _log_file(frame, tmp_path, fmt, budget, monkeypatch)
    module = sys.modules["sigmatool.load.histogram"]
    calls: list[bool] = []
    real = module._log_passes

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(bool(args[4] if len(args) > 4 else kwargs["flags"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "_log_passes", spy)
    read_histogram(InputOptions(paths=(str(path),), rollouts=True, prompt_col="pid", reward_col="r"))
    assert ([False] if clean else [False, True]) == calls


HISTOGRAM_NOTE = "weighs it so"


@pytest.mark.parametrize(
    ("text", "column", "extra"),
    [
        ("k,n,count\n0,4,30\n1,4,12\n2,4,9\n4,4,20\n", "count", ()),
        ("k,n,prompts\n0,8,5\n3,8,2\n8,8,7\n", "prompts", ()),  # as sigmatool sql writes it
        ("pass_rate,Frequency\n0.0,40\n0.25,3\n0.5,6\n0.75,2\n1.0,11\n", "Frequency", ("--samples", "4")),
    ],
)
def test_a_histogram_read_without_its_weight_column_gets_a_note(
    write_csv, text: str, column: str, extra: tuple[str, ...]
) -> None:
    path = write_csv(text)
    rows = text.count("\n") - 1
    plain = invoke("silent", path, "--G", "8", *extra, "--format", "csv")
    assert [rows] == csv_of(plain)["prompts"].to_list()
    assert f"column {column!r} holds whole numbers" in plain.stderr
    assert f"--weight-col {column} {HISTOGRAM_NOTE}" in plain.stderr
    weighted = invoke("silent", path, "--G", "8", *extra, "--weight-col", column, "--format", "csv")
    assert HISTOGRAM_NOTE not in weighted.stderr
    assert csv_of(weighted)["prompts"][0] > rows


@pytest.mark.parametrize(
    "text",
    [
        "k,n,count\n0,4,3\n0,4,5\n2,4,1\n",  # a (k, n) on two rows: prompts, not a histogram
        "k,n,count\n0,4,3.5\n2,4,1\n",  # not whole numbers
        "k,n,count\n0,4,1\n2,4,1\n",  # adds up to the rows
        "k,n,tokens\n0,4,300\n2,4,120\n",  # not named as a count of prompts
        "pass_rate,count\n0.1234,3\n0.5678,9\n",  # rates, not counts
    ],
)
def test_no_histogram_note_where_the_rows_are_prompts(write_csv, text: str) -> None:
    done = invoke("silent", write_csv(text), "--G", "8", "--format", "csv")
    assert 0 == done.exit_code, done.stderr
    assert HISTOGRAM_NOTE not in done.stderr

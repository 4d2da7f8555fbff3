"""sigmatool track through the real command line, on generated verl runs with known pass rates.

The run is sigmatool.examplerun's: pass rates follow a known schedule and one step's silent groups are
dropped before the dump, as a trainer that filters zero-variance groups would do.
"""

from __future__ import annotations

import io
import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from sigmatool import examplerun as er
from tests.conftest import ROOT, csv_of, invoke, run_in

# 512 prompts, 256 per step, G = 8, pass rates rising by 0.1 in logit per step, step 6 filtered.
DRIFTING = er.RunSpec(prompts=512, steps=8, batch=256, group_size=8, drift=0.1, filter_step=6, seed=3)
EXAMPLE = ROOT / "sample_data" / "example_run"
TRUTH = ROOT / "sample_data" / "example_run_pass_rates.csv"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, pl.DataFrame, pl.DataFrame]:
    """The run's dump folder, its true pass rates keyed by step and prompt text, the rollouts, the truth."""
    folder = tmp_path_factory.mktemp("drifting")
    rows, truth = er.generate(DRIFTING)
    er.write_verl_dump(rows, folder / "dump")
    texts = rows.select(pl.col("prompt_id").alias("prompt"), "input").unique()
    table = truth.join(texts, on="prompt").select("step", pl.col("input").alias("prompt"), "p")
    table.write_csv(folder / "truth.csv")
    return folder / "dump", folder / "truth.csv", rows, truth


def steps_of(*args: object) -> pl.DataFrame:
    return csv_of(invoke("track", *args, "--from", "verl", "--format", "csv"))


def expected_by_brute_force(rows: pl.DataFrame, truth: pl.DataFrame) -> dict[int, float]:
    """Per step: the mean over the dumped groups of p^G + (1 − p)^G, p the group's true pass rate."""
    p = {(s, j): q for s, j, q in truth.iter_rows()}
    sums: dict[int, list[float]] = {}
    for (step, _, prompt), group in rows.group_by("step", "uid", "prompt_id"):
        G = group.height
        total = sums.setdefault(int(step), [0.0, 0.0])  # type: ignore[call-overload]
        total[0] += p[(step, prompt)] ** G + (1 - p[(step, prompt)]) ** G
        total[1] += 1
    return {step: s / n for step, (s, n) in sums.items()}


def test_expected_silent_fraction_from_the_true_rates_equals_brute_force(run) -> None:  # type: ignore[no-untyped-def]
    dump, truth_csv, rows, truth = run
    out = steps_of(dump, "--pass-rates", truth_csv)
    expected = expected_by_brute_force(rows, truth)
    for step, value in zip(out["step"], out["expected_silent_fraction"], strict=True):
        assert expected[step] == pytest.approx(value, rel=1e-12)


def test_measured_silent_fraction_is_within_binomial_noise_of_the_expected(run) -> None:  # type: ignore[no-untyped-def]
    dump, truth_csv, _, _ = run
    out = steps_of(dump, "--pass-rates", truth_csv).filter(pl.col("step") != DRIFTING.filter_step)
    for measured, expected, groups in out.select(
        "silent_fraction", "expected_silent_fraction", "groups"
    ).iter_rows():
        # The mean of independent Bernoulli(P_i) has variance Σ P_i(1 − P_i)/n² ≤ P̄(1 − P̄)/n; 4 sd.
        assert abs(measured - expected) <= 4 * math.sqrt(expected * (1 - expected) / groups)


def test_the_filtering_step_is_flagged_with_the_true_rates(run) -> None:  # type: ignore[no-untyped-def]
    dump, truth_csv, _, _ = run
    out = steps_of(dump, "--pass-rates", truth_csv)
    assert [DRIFTING.filter_step] == out.filter(pl.col("drift"))["step"].to_list()


def test_the_filtering_step_measures_no_silent_group(run) -> None:  # type: ignore[no-untyped-def]
    dump, _, _, _ = run
    out = steps_of(dump)
    assert 0.0 == out.filter(pl.col("step") == DRIFTING.filter_step)["silent_fraction"].item()


def test_the_filtering_step_is_flagged_leave_one_step_out(run) -> None:  # type: ignore[no-untyped-def]
    dump, _, _, _ = run
    out = steps_of(dump)
    assert DRIFTING.filter_step in out.filter(pl.col("drift"))["step"].to_list()


def test_the_summary_names_the_drifting_steps(run) -> None:  # type: ignore[no-untyped-def]
    dump, truth_csv, _, _ = run
    summary = steps_of(dump, "--pass-rates", truth_csv, "--summary")
    assert str(DRIFTING.filter_step) == str(summary["drift_steps"].item())


def test_the_summary_says_where_the_expectation_came_from(run) -> None:  # type: ignore[no-untyped-def]
    dump, truth_csv, _, _ = run
    assert "pass-rate table" == steps_of(dump, "--pass-rates", truth_csv, "--summary")["expected_from"].item()
    assert "leave-one-step-out" == steps_of(dump, "--summary")["expected_from"].item()


def test_measured_fractions_equal_those_of_the_group_table(run) -> None:  # type: ignore[no-untyped-def]
    dump, _, rows, _ = run
    out = steps_of(dump)
    for step, fraction in zip(out["step"], out["silent_fraction"], strict=True):
        sizes = rows.filter(pl.col("step") == step).group_by("uid").agg(pl.len(), pl.col("acc").sum())
        silent = sizes.filter((pl.col("acc") == 0) | (pl.col("acc") == pl.col("len"))).height
        assert silent / sizes.height == fraction


# ------------------------------------------------------------------------------------------------ export


def test_the_export_gives_the_counts_that_from_reads(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dump, _, _, _ = run
    exported = tmp_path / "rates.csv"
    assert (
        0 == invoke("track", dump, "--from", "verl", "--export-pass-rates", exported, "-f", "csv").exit_code
    )
    via_export = invoke("silent", exported, "--k-col", "k", "--n-col", "n", "--G", "4,8", "-f", "csv")
    via_from = invoke("silent", dump, "--from", "verl", "--G", "4,8", "-f", "csv")
    assert via_from.stdout == via_export.stdout


def test_a_window_exports_the_rollouts_of_its_steps(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dump, _, _, _ = run
    exported = tmp_path / "rates.parquet"
    out = csv_of(
        invoke("track", dump, "--from", "verl", "--export-pass-rates", exported, "--export-steps", "2..4")
    )
    assert (
        out.filter(pl.col("step").is_between(2, 4))["rollouts"].sum() == pl.read_parquet(exported)["n"].sum()
    )


def test_an_export_is_a_pass_rate_table_for_the_same_run(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dump, _, _, _ = run
    exported = tmp_path / "rates.jsonl"
    invoke(
        "track",
        dump,
        "--from",
        "verl",
        "--export-pass-rates",
        exported,
        "--export-steps",
        "1..2",
        "-f",
        "csv",
    )
    out = steps_of(dump, "--pass-rates", exported, "--summary")
    assert out["groups"].item() == out["compared_groups"].item()


def test_prompt_text_keys_match_the_bundled_run() -> None:
    out = steps_of(EXAMPLE, "--pass-rates", TRUTH, "--pass-rates-key", "input", "--summary")
    assert 172 == out["compared_groups"].item()


# ------------------------------------------------------------------------------------------------ formats


@pytest.mark.parametrize("fmt", ["json", "jsonl", "tsv", "parquet"])
def test_every_format_carries_the_step_table(fmt: str, tmp_path: Path) -> None:
    csv = csv_of(invoke("track", EXAMPLE, "--from", "verl", "-f", "csv"))
    path = tmp_path / f"steps.{fmt}"
    assert 0 == invoke("track", EXAMPLE, "--from", "verl", "-o", path).exit_code
    read = {
        "json": lambda: pl.DataFrame(json.loads(path.read_text())),
        "jsonl": lambda: pl.read_ndjson(path),
        "tsv": lambda: pl.read_csv(path, separator="\t"),
        "parquet": lambda: pl.read_parquet(path),
    }[fmt]()
    assert csv.columns == read.columns
    assert csv["silent_fraction"].to_list() == read["silent_fraction"].to_list()


def test_the_table_leads_with_the_runs_headline() -> None:
    out = invoke("track", EXAMPLE, "--from", "verl", "-f", "table").stdout
    assert out.startswith("Steps 1–4: ")


def test_an_infinite_z_is_null_in_data_formats(tmp_path: Path) -> None:
    # One prompt: 1 of 2 right at step 1, 2 of 2 at step 2. Leave-one-step-out, a group of 2 drawn from the
    # other step's answers is silent with probability 1 at step 1 and 0 at step 2, and both steps disagree:
    # no binomial noise can explain that, z = ∓∞.
    for step, grades in ((1, (True, False)), (2, (True, True))):
        rows = [{"input": "q", "output": "a", "score": float(g), "step": step, "acc": g} for g in grades]
        (tmp_path / f"{step}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = json.load(io.StringIO(invoke("track", tmp_path, "--from", "verl", "-f", "json").stdout))
    assert [None, None] == [row["silent_z"] for row in out]


def test_steps_that_no_noise_explains_are_flagged(tmp_path: Path) -> None:
    for step, grades in ((1, (True, False)), (2, (True, True))):
        rows = [{"input": "q", "output": "a", "score": float(g), "step": step, "acc": g} for g in grades]
        (tmp_path / f"{step}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = csv_of(invoke("track", tmp_path, "--from", "verl", "-f", "csv"))
    assert [True, True] == out["drift"].to_list()


# ------------------------------------------------------------------------------------------------ bad input


def sigmatool(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sigmatool", *map(str, args)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        ([EXAMPLE], 2, "a trainer's dumps with --from"),
        ([EXAMPLE, "--from", "verl", "--export-steps", "1..2"], 2, "give that too"),
        (
            [EXAMPLE, "--from", "verl", "--export-pass-rates", "x.csv", "--export-steps", "3..1"],
            2,
            "the window is empty",
        ),
        (
            [EXAMPLE, "--from", "verl", "--export-pass-rates", "x.csv", "--export-steps", "a-b"],
            2,
            "give a window",
        ),
        ([EXAMPLE, "--from", "verl", "--export-pass-rates", "rates.txt"], 2, "give a file name ending in"),
        (
            [EXAMPLE, "--from", "verl", "--export-pass-rates", EXAMPLE / "2.jsonl"],
            2,
            "this is the input file",
        ),
        ([EXAMPLE, "--from", "verl", "-o", TRUTH, "--pass-rates", TRUTH], 2, "this is the input file"),
        ([EXAMPLE, "--from", "verl", "--z", "0"], 2, "--z: give a positive number"),
        ([EXAMPLE, "--from", "verl", "--pass-rates-key", "input"], 2, "give that too"),
        ([EXAMPLE, "--from", "verl", "--pass-rates", TRUTH], 1, "none of the run's prompts has a rate there"),
        (
            [EXAMPLE, "--from", "verl", "--pass-rates", TRUTH, "--pass-rates-key", "x"],
            1,
            "no prompt key column",
        ),
        ([EXAMPLE, "--from", "trl"], 1, "no trl dump file in it or below it"),
    ],
)
def test_bad_track_input_ends_in_one_line(args: list[object], code: int, expected: str) -> None:
    # The first case in a real process, the others in-process through the same entry point.
    done = sigmatool("track", *args) if args == [EXAMPLE] else run_in("track", *args)
    assert code == done.returncode
    errors = [line for line in done.stderr.splitlines() if not line.startswith("note: ")]
    assert 1 == len(errors)
    assert expected in errors[0]


def test_a_window_without_rollouts_is_a_data_error(tmp_path: Path) -> None:
    result = invoke(
        "track",
        EXAMPLE,
        "--from",
        "verl",
        "--export-pass-rates",
        tmp_path / "r.csv",
        "--export-steps",
        "9..12",
    )
    assert 1 == result.exit_code
    assert "no usable rollout in steps 9..12" in result.stderr


def test_the_help_example_runs() -> None:
    from sigmatool.cli.track import track_command

    example = re.search(r"^\s+sigmatool (track .+)$", track_command.__doc__ or "", flags=re.MULTILINE)
    assert example is not None
    result = invoke(
        *shlex.split(example.group(1).replace("sample_data/", f"{ROOT}/sample_data/")), "-f", "csv"
    )
    assert 0 == result.exit_code
    assert [1, 2, 3, 4] == csv_of(result)["step"].to_list()

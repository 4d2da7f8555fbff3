"""track: a training run step by step, checked against brute force on generated runs with known pass rates.

False-alarm rate of the drift rule (|z| ≥ 4 and a gap ≥ 2 points), measured on 300 seeded runs of 20 steps
(256 prompts, 128 per step, G = 8): with the true pass rates as the table, 0 of 6,000 steps flagged (sd of z
1.001); leave-one-step-out on runs without drift, 1 of 6,000 (sd of z 1.074). A seeded test below that checks
"no other step is flagged" on 11 or 19 steps would fail by chance for about one seed in a thousand.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool import examplerun as er
from sigmatool import track as tr
from sigmatool.errors import DataError, UsageError
from tests.conftest import csv_of, invoke

DRIFTING = er.RunSpec(prompts=512, steps=12, batch=256, group_size=8, drift=0.1, filter_step=6, seed=1)
STEADY = er.RunSpec(prompts=512, steps=12, batch=256, group_size=8, drift=0.0, filter_step=6, seed=2)


@pytest.fixture(scope="module")
def drifting() -> tuple[pl.DataFrame, pl.DataFrame]:
    return er.generate(DRIFTING)


@pytest.fixture(scope="module")
def steady() -> tuple[pl.DataFrame, pl.DataFrame]:
    return er.generate(STEADY)


# ------------------------------------------------------------------------------------------ brute force


def groups_of(rows: pl.DataFrame) -> dict[tuple[int, str], tuple[int, int, int]]:
    """(step, uid) → (prompt, G, k), by a plain loop over the rollouts."""
    out: dict[tuple[int, str], list[int]] = {}
    for step, uid, prompt, acc in rows.select("step", "uid", "prompt_id", "acc").iter_rows():
        entry = out.setdefault((step, uid), [prompt, 0, 0])
        entry[1] += 1
        entry[2] += int(acc)
    return {key: (v[0], v[1], v[2]) for key, v in out.items()}


def silent_exact(k: int, n: int, G: int) -> Fraction | None:
    """Brute-force expectation for a size-G group from k of n other samples, by the default rule: the
    hypergeometric where G ≤ n; beyond n none, since the few groups of these logs identify no prior."""
    if n == 0 or G > n:
        return None
    return Fraction(math.comb(k, G) + math.comb(n - k, G), math.comb(n, G))


def loso_brute_force(rows: pl.DataFrame) -> dict[tuple[int, str], Fraction | None]:
    groups = groups_of(rows)
    per_step: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    for (step, _), (prompt, G, k) in groups.items():
        per_step[(prompt, step)][0] += k
        per_step[(prompt, step)][1] += G
    totals: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for (prompt, _), (k, n) in per_step.items():
        totals[prompt][0] += k
        totals[prompt][1] += n
    out = {}
    for (step, uid), (prompt, G, _) in groups.items():
        k_other = totals[prompt][0] - per_step[(prompt, step)][0]
        n_other = totals[prompt][1] - per_step[(prompt, step)][1]
        out[(step, uid)] = silent_exact(k_other, n_other, G)
    return out


def step_brute_force(
    rows: pl.DataFrame, expected: dict[tuple[int, str], float | None]
) -> dict[int, dict[str, float]]:
    """Per step: measured and expected silent fraction over the compared groups, and z."""
    acc: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for key, (_, G, k) in groups_of(rows).items():
        P = expected[key]
        if P is None:
            continue
        a = acc[key[0]]
        a[0] += 1
        a[1] += float(k in (0, G))
        a[2] += P
        a[3] += P * (1 - P)
    return {
        step: {"measured": s / n, "expected": e / n, "z": (s - e) / math.sqrt(v)}
        for step, (n, s, e, v) in acc.items()
    }


def truth_expectation(rows: pl.DataFrame, truth: pl.DataFrame) -> dict[tuple[int, str], float | None]:
    p = {(s, j): q for s, j, q in truth.iter_rows()}
    return {
        key: p[(key[0], prompt)] ** G + (1 - p[(key[0], prompt)]) ** G
        for key, (prompt, G, _) in groups_of(rows).items()
    }


def random_log(seed: int) -> pl.DataFrame:
    """A small messy log: 6 prompts over 5 steps, group sizes 1–6, some prompts in one step only."""
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(1, 6):
        for prompt in rng.choice(6, size=3, replace=False).tolist():
            for copy in range(int(rng.integers(1, 3))):
                G = int(rng.integers(1, 7))
                for i in range(G):
                    rows.append((step, f"{step}-{prompt}-{copy}", prompt, bool(rng.random() < 0.4), True, i))
    # Prompt 6 appears in step 2 only, so every log has a prompt seen in a single step.
    rows += [(2, "2-6-0", 6, i == 0, True, i) for i in range(3)]
    frame = pl.DataFrame(
        rows, schema=["step", "uid", "prompt_id", "acc", "usable", "i"], orient="row"
    ).with_columns(pl.col("prompt_id").cast(pl.UInt64))
    return frame


def log_of(rows: pl.DataFrame) -> pl.LazyFrame:
    return rows.lazy().select(
        "step",
        pl.col("uid").alias("group"),
        pl.col("prompt_id").alias("prompt"),
        pl.col("acc").alias("right"),
        pl.lit(True).alias("usable"),
    )


# ------------------------------------------------------------------------------------------ expectation from the truth


def test_expected_silent_fraction_from_true_rates_equals_brute_force(
    drifting: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    rows, truth = drifting
    result = tr.track(er.track_input(rows), truth)
    brute = step_brute_force(rows, truth_expectation(rows, truth))
    expected = [brute[s]["expected"] for s in result.steps["step"]]
    assert expected == pytest.approx(result.steps["expected_silent_fraction"].to_list(), rel=1e-12)


def test_z_scores_equal_brute_force(drifting: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    rows, truth = drifting
    result = tr.track(er.track_input(rows), truth)
    brute = step_brute_force(rows, truth_expectation(rows, truth))
    assert [brute[s]["z"] for s in result.steps["step"]] == pytest.approx(
        result.steps["silent_z"].to_list(), rel=1e-9
    )


def test_measured_silent_fraction_is_within_binomial_noise_of_the_truth(
    drifting: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    rows, truth = drifting
    brute = step_brute_force(rows, truth_expectation(rows, truth))
    outside = [s for s, v in brute.items() if abs(v["z"]) >= 4 and s != DRIFTING.filter_step]
    assert [] == outside


def test_the_filtering_step_is_flagged_with_true_rates(drifting: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    rows, truth = drifting
    result = tr.track(er.track_input(rows), truth)
    assert [DRIFTING.filter_step] == result.run["drift_steps"].item().to_list()


def test_the_filtering_step_is_flagged_leave_one_step_out(steady: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    rows, _ = steady
    result = tr.track(er.track_input(rows))
    assert [STEADY.filter_step] == result.run["drift_steps"].item().to_list()


def test_filtered_step_measures_no_silent_group(steady: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    rows, _ = steady
    steps = tr.track(er.track_input(rows)).steps
    assert 0.0 == steps.filter(pl.col("step") == STEADY.filter_step)["silent_fraction"].item()


def test_a_learning_policy_parts_from_leave_one_step_out_at_the_last_step() -> None:
    rows, _ = er.generate(er.RunSpec(prompts=256, steps=20, batch=128, drift=0.3, seed=0))
    steps = tr.track(er.track_input(rows)).steps
    assert steps["drift"][-1]


# ------------------------------------------------------------------------------------------ leave-one-step-out


@pytest.mark.parametrize("seed", range(6))
def test_leave_one_step_out_equals_brute_force(seed: int) -> None:
    rows = random_log(seed)
    groups = tr.track(log_of(rows)).groups
    brute = loso_brute_force(rows)
    got = {(s, g): e for s, g, e in groups.select("step", "group", "expected").iter_rows()}
    assert {key for key, v in brute.items() if v is None} == {key for key, v in got.items() if v is None}
    expected = {key: float(v) for key, v in brute.items() if v is not None}
    assert expected == pytest.approx({key: v for key, v in got.items() if v is not None}, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_step_table_equals_brute_force_leave_one_step_out(seed: int) -> None:
    rows = random_log(seed)
    steps = tr.track(log_of(rows)).steps
    brute = step_brute_force(
        rows, {k: None if v is None else float(v) for k, v in loso_brute_force(rows).items()}
    )
    got = {
        r["step"]: r["compared_silent_fraction"] for r in steps.iter_rows(named=True) if r["compared_groups"]
    }
    assert {s: v["measured"] for s, v in brute.items()} == pytest.approx(got)


def test_prompts_seen_in_one_step_are_counted() -> None:
    rows = random_log(3)
    result = tr.track(log_of(rows))
    steps_per_prompt = rows.group_by("prompt_id").agg(pl.col("step").n_unique())
    assert int((steps_per_prompt["step"] == 1).sum()) == result.run["single_step_prompts"].item()


def test_groups_of_single_step_prompts_are_not_compared() -> None:
    rows = random_log(3)
    result = tr.track(log_of(rows))
    brute = loso_brute_force(rows)
    assert sum(v is None for v in brute.values()) == result.run["uncompared_groups"].item()


def test_group_larger_than_the_other_samples_is_not_identified_unless_the_plugin_is_asked() -> None:
    log = pl.LazyFrame(
        {
            "step": [1, 1, 1, 2, 2],
            "group": ["a", "a", "a", "b", "b"],
            "prompt": ["x"] * 5,
            "right": [True, False, True, True, False],
            "usable": [True] * 5,
        }
    )
    groups = tr.track(log).groups.sort("step")
    # Step 1 (G = 3) sees k' = 1 of n' = 2 in step 2: beyond n', and two groups identify no prior.
    assert groups["expected"][0] is None
    assert float(Fraction(1, 3)) == pytest.approx(groups["expected"][1], rel=1e-15)
    assert [None, "unbiased"] == groups["basis"].to_list()
    plugin = tr.track_groups(tr.group_table(log), estimate=("plugin", None)).groups.sort("step")
    # p̂' = 1/2 at G = 3, then p̂' = 2/3 at G = 2.
    assert [0.25, float(Fraction(5, 9))] == pytest.approx(plugin["expected"].to_list(), rel=1e-15)


# ------------------------------------------------------------------------------------------ run statistics


def test_r_squared_and_bias_equal_brute_force(drifting: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    rows, truth = drifting
    result = tr.track(er.track_input(rows), truth)
    brute = step_brute_force(rows, truth_expectation(rows, truth))
    m = [brute[s]["measured"] for s in sorted(brute)]
    e = [brute[s]["expected"] for s in sorted(brute)]
    mean_m = sum(m) / len(m)
    r2 = 1 - sum((a - b) ** 2 for a, b in zip(m, e, strict=True)) / sum((a - mean_m) ** 2 for a in m)
    bias = sum(a - b for a, b in zip(m, e, strict=True)) / len(m)
    assert r2 == pytest.approx(result.run["r_squared"].item(), rel=1e-9)
    assert bias == pytest.approx(result.run["mean_bias"].item(), rel=1e-9)


def test_r_squared_is_nan_when_measured_fractions_do_not_vary() -> None:
    steps = pl.DataFrame(
        {
            "compared_groups": [3, 3],
            "compared_silent_fraction": [0.5, 0.5],
            "expected_silent_fraction": [0.4, 0.6],
        }
    )
    assert math.isnan(tr.fit_statistics(steps)[0])


def test_step_table_columns_are_in_the_documented_order(steady: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    result = tr.track(er.track_input(steady[0]))
    assert list(tr.STEP_COLUMNS) == result.steps.columns


def test_all_right_and_all_wrong_fractions_add_up_to_the_silent_fraction(
    steady: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    steps = tr.track(er.track_input(steady[0])).steps
    total = steps["all_right_fraction"] + steps["all_wrong_fraction"]
    assert steps["silent_fraction"].to_list() == pytest.approx(total.to_list())


def test_deterministic_expectation_violated_gives_infinite_z() -> None:
    log = pl.LazyFrame(
        {
            "step": [1, 1],
            "group": ["g", "g"],
            "prompt": [7, 7],
            "right": [True, False],
            "usable": [True, True],
        }
    ).with_columns(pl.col("prompt").cast(pl.UInt64))
    result = tr.track(log, pl.DataFrame({"prompt": [7], "p": [1.0]}))
    assert -math.inf == result.steps["silent_z"].item()


# ------------------------------------------------------------------------------------------ usable rollouts


def test_unusable_rollouts_do_not_count() -> None:
    log = pl.LazyFrame(
        {
            "step": [1, 1, 1, 1],
            "group": ["g"] * 4,
            "prompt": ["x"] * 4,
            "right": [True, True, None, False],
            "usable": [True, True, False, False],
        }
    )
    steps = tr.track(log, pl.DataFrame({"prompt": ["x"], "p": [0.5]})).steps
    assert 2 == steps["rollouts"].item()
    assert 1.0 == steps["all_right_fraction"].item()


def test_group_without_usable_rollouts_is_counted_apart() -> None:
    log = pl.LazyFrame(
        {
            "step": [1, 1, 1],
            "group": ["a", "a", "b"],
            "prompt": ["x", "x", "y"],
            "right": [True, False, None],
            "usable": [True, True, False],
        }
    )
    result = tr.track(log, pl.DataFrame({"prompt": ["x", "y"], "p": [0.5, 0.5]}))
    assert 1 == result.run["groups"].item()
    assert 1 == result.run["unusable_groups"].item()


# ------------------------------------------------------------------------------------------ export


def test_export_sums_k_and_n_over_the_run(drifting: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    rows, _ = drifting
    exported = tr.export_pass_rates(er.track_input(rows))
    assert int(rows["acc"].sum()) == exported["k"].sum()
    assert rows.height == exported["n"].sum()


def test_export_per_prompt_equals_brute_force() -> None:
    rows = random_log(5)
    exported = tr.export_pass_rates(log_of(rows))
    brute: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for prompt, acc in rows.select("prompt_id", "acc").iter_rows():
        brute[prompt][0] += int(acc)
        brute[prompt][1] += 1
    assert {p: tuple(v) for p, v in brute.items()} == {p: (k, n) for p, k, n in exported.iter_rows()}


def test_export_windows_add_up_to_the_whole_run(drifting: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    log = er.track_input(drifting[0])
    parts = pl.concat([tr.export_pass_rates(log, (1, 5)), tr.export_pass_rates(log, (6, 12))])
    summed = parts.group_by("prompt").agg(pl.col("k", "n").sum()).sort("prompt")
    assert tr.export_pass_rates(log).equals(summed)


def test_exported_counts_read_back_with_k_and_n_columns(
    tmp_path: Path, drifting: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    exported = tr.export_pass_rates(er.track_input(drifting[0]))
    path = tmp_path / "rates.csv"
    exported.write_csv(path)
    out = csv_of(invoke("silent", path, "--k-col", "k", "--n-col", "n", "--G", "8", "--format", "csv"))
    assert exported.height == out["prompts"].item()


def test_reversed_step_window_is_a_usage_error(drifting: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    with pytest.raises(UsageError, match="empty"):
        tr.export_pass_rates(er.track_input(drifting[0]), (5, 2))


# ------------------------------------------------------------------------------------------ bad input


def test_missing_columns_are_named() -> None:
    with pytest.raises(DataError, match=r"missing column.*right, usable"):
        tr.track(pl.LazyFrame({"step": [1], "group": ["g"], "prompt": ["x"]}))


def test_non_boolean_grade_is_refused() -> None:
    log = pl.LazyFrame({"step": [1], "group": ["g"], "prompt": ["x"], "right": [1.0], "usable": [True]})
    with pytest.raises(DataError, match="right is Float64, not Boolean"):
        tr.track(log)


def test_group_mixing_prompts_is_named() -> None:
    log = pl.LazyFrame(
        {
            "step": [3, 3],
            "group": ["g", "g"],
            "prompt": ["x", "y"],
            "right": [True, False],
            "usable": [True, True],
        }
    )
    with pytest.raises(DataError, match="mix several prompts \\(step 3 group 'g'\\)"):
        tr.track(log)


def test_usable_rollout_without_a_grade_is_refused() -> None:
    log = pl.LazyFrame(
        {"step": [1], "group": ["g"], "prompt": ["x"], "right": [None], "usable": [True]},
        schema_overrides={"right": pl.Boolean},
    )
    with pytest.raises(DataError, match="without a right/wrong grade"):
        tr.track(log)


def test_null_key_is_refused() -> None:
    log = pl.LazyFrame(
        {
            "step": [1, 1],
            "group": ["g", None],
            "prompt": ["x", "x"],
            "right": [True, False],
            "usable": [True, True],
        }
    )
    with pytest.raises(DataError, match="null step, group or prompt"):
        tr.track(log)


def test_table_keys_of_another_type_are_refused() -> None:
    log = pl.LazyFrame({"step": [1], "group": ["g"], "prompt": [3], "right": [True], "usable": [True]})
    log = log.with_columns(pl.col("prompt").cast(pl.UInt64))
    with pytest.raises(DataError, match="do not match the log's prompt keys"):
        tr.track(log, pl.DataFrame({"prompt": ["problem three"], "p": [0.5]}))


def test_table_with_integer_keys_joins_unsigned_log_keys() -> None:
    log = pl.LazyFrame(
        {
            "step": [1, 1],
            "group": ["g", "g"],
            "prompt": [3, 3],
            "right": [True, False],
            "usable": [True, True],
        }
    )
    log = log.with_columns(pl.col("prompt").cast(pl.UInt64))
    result = tr.track(log, pl.DataFrame({"prompt": [3], "p": [0.5]}))
    assert 0.5 == result.steps["expected_silent_fraction"].item()


@pytest.mark.parametrize(
    ("table", "match"),
    [
        (pl.DataFrame({"id": ["x"], "p": [0.5]}), "no 'prompt' column"),
        (pl.DataFrame({"prompt": ["x"], "rate": [0.5]}), "give a 'p' column"),
        (pl.DataFrame({"prompt": ["x", "x"], "p": [0.5, 0.4]}), "repeat a key"),
        (pl.DataFrame({"prompt": ["x"], "p": [1.5]}), r"lie in \[0, 1\]"),
        (pl.DataFrame({"prompt": ["x"], "k": [5], "n": [4]}), "0 ≤ k ≤ n"),
    ],
)
def test_bad_pass_rate_table_is_refused(table: pl.DataFrame, match: str) -> None:
    log = pl.LazyFrame({"step": [1], "group": ["g"], "prompt": ["x"], "right": [True], "usable": [True]})
    with pytest.raises(DataError, match=match):
        tr.track(log, table)


@pytest.mark.parametrize(("z", "gap"), [(0.0, 0.02), (4.0, 1.5)])
def test_bad_drift_options_are_usage_errors(z: float, gap: float) -> None:
    log = pl.LazyFrame({"step": [1], "group": ["g"], "prompt": ["x"], "right": [True], "usable": [True]})
    with pytest.raises(UsageError):
        tr.track(log, z_threshold=z, min_gap=gap)


# ------------------------------------------------------------------------------------------ headline


def test_headline_names_the_flagged_step_and_its_fractions(steady: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    result = tr.track(er.track_input(steady[0]))
    row = result.steps.filter(pl.col("drift")).row(0, named=True)
    expected = (
        f"Step {row['step']} ({100 * row['compared_silent_fraction']:.1f}% vs "
        f"{100 * row['expected_silent_fraction']:.1f}%, z = {row['silent_z']:+.1f}) parts"
    )
    assert expected in tr.headline(result)


def test_headline_says_when_no_step_parts(drifting: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    rows, truth = drifting
    unfiltered = rows.filter(pl.col("step") != DRIFTING.filter_step)
    assert "No step parts from the expectation" in tr.headline(tr.track(er.track_input(unfiltered), truth))


def test_headline_counts_groups_left_out() -> None:
    result = tr.track(log_of(random_log(3)))
    assert f"{result.run['uncompared_groups'].item()} group(s) are not compared" in tr.headline(result)


# ------------------------------------------------------------------------------------------ the generator


def test_dump_files_are_named_by_step(tmp_path: Path) -> None:
    rows, _ = er.generate(er.RunSpec(prompts=8, steps=3, batch=4, group_size=2, seed=0))
    paths = er.write_verl_dump(rows, tmp_path)
    assert ["1.jsonl", "2.jsonl", "3.jsonl"] == [p.name for p in paths]


def test_dump_rows_have_verl_keys_in_order(tmp_path: Path) -> None:
    rows, _ = er.generate(er.RunSpec(prompts=8, steps=2, batch=4, group_size=2, seed=0))
    er.write_verl_dump(rows, tmp_path)
    first = json.loads((tmp_path / "2.jsonl").read_text().splitlines()[0])
    assert list(er.DUMP_KEYS) == list(first)


def test_dump_score_is_plus_one_exactly_when_right(tmp_path: Path) -> None:
    rows, _ = er.generate(er.RunSpec(prompts=8, steps=2, batch=4, group_size=4, seed=3))
    er.write_verl_dump(rows, tmp_path)
    lines = [
        json.loads(line) for p in sorted(tmp_path.glob("*.jsonl")) for line in p.read_text().splitlines()
    ]
    assert all((row["score"] == 1.0) == row["acc"] and row["score"] in (1.0, -1.0) for row in lines)


def test_dump_step_field_matches_the_file(tmp_path: Path) -> None:
    rows, _ = er.generate(er.RunSpec(prompts=8, steps=3, batch=4, group_size=2, seed=0))
    er.write_verl_dump(rows, tmp_path)
    steps = {
        p.stem: {json.loads(line)["step"] for line in p.read_text().splitlines()}
        for p in tmp_path.glob("*.jsonl")
    }
    assert {str(s): {s} for s in (1, 2, 3)} == steps


def test_generator_is_reproducible_from_its_seed() -> None:
    spec = er.RunSpec(prompts=16, steps=3, batch=8, seed=11)
    assert er.generate(spec)[0].equals(er.generate(spec)[0])


def test_truth_follows_the_drift_schedule() -> None:
    spec = er.RunSpec(prompts=4, steps=5, batch=4, drift=0.5, seed=2)
    _, truth = er.generate(spec)
    logit = truth.with_columns((pl.col("p").log() - (1 - pl.col("p")).log()).alias("logit"))
    slopes = logit.sort("step").group_by("prompt").agg(pl.col("logit").diff().drop_nulls())
    assert [0.5] * 16 == pytest.approx(slopes["logit"].explode().to_list())


def test_every_rollout_of_a_group_shares_its_prompt() -> None:
    rows, _ = er.generate(er.RunSpec(prompts=16, steps=4, batch=8, seed=5))
    assert 1 == rows.group_by("uid").agg(pl.col("prompt_id").n_unique())["prompt_id"].max()


def test_bad_spec_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="filtering step"):
        er.generate(er.RunSpec(steps=3, filter_step=4))


# ------------------------------------------------------------------------------------------ the bundled example

EXAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data" / "example_run"


def read_dump(directory: Path) -> pl.LazyFrame:
    """The simplest reader of a verl dump with uid: what a trainer-log reader would hand to track."""
    return pl.scan_ndjson(sorted(directory.glob("*.jsonl"))).select(
        pl.col("step").cast(pl.Int64),
        pl.col("uid").alias("group"),
        pl.col("input").alias("prompt"),
        pl.col("acc").alias("right"),
        pl.lit(True).alias("usable"),
    )


def test_bundled_example_is_what_the_generator_writes(tmp_path: Path) -> None:
    er.write_example(tmp_path / "run", tmp_path / "truth.csv")
    fresh = {p.name: p.read_bytes() for p in (tmp_path / "run").glob("*.jsonl")}
    assert fresh == {p.name: p.read_bytes() for p in EXAMPLE_DIR.glob("*.jsonl")}


def test_bundled_truth_is_what_the_generator_writes(tmp_path: Path) -> None:
    er.write_example(tmp_path / "run", tmp_path / "truth.csv")
    bundled = EXAMPLE_DIR.parent / "example_run_pass_rates.csv"
    assert bundled.read_bytes() == (tmp_path / "truth.csv").read_bytes()


def test_bundled_example_flags_its_filtering_step() -> None:
    result = tr.track(read_dump(EXAMPLE_DIR))
    assert [er.EXAMPLE.filter_step] == result.run["drift_steps"].item().to_list()


def test_bundled_example_read_back_equals_the_generated_log() -> None:
    rows, _ = er.generate(er.EXAMPLE)
    from_files = tr.group_table(read_dump(EXAMPLE_DIR)).select("step", "group", "G", "k")
    generated = tr.group_table(er.track_input(rows)).select("step", "group", "G", "k")
    assert generated.equals(from_files)

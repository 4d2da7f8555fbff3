"""track --expect window: each step against its neighbours' pooled counts, on a run whose pass rates drift
linearly (p_j(s) = p_j(1) + 0.012 (s − 1), p_j(1) uniform on [0.02, 0.25], 512 prompts in every step, G = 4,
20 steps), so that the silent share falls all along the run.

Leave-one-step-out compares the ends of such a run with its middle and flags them; the window follows the
run and flags nothing; a step whose silent groups were dropped (a filter) is flagged by both. Measured over
seeds 0–7: the window flags no step of the unfiltered run (K = 1 and 2); leave-one-step-out flags steps 1–5
and 16–20 at least; with step 10 filtered, K = 2 flags step 10 alone, and K = 1 also flags a neighbour
(9 or 11) for three seeds of eight, whose expectation pools the filtered step's counts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sigmatool.track import track, track_groups
from sigmatool.track.expected import window
from tests.conftest import csv_of, invoke
from tests.trainer_fixtures import Group, write_verl

STEPS, PROMPTS, G, SLOPE, FILTERED = 20, 512, 4, 0.012, 10


def drifting(seed: int, filter_step: int | None = None) -> pl.LazyFrame:
    """Rollouts (step, group, prompt, right, usable) of the linearly drifting run."""
    rng = np.random.default_rng(seed)
    start = rng.uniform(0.02, 0.25, PROMPTS)
    frames = []
    for step in range(1, STEPS + 1):
        p = np.clip(start + SLOPE * (step - 1), 0.02, 0.98)
        right = rng.random((PROMPTS, G)) < p[:, None]
        k = right.sum(axis=1)
        keep = np.ones(PROMPTS, dtype=bool) if step != filter_step else (k > 0) & (k < G)
        prompts = np.repeat(np.flatnonzero(keep), G)
        frames.append(
            pl.DataFrame(
                {
                    "step": np.full(prompts.size, step),
                    "group": step * PROMPTS + prompts,
                    "prompt": prompts,
                    "right": right[keep].ravel(),
                }
            )
        )
    return pl.concat(frames).with_columns(pl.lit(True).alias("usable")).lazy()


def flagged(log: pl.LazyFrame, K: int | None) -> list[int]:
    return track(log, window=K).steps.filter(pl.col("drift"))["step"].to_list()


@pytest.mark.parametrize("K", [1, 2])
def test_the_window_flags_no_step_of_a_drifting_run(K: int) -> None:
    assert [] == flagged(drifting(seed=3), K)


def test_leave_one_step_out_flags_the_start_of_a_drifting_run() -> None:
    assert 1 in flagged(drifting(seed=3), None)


def test_leave_one_step_out_flags_the_end_of_a_drifting_run() -> None:
    assert STEPS in flagged(drifting(seed=3), None)


@pytest.mark.parametrize("K", [None, 1, 2])
def test_a_filtered_step_is_flagged(K: int | None) -> None:
    assert FILTERED in flagged(drifting(seed=3, filter_step=FILTERED), K)


def test_a_window_of_two_flags_only_the_filtered_step() -> None:
    assert [FILTERED] == flagged(drifting(seed=3, filter_step=FILTERED), 2)


def test_a_window_of_one_flags_the_filtered_step_and_at_most_its_neighbours() -> None:
    assert set(flagged(drifting(seed=3, filter_step=FILTERED), 1)) <= {FILTERED - 1, FILTERED, FILTERED + 1}


def test_a_filtered_step_is_below_its_expectation() -> None:
    steps = track(drifting(seed=3, filter_step=FILTERED), window=2).steps
    assert steps.filter(pl.col("step") == FILTERED)["silent_z"].item() < -4


def _brute_force(groups: pl.DataFrame, K: int) -> dict[tuple[int, int], tuple[int, int]]:
    """(step, group) → (k′, n′): the prompt's counts in the K steps on either side, by a plain loop."""
    order = sorted(set(groups["step"]))
    at = {s: i for i, s in enumerate(order)}
    out = {}
    rows = groups.select("step", "group", "prompt").rows()
    for step, group, prompt in rows:
        near = groups.filter(
            (pl.col("prompt") == prompt)
            & pl.col("step").is_in([s for s in order if 0 < abs(at[s] - at[step]) <= K])
        )
        out[(step, group)] = (int(near["k"].sum()), int(near["G"].sum()))
    return out


def test_the_window_pools_the_counts_of_its_steps() -> None:
    groups = pl.DataFrame(
        {
            "step": [1, 1, 2, 4, 4, 7, 9],  # steps missing from the log are skipped
            "group": [1, 2, 3, 4, 5, 6, 7],
            "prompt": [10, 11, 10, 10, 11, 10, 11],
            "G": [4, 4, 4, 4, 4, 4, 4],
            "k": [1, 4, 2, 0, 3, 4, 2],
        }
    )
    out = window(groups, 1)
    got = {(s, g): (k, n) for s, g, k, n in out.select("step", "group", "k_other", "n_other").rows()}
    assert _brute_force(groups, 1) == got


def test_a_window_and_a_rate_table_are_not_both_taken() -> None:
    from sigmatool.errors import UsageError

    groups = pl.DataFrame({"step": [1], "group": [1], "prompt": [1], "G": [2], "k": [1]})
    with pytest.raises(UsageError):
        track_groups(groups, pl.DataFrame({"prompt": [1], "p": [0.5]}), window=1)


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A verl dump of a short run with one filtered step (4): 64 prompts at every step, G = 8."""
    rng = np.random.default_rng(0)
    start = rng.uniform(0.05, 0.6, 64)
    groups = []
    for step in range(1, 9):
        for j, p in enumerate(np.clip(start + 0.01 * step, 0, 1)):
            rewards = tuple(bool(x) for x in rng.random(8) < p)
            if step == 4 and len(set(rewards)) == 1:
                continue
            groups.append(Group(step, f"question {j}", rewards))
    folder = tmp_path_factory.mktemp("window")
    write_verl(folder, groups, uid=True)
    return folder


def test_the_command_line_names_the_window(dump: Path) -> None:
    result = invoke(
        "track", dump, "--from", "verl", "--expect", "window", "--window", "3", "--format", "table"
    )
    assert "(window of 3 steps;" in " ".join(result.stdout.split())


def test_the_command_line_window_is_the_librarys(dump: Path) -> None:
    table = csv_of(invoke("track", dump, "--from", "verl", "--expect", "window", "--format", "csv"))
    from sigmatool.trainers.dumps import find_dump_files, scan_trainer

    library = track(scan_trainer("verl", find_dump_files("verl", [str(dump)])).frame, window=2).steps
    assert library["expected_silent_fraction"].to_list() == table["expected_silent_fraction"].to_list()


def test_the_summary_says_the_window(dump: Path) -> None:
    table = csv_of(
        invoke("track", dump, "--from", "verl", "--expect", "window", "--summary", "--format", "csv")
    )
    assert "window of 2 steps" == table["expected_from"].item()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--window", "3"], "--window K sets the window of --expect window"),
        (["--expect", "window", "--pass-rates", "x.csv"], "two sources of the expectation"),
    ],
)
def test_a_window_out_of_place_is_a_usage_error(dump: Path, args: list[str], message: str) -> None:
    result = invoke("track", dump, "--from", "verl", *args)
    assert 2 == result.exit_code
    assert message in result.stderr

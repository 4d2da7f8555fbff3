"""track and report on runs where no step can be compared: single-step dumps, one rollout per prompt, a run
whose prompts never recur. Each run is written in its trainer's own file layout (tests/trainer_fixtures.py,
sigmatool.examplerun); the measured silent share is counted again here from the groups written."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result

from sigmatool import examplerun as er
from tests.conftest import csv_of, invoke
from tests.trainer_fixtures import Group, write_trl, write_verl

ONE_EPOCH = er.RunSpec(prompts=64, steps=4, batch=16, group_size=8, drift=0.1, seed=5)


def _groups(steps: int, per_step: int, size: int, p: float, seed: int) -> list[Group]:
    rng = random.Random(seed)
    return [
        Group(
            step,
            f"prompt {step}-{i}: compute {rng.randint(0, 999)}",
            tuple(rng.random() < p for _ in range(size)),
        )
        for step in range(1, steps + 1)
        for i in range(per_step)
    ]


def _silent_by_step(groups: Sequence[Group]) -> dict[int, float]:
    """Per step, the share of groups whose rewards all agree, counted from the groups written."""
    counts: dict[int, list[int]] = {}
    for g in groups:
        row = counts.setdefault(g.step, [0, 0])
        row[0] += len(set(g.rewards)) == 1
        row[1] += 1
    return {step: silent / total for step, (silent, total) in counts.items()}


def _one_epoch(folder: Path) -> tuple[Path, list[Group]]:
    rows, _ = er.generate(ONE_EPOCH)
    er.write_verl_dump(rows, folder)
    groups = [
        Group(int(step), str(uid), tuple(part["acc"].to_list()))
        for (step, uid), part in rows.group_by("step", "uid", maintain_order=True)
    ]
    return folder, groups


RUNS = ("single-step verl", "n = 1 verl", "300-step TRL", "one-epoch verl")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str, list[Group]]]:
    """Each run: its folder, its --from, and the groups written."""
    root = tmp_path_factory.mktemp("uncompared")
    single = _groups(1, 16, 8, 0.5, seed=1)
    ones = _groups(3, 32, 1, 0.5, seed=2)
    trl = _groups(300, 1, 6, 0.8, seed=3)
    write_verl(root / "single", single)
    write_verl(root / "ones", ones)
    write_trl(root / "trl", trl)
    epoch_dir, epoch = _one_epoch(root / "epoch")
    return {
        RUNS[0]: (root / "single", "verl", single),
        RUNS[1]: (root / "ones", "verl", ones),
        RUNS[2]: (root / "trl", "trl", trl),
        RUNS[3]: (epoch_dir, "verl", epoch),
    }


def _share(groups: Sequence[Group]) -> float:
    return sum(len(set(g.rewards)) == 1 for g in groups) / len(groups)


# Each run is tracked once per output (its CSV, its table, its plot with the CSV beside it), and every test
# reads those runs.
@pytest.fixture(scope="module")
def tables(runs) -> dict[str, pl.DataFrame]:  # type: ignore[no-untyped-def]
    return {
        name: csv_of(invoke("track", folder, "--from", trainer, "--format", "csv"))
        for name, (folder, trainer, _) in runs.items()
    }


@pytest.fixture(scope="module")
def shown(runs) -> dict[str, Result]:  # type: ignore[no-untyped-def]
    return {
        name: invoke("track", folder, "--from", trainer, "--format", "table")
        for name, (folder, trainer, _) in runs.items()
    }


def _said(shown: dict[str, Result], name: str) -> str:
    return " ".join(shown[name].stdout.split())


@pytest.fixture(scope="module")
def plotted(runs, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Result, Path]]:  # type: ignore[no-untyped-def]
    out = {}
    for name, (folder, trainer, _) in runs.items():
        where = tmp_path_factory.mktemp("plotted")
        result = invoke("track", folder, "--from", trainer, "--plot", where / "t.svg", "-o", where / "t.csv")
        out[name] = (result, where)
    return out


@pytest.mark.parametrize("name", RUNS)
def test_the_step_table_is_the_measured_series(runs, tables, name: str) -> None:  # type: ignore[no-untyped-def]
    _, _, groups = runs[name]
    table = tables[name]
    assert _silent_by_step(groups) == dict(zip(table["step"], table["silent_fraction"], strict=True))


@pytest.mark.parametrize("name", RUNS)
def test_no_group_is_compared(tables, name: str) -> None:  # type: ignore[no-untyped-def]
    assert 0 == tables[name]["compared_groups"].sum()


@pytest.mark.parametrize("name", RUNS)
def test_the_headline_states_the_measured_share(runs, shown, name: str) -> None:  # type: ignore[no-untyped-def]
    _, _, groups = runs[name]
    assert 0 == shown[name].exit_code, shown[name].stderr
    said = _said(shown, name)
    assert f"{100 * _share(groups):.1f}% of the {len(groups):,} groups silent (measured)" in said


@pytest.mark.parametrize("name", RUNS)
def test_the_headline_says_how_to_compare(shown, name: str) -> None:  # type: ignore[no-untyped-def]
    assert "To compare, give --pass-rates FILE" in _said(shown, name)


def test_a_single_step_says_why_nothing_is_compared(shown) -> None:  # type: ignore[no-untyped-def]
    assert "Nothing is compared: the run has one step" in _said(shown, RUNS[0])


@pytest.mark.parametrize("name", [RUNS[0], RUNS[3]])
def test_a_run_with_nothing_compared_shows_no_comparison_columns(runs, name: str) -> None:  # type: ignore[no-untyped-def]
    folder, trainer, _ = runs[name]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "80")
        lines = invoke("track", folder, "--from", trainer, "--format", "table").stdout.splitlines()
    cells = {cell.strip() for line in lines if "┃" in line for cell in line.split("┃")}
    assert {"step", "silent"} <= cells
    assert set() == cells & {"expected", "silent", "z", "drift", "compared", "min", "max"} - {"silent"}


def test_a_run_whose_prompts_never_recur_says_why_nothing_is_compared(shown) -> None:  # type: ignore[no-untyped-def]
    said = _said(shown, RUNS[3])
    assert f"every prompt appears in one step only ({ONE_EPOCH.prompts} prompts)" in said


def test_groups_of_one_are_said_to_be_silent_whatever_the_prompt(shown) -> None:  # type: ignore[no-untyped-def]
    assert "a group of one is silent whatever its prompt" in _said(shown, RUNS[1])


@pytest.mark.parametrize("name", RUNS)
def test_the_plot_draws_the_measured_series(plotted, name: str) -> None:  # type: ignore[no-untyped-def]
    result, where = plotted[name]
    assert 0 == result.exit_code, result.stderr
    assert (where / "t.svg").stat().st_size > 0


@pytest.mark.parametrize("name", RUNS)
def test_the_csv_is_written_beside_the_plot(runs, plotted, name: str) -> None:  # type: ignore[no-untyped-def]
    _, _, groups = runs[name]
    _, where = plotted[name]
    assert len(_silent_by_step(groups)) == pl.read_csv(where / "t.csv").height


def test_the_figure_plots_the_measured_share_of_each_step(runs) -> None:  # type: ignore[no-untyped-def]
    from sigmatool.track import track
    from sigmatool.trainers.dumps import find_dump_files, scan_trainer

    folder, trainer, groups = runs[RUNS[3]]
    result = track(scan_trainer(trainer, find_dump_files(trainer, [str(folder)])).frame)
    plot = result.figure("run")
    assert tuple(_silent_by_step(groups).values()) == plot.get("measured").y


# A report per run layout is a few seconds each: the single-step run here, the others in `make test-slow`.
@pytest.mark.parametrize(
    "name", [RUNS[0], *[pytest.param(name, marks=pytest.mark.slow) for name in RUNS[1:]]]
)
def test_the_report_tracks_the_run(runs, name: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder, trainer, groups = runs[name]
    result = invoke("report", folder, "--from", trainer, "-o", tmp_path / "r.md")
    assert 0 == result.exit_code, result.stderr
    text = " ".join((tmp_path / "r.md").read_text().split())
    assert f"{100 * _share(groups):.1f}% of the {len(groups):,} groups silent (measured)" in text

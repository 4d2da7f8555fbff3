"""Several pass-rate columns through the CLI: ``--col A --col B`` (or a glob) is two runs in one.

The data: prompts drawn from the bundled Big-Math counts (k of 64), each given two independent draws of 8
of its 64 answers (two 8-sample columns, as a difficulty file holds one per model or temperature) and a
`src` column to group by. Each command's output for column A equals the same command run with `--col A`
alone; the per-prompt exports hold one row per prompt and column. A second file names its pass-rate
column differently, for the report. A third holds, for the same prompts, an 8-sample column beside their
64-sample one: at G = 16 the default prior differs between them (the NPMLE prior for the 8-sample column, the
plug-in for the other), and each column must still be its own run.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import Result
from polars.testing import assert_frame_equal

from tests.conftest import BIGMATH_COUNTS, READING, csv_of, invoke, one_error_line

SEED = 20261201
PROMPTS = 400
A, B = "llama8b_8a", "llama8b_8b"
FEW, MANY = "llama8b_8", "llama8b_64"


def _draws(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Prompts drawn by the sample's prompt counts: their k of 64, and their n = 64."""
    counts = pl.read_csv(BIGMATH_COUNTS)
    weights = counts["count"].to_numpy().astype(np.float64)
    rows = rng.choice(counts.height, size=PROMPTS, p=weights / weights.sum())
    return counts["k"].to_numpy()[rows], counts["n"].to_numpy()[rows]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("columns")
    rng = np.random.default_rng(SEED)
    k, n = _draws(rng)
    eights = [rng.hypergeometric(k, n - k, 8) / 8 for _ in (A, B)]
    ids = [f"q{i}" for i in range(PROMPTS)]
    frame = pl.DataFrame({"id": ids, "src": rng.choice(["x", "y"], PROMPTS), A: eights[0], B: eights[1]})
    frame.write_parquet(path / "two.parquet")
    pl.DataFrame({"id": ids, "pass_rate": k / n}).write_csv(path / "other.csv")
    mixed = pl.DataFrame({"id": ids, "src": frame["src"], FEW: eights[0], MANY: k / n})
    mixed.write_parquet(path / "mixed.parquet")
    return path


@cache
def run(*args: str) -> Result:
    """One run of the CLI on the two-column file (each distinct command line once per module)."""
    return invoke(*args)


def two(folder: Path) -> str:
    return str(folder / "two.parquet")


COMMANDS = {
    "silent": ("silent", "--G", "4,16"),
    "budget": ("budget", "--G", "8"),
    "groupsize": ("groupsize",),
    "plan": ("plan", "--budget", "8"),
}


def _one(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    return frame.filter(pl.col("column") == column).drop("column")


def _assert_its_own_run(args: tuple[str, ...], folder: Path, column: str) -> None:
    """The rows of ``column`` in a run with both columns are the run with that one column."""
    both = csv_of(run(*args, two(folder), "--col", A, "--col", B, "-f", "csv"))
    alone = csv_of(run(*args, two(folder), "--col", column, "-f", "csv"))
    assert_frame_equal(alone, _one(both, column), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("column", [A, B])
def test_each_column_is_its_own_run(folder: Path, command: str, column: str) -> None:
    _assert_its_own_run(COMMANDS[command], folder, column)


@pytest.mark.parametrize("command", COMMANDS)
def test_the_column_key_comes_first(folder: Path, command: str) -> None:
    both = csv_of(run(*COMMANDS[command], two(folder), "--col", A, "--col", B, "-f", "csv"))
    assert "column" == both.columns[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_column_has_its_rows(folder: Path, command: str) -> None:
    both = csv_of(run(*COMMANDS[command], two(folder), "--col", A, "--col", B, "-f", "csv"))
    assert [A, B] == sorted(both["column"].unique().to_list())


def test_a_glob_is_the_columns_it_matches(folder: Path) -> None:
    repeated = run("silent", two(folder), "--col", A, "--col", B, "-f", "csv")
    assert repeated.stdout == run("silent", two(folder), "--col", "llama8b_*", "-f", "csv").stdout


def test_a_glob_of_one_column_still_names_it(folder: Path) -> None:
    assert [A] == csv_of(run("silent", two(folder), "--col", "*_8a", "-f", "csv"))[
        "column"
    ].unique().to_list()


def test_a_glob_that_matches_nothing_is_one_line_listing_the_columns(folder: Path) -> None:
    result = run("silent", two(folder), "--col", "qwen_*", "-f", "csv")
    assert 1 == result.exit_code
    assert f"id, src, {A}, {B}" in one_error_line(result.stderr)


@pytest.mark.parametrize("command", ["silent", "budget"])
def test_columns_compose_with_by(folder: Path, command: str) -> None:
    both = csv_of(run(*COMMANDS[command], two(folder), "--col", A, "--col", B, "--by", "src", "-f", "csv"))
    alone = csv_of(run(*COMMANDS[command], two(folder), "--col", B, "--by", "src", "-f", "csv"))
    assert_frame_equal(alone, _one(both, B), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


def test_by_column_is_refused_beside_several_columns(folder: Path) -> None:
    result = run("silent", two(folder), "--col", A, "--col", B, "--by", "column")
    assert 2 == result.exit_code
    assert "--by column" in one_error_line(result.stderr)


def test_the_table_compares_the_columns_row_by_row(folder: Path) -> None:
    table = run("silent", two(folder), "--col", A, "--col", B, "--G", "8", "-f", "table").stdout
    rows = [line.split("│")[0].strip() for line in table.splitlines() if "│" in line]
    assert [A, B] == rows


# --------------------------------------------------------------------------------------------- per prompt

PER_PROMPT = {
    "silent": ("silent", "--G", "4,16", "--per-prompt", "--id-col", "id"),
    "groupsize": ("groupsize", "--per-prompt", "--id-col", "id"),
    "plan": ("plan", "--budget", "8", "--per-prompt", "--id-col", "id"),
}
ROWS_PER_PROMPT = {"silent": 2, "groupsize": 1, "plan": 1}


@pytest.mark.parametrize("command", PER_PROMPT)
def test_the_per_prompt_export_has_a_row_per_prompt_and_column(folder: Path, command: str) -> None:
    both = csv_of(run(*PER_PROMPT[command], two(folder), "--col", A, "--col", B, "-f", "csv"))
    assert 2 * PROMPTS * ROWS_PER_PROMPT[command] == both.height


@pytest.mark.parametrize("command", PER_PROMPT)
@pytest.mark.parametrize("column", [A, B])
def test_the_per_prompt_export_of_a_column_is_its_own_run(folder: Path, command: str, column: str) -> None:
    _assert_its_own_run(PER_PROMPT[command], folder, column)


# --------------------------------------------------------------------------------------------- 8 and 64 samples

# Each at G = 16 (> 8: the 8-sample column alone takes the NPMLE prior, the 64-sample one the plug-in) and at
# G = 8 (both the plug-in); groupsize asks no G, so the second runs under --prior npmle, fitted per column.
MIXED = {
    "silent 16": ("silent", "--G", "16"),
    "silent 8": ("silent", "--G", "8"),
    "silent 16 ranges": ("silent", "--G", "16", "--bounds", "--ci", "0.9", "--replicates", "20"),
    "budget 16": ("budget", "--G", "16"),
    "budget 8": ("budget", "--G", "8"),
    "silent 16 by src": ("silent", "--G", "16", "--by", "src"),
    "budget 16 by src": ("budget", "--G", "16", "--by", "src"),
    "groupsize": ("groupsize",),
    "groupsize npmle": ("groupsize", "--prior", "npmle"),
    "plan 16": ("plan", "--budget", "12", "--sizes", "4,8,16"),
    "plan 8": ("plan", "--budget", "6", "--sizes", "4,8"),
}
MIXED_PER_PROMPT = {
    "silent 16": ("silent", "--G", "16", "--per-prompt", "--id-col", "id"),
    "silent 8": ("silent", "--G", "8", "--per-prompt", "--id-col", "id"),
    "budget 16": ("budget", "--G", "16", "--bins", "4"),  # budget has no per-prompt export: its bins
    "groupsize npmle": ("groupsize", "--prior", "npmle", "--per-prompt", "--id-col", "id"),
    "plan 16": ("plan", "--budget", "12", "--sizes", "4,8,16", "--per-prompt", "--id-col", "id"),
    "plan 8": ("plan", "--budget", "6", "--sizes", "4,8", "--per-prompt", "--id-col", "id"),
}


def mixed(folder: Path) -> str:
    return str(folder / "mixed.parquet")


def _both_and_alone(folder: Path, args: tuple[str, ...], column: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    both = csv_of(run(*args, mixed(folder), "--col", FEW, "--col", MANY, "-f", "csv"))
    return _one(both, column), csv_of(run(*args, mixed(folder), "--col", column, "-f", "csv"))


def _marked(commands: dict[str, tuple[str, ...]]) -> list[object]:
    """The commands, those under --prior npmle or with ranges marked slow (seconds each)."""
    slow = [pytest.mark.slow]
    return [
        pytest.param(name, marks=slow if "npmle" in name or "ranges" in name else []) for name in commands
    ]


@pytest.mark.parametrize("command", _marked(MIXED))
@pytest.mark.parametrize("column", [FEW, MANY])
def test_8_and_64_samples_each_is_its_own_run(folder: Path, command: str, column: str) -> None:
    both, alone = _both_and_alone(folder, MIXED[command], column)
    assert_frame_equal(alone, both, check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("command", _marked(MIXED_PER_PROMPT))
@pytest.mark.parametrize("column", [FEW, MANY])
def test_8_and_64_samples_each_exports_its_own_run(folder: Path, command: str, column: str) -> None:
    both, alone = _both_and_alone(folder, MIXED_PER_PROMPT[command], column)
    assert_frame_equal(alone, both, check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


def test_only_the_8_sample_column_takes_the_prior_at_g_16(folder: Path) -> None:
    notes = run(*MIXED["silent 16"], mixed(folder), "--col", FEW, "--col", MANY, "-f", "csv").stderr
    priors = [line.split(":")[1].strip() for line in notes.splitlines() if ": prior npmle" in line]
    assert [f"--col {FEW}"] == [p.removeprefix("note: ") for p in priors]


def _headline(table: str) -> list[str]:
    """The headline's lines of a table view: those above the table, the settings and the sparkline."""
    lines = table.splitlines()
    ends = ("in every row", "silent vs G")
    return lines[: next(i for i, line in enumerate(lines) if "┃" in line or line.startswith(ends))]


def _of_column(lines: list[str], column: str) -> str:
    """The headline of one column, from the line that names it to the next that names another, joined."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{column}: "))
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith((f"{FEW}: ", f"{MANY}: "))), None
    )
    return " ".join(lines[start:end])


@pytest.mark.parametrize(
    "command", ["silent 16", "silent 16 by src", "budget 16", "budget 16 by src", "groupsize", "plan 16"]
)
@pytest.mark.parametrize("column", [FEW, MANY])
def test_the_headline_gives_each_columns_own_headline(folder: Path, command: str, column: str) -> None:
    both = _headline(run(*MIXED[command], mixed(folder), "--col", FEW, "--col", MANY, "-f", "table").stdout)
    alone = _headline(run(*MIXED[command], mixed(folder), "--col", column, "-f", "table").stdout)
    # A run of one column leads with how its rates were read; several columns say it in one merged note.
    assert f"{column}: {READING.sub('', ' '.join(alone))}" == _of_column(both, column)


@pytest.mark.parametrize("column", [FEW, MANY])
def test_the_headline_names_each_columns_silent_share(folder: Path, column: str) -> None:
    table = run(*MIXED["silent 16"], mixed(folder), "--col", FEW, "--col", MANY, "-f", "table").stdout
    alone = csv_of(run(*MIXED["silent 16"], mixed(folder), "--col", column, "-f", "csv"))
    line = next(line for line in table.splitlines() if line.startswith(f"{column}: "))
    assert f"{column}: {100 * alone['silent_rate'][0]:.1f}% of groups are silent at G=16" in line


# --------------------------------------------------------------------------------------------- other commands


def test_preflight_runs_one_loop_per_column(folder: Path) -> None:
    both = csv_of(run("preflight", two(folder), "--col", A, "--col", B, "-f", "csv"))
    alone = csv_of(run("preflight", two(folder), "--col", B, "-f", "csv"))
    assert_frame_equal(alone, _one(both, B), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


def test_simulate_refuses_several_columns_in_one_line(folder: Path) -> None:
    result = run("simulate", "--init", two(folder), "--col", A, "--col", B, "--steps", "2")
    assert 2 == result.exit_code
    assert "one --col" in one_error_line(result.stderr)


@pytest.mark.parametrize("column", ["a", "b"])
def test_counts_beside_bare_rates_are_each_their_own_run(tmp_path: Path, column: str) -> None:
    path = tmp_path / "mixed.csv"
    rng = np.random.default_rng(SEED)
    pl.DataFrame({"a": rng.binomial(8, 0.4, 100) / 8, "b": rng.random(100)}).write_csv(path)
    both = csv_of(invoke("silent", path, "--col", "a", "--col", "b", "--G", "4,16", "-f", "csv"))
    alone = csv_of(invoke("silent", path, "--col", column, "--G", "4,16", "-f", "csv"))
    assert_frame_equal(alone, _one(both, column), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


# --------------------------------------------------------------------------------------------- report


@pytest.mark.parametrize("suffix", ["html", pytest.param("md", marks=pytest.mark.slow)])
def test_the_report_compares_columns_of_files_with_other_names(folder: Path, suffix: str) -> None:
    page = folder / f"report.{suffix}"
    result = invoke(
        "report", two(folder), folder / "other.csv", "--col", "llama8b_*", "--col", "pass_rate", "-o", page
    )
    assert 0 == result.exit_code, result.stderr
    text = page.read_text()
    assert all(label in text for label in (f"two.parquet: {A}", f"two.parquet: {B}", "other.csv: pass_rate"))


def test_a_report_column_no_input_has_is_one_line(folder: Path) -> None:
    result = invoke("report", two(folder), "--col", A, "--col", "pass_at_1", "-o", folder / "none.html")
    assert 1 == result.exit_code
    assert "pass_at_1" in one_error_line(result.stderr)

"""Beyond one machine: a SQL engine reduces a rollout log to counts per (k, n); sigmatool reads that.

The SQL is what ``sigmatool sql`` prints (docs/scale.md). DuckDB runs it here as a real, embedded engine on
a generated rollout log; every command, with its estimators and options, must then print exactly what it
prints when it aggregates the same log itself with ``--rollouts``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from sigmatool.sql import histogram_query
from tests.conftest import invoke

# Every command through DuckDB and back: `make test-slow` runs them.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent

HISTOGRAM_SQL = histogram_query("rollouts", "prompt_id", "reward")
HISTOGRAM_BY_SQL = histogram_query("rollouts", "prompt_id", "reward", by=["source"])

HISTOGRAM_ARGS = ["--k-col", "k", "--n-col", "n", "--weight-col", "prompts"]
ROLLOUT_ARGS = ["--rollouts", "--prompt-col", "prompt_id", "--reward-col", "reward"]
PROMPTS = 300
MIN_N, MAX_N = 4, 16


# Every command, as the arguments after the input. The --by cases use the SQL that keeps `source`.
CASES = [
    pytest.param(["silent", "--prior", "none", "--G", "4,8,16"], id="silent-plugin"),
    pytest.param(
        ["silent", "--prior", "none", "--estimator", "unbiased", "--G", "2,3"], id="silent-unbiased"
    ),
    pytest.param(["silent", "--prior", "none", "--G", "8", "--dapo-cap", "4"], id="silent-dapo-cap"),
    pytest.param(["silent", "--prior", "none", "--G", "4,8", "--by-bins", "5"], id="silent-bins"),
    pytest.param(["silent", "--prior", "none", "--G", "8", "--by", "source"], id="silent-by"),
    pytest.param(["budget", "--prior", "none"], id="budget"),
    pytest.param(["budget", "--prior", "none", "--G", "2,4,8,inf", "--bins", "4"], id="budget-sizes"),
    pytest.param(
        ["budget", "--prior", "none", "--estimator", "unbiased", "--G", "2,3"], id="budget-unbiased"
    ),
    pytest.param(["budget", "--prior", "none", "--by", "source"], id="budget-by"),
    pytest.param(["groupsize", "--prior", "none"], id="groupsize"),
    pytest.param(["groupsize", "--prior", "none", "--fidelity", "0.95"], id="groupsize-fidelity"),
    pytest.param(
        [
            "groupsize",
            "--prior",
            "none",
            "--fidelity",
            "0.9",
            "--max-silent",
            "0.2",
            "--uniform",
            "16",
            "--std",
            "bessel",
        ],
        id="groupsize-silent-cap",
    ),
    pytest.param(["groupsize", "--prior", "none", "--method", "drgrpo"], id="groupsize-drgrpo"),
    pytest.param(["groupsize", "--prior", "none", "--by", "source"], id="groupsize-by"),
]


@pytest.fixture(scope="module")
def rollout_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 prompts, 4 to 16 rollouts each, rows shuffled as in a real log; some prompts always right/wrong."""
    rng = np.random.default_rng(20260607)
    n = rng.integers(MIN_N, MAX_N + 1, size=PROMPTS)
    p = np.where(rng.random(PROMPTS) < 0.5, rng.beta(0.7, 1.6, PROMPTS), rng.beta(1.6, 0.7, PROMPTS))
    p[:20], p[20:35] = 0.0, 1.0
    prompt = np.repeat(np.arange(PROMPTS), n)
    reward = (rng.random(prompt.size) < p[prompt]).astype(np.int64)
    # Some rewards are missing (a crashed grader); the last prompt has none at all.
    missing = (rng.random(prompt.size) < 0.02) | (prompt == PROMPTS - 1)
    source = np.array(["gsm8k", "math", "olympiad"])[prompt % 3]
    shuffle = rng.permutation(prompt.size)
    frame = pl.DataFrame(
        {
            "prompt_id": [f"q{i:04d}" for i in prompt[shuffle]],
            "source": source[shuffle],
            "reward": pl.Series(reward[shuffle]).set(pl.Series(missing[shuffle]), None),
            "step": np.arange(prompt.size),
        }
    )
    path = tmp_path_factory.mktemp("lake") / "rollouts.parquet"
    frame.write_parquet(path)
    return path


def _run_sql(sql: str, log: Path, out: Path) -> Path:
    """Run the recipe in DuckDB with `rollouts` naming the log, and export the small result."""
    con = duckdb.connect()
    try:
        con.execute(f"CREATE VIEW rollouts AS SELECT * FROM read_parquet('{log}')")
        fmt = "(FORMAT parquet)" if out.suffix == ".parquet" else "(HEADER, DELIMITER ',')"
        con.execute(f"COPY ({sql}\n) TO '{out}' {fmt}")  # the query ends with a comment line
    finally:
        con.close()
    return out


@pytest.fixture(scope="module", params=["csv", "parquet"])
def histograms(request: pytest.FixtureRequest, rollout_log: Path) -> dict[str, Path]:
    """The SQL result, exported as CSV and as parquet (the two ways it usually leaves an engine)."""
    folder = rollout_log.parent
    ext = request.param
    return {
        "plain": _run_sql(HISTOGRAM_SQL, rollout_log, folder / f"hist.{ext}"),
        "by": _run_sql(HISTOGRAM_BY_SQL, rollout_log, folder / f"hist_by_source.{ext}"),
    }


def _csv(args: list[str]) -> pl.DataFrame:
    result = invoke(*args, "--format", "csv")
    assert result.exit_code == 0, f"sigmatool {' '.join(args)}\n{result.stdout}\n{result.stderr}"
    return pl.read_csv(result.stdout.encode())


@pytest.mark.parametrize("command", CASES)
def test_sql_histogram_gives_the_same_output_as_rollouts(
    command: list[str], rollout_log: Path, histograms: dict[str, Path]
) -> None:
    hist = histograms["by" if "--by" in command else "plain"]
    direct = _csv([*command, str(rollout_log), *ROLLOUT_ARGS])
    via_sql = _csv([*command, str(hist), *HISTOGRAM_ARGS])
    assert_frame_equal(direct, via_sql)


def test_sql_histogram_is_small_and_counts_every_graded_rollout(
    rollout_log: Path, histograms: dict[str, Path]
) -> None:
    path = histograms["plain"]
    hist = pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path)
    log = pl.read_parquet(rollout_log)
    graded = log.drop_nulls("reward")
    # The last prompt's rewards are all null: it keeps a row without counts, its rewards in null_rewards.
    assert (PROMPTS, PROMPTS - 1) == (hist["prompts"].sum(), hist.drop_nulls("k")["prompts"].sum())
    assert log["reward"].null_count() == hist["null_rewards"].sum()
    assert graded.height == (hist["n"] * hist["prompts"]).sum()
    assert graded["reward"].sum() == (hist["k"] * hist["prompts"]).sum()
    assert hist.height <= sum(n + 1 for n in range(1, MAX_N + 1))

"""sigmatool.sql: the query parses in every dialect, quotes every name, and DuckDB running it gives the
histogram sigmatool builds itself with ``--rollouts``: same counts, same command output to the last digit."""

from __future__ import annotations

import math
import shlex
import tempfile
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from sigmatool.errors import DataError, UsageError
from sigmatool.load import read_histogram
from sigmatool.options import InputOptions
from sigmatool.options.sql import SqlOptions
from sigmatool.sql import DIALECTS, histogram_args, histogram_query, sigmatool_command
from tests.conftest import csv_of, invoke

QUOTE = {"spark": "`", "bigquery": "`"}


def run_duckdb(query: str, log: pl.DataFrame) -> pl.DataFrame:
    """The query's result, with the log registered as the table `rollouts`."""
    con = duckdb.connect()
    try:
        con.register("rollouts", log.to_arrow())
        return con.sql(query).pl()
    finally:
        con.close()


def brute_force(
    rows: list[tuple[str, object]], threshold: float | None
) -> tuple[Counter[tuple[int, int]], int]:
    """(prompts per (k, n), rejected rewards), by reading the rules in the module docstring row by row."""
    k: Counter[str] = Counter()
    n: Counter[str] = Counter()
    bad = 0
    for prompt, reward in rows:
        if reward is None:
            continue
        assert isinstance(reward, float)
        if threshold is None:
            usable, right = reward in (0.0, 1.0), reward == 1.0
        else:
            usable, right = not math.isnan(reward), not math.isnan(reward) and reward >= threshold
        bad += not usable
        n[prompt] += usable
        k[prompt] += right
    return Counter((k[p], n[p]) for p in n if n[p] > 0), bad


# ------------------------------------------------------------------------------------------ the text


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("threshold", [None, 0.5])
def test_query_parses_back_in_its_dialect(dialect: str, threshold: float | None) -> None:
    query = histogram_query(
        "lake.rollouts",
        "prompt_id",
        "reward",
        dialect=dialect,
        threshold=threshold,
        by=["source"],
        step_col="step",
    )
    body = "\n".join(line for line in query.splitlines() if not line.startswith("--"))
    parsed = sqlglot.parse_one(query, read=dialect)
    assert body == parsed.sql(dialect=dialect, pretty=True, identify=True, comments=False)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_query_ends_with_the_command_for_its_result(dialect: str) -> None:
    query = histogram_query(
        "t", "p", "r", dialect=dialect, by=["data source"], command="budget", result="h.csv"
    )
    expected = "-- sigmatool budget h.csv --k-col k --n-col n --weight-col prompts --by 'data source'"
    assert expected == query.splitlines()[-1]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", ["prompt id", "Order", "select", "MixedCase", 'we"ird`name'])
def test_every_name_is_quoted(dialect: str, name: str) -> None:
    query = histogram_query("rollouts", name, "reward", dialect=dialect)
    parsed = sqlglot.parse_one(query, read=dialect)
    grouped = [c for c in parsed.find_all(sqlglot.exp.Column) if c.name == name]
    assert 1 == len(grouped)
    assert grouped[0].this.quoted


@pytest.mark.parametrize("dialect", DIALECTS)
def test_quote_character_of_the_dialect(dialect: str) -> None:
    mark = QUOTE.get(dialect, '"')
    query = histogram_query("rollouts", "Prompt ID", "reward", dialect=dialect)
    assert f"{mark}Prompt ID{mark}" in query


def test_dotted_table_name_is_quoted_part_by_part() -> None:
    assert 'FROM "cat"."my db"."Roll outs" AS "r"' in histogram_query(
        'cat."my db"."Roll outs"', "p", "r", dialect="trino"
    )


def test_threshold_is_written_with_every_digit() -> None:
    assert "CAST(0.30000000000000004 AS DOUBLE)" in histogram_query("t", "p", "r", threshold=0.1 + 0.2)


@pytest.mark.parametrize("dialect", ["postgres", "snowflake"])
def test_nan_test_for_engines_where_nan_equals_itself(dialect: str) -> None:
    query = histogram_query("t", "p", "r", dialect=dialect, threshold=0.5)
    assert "'NaN'" in query


def test_histogram_args_name_the_result_columns() -> None:
    expected = ["--k-col", "k", "--n-col", "n", "--weight-col", "prompts", "--by", "source", "--by", "step"]
    assert expected == histogram_args(["source"], "step")


def test_command_is_one_shell_line() -> None:
    line = sigmatool_command("groupsize", "out dir/hist.parquet", ["my col"], "step")
    assert ["sigmatool", "groupsize", "out dir/hist.parquet"] == shlex.split(line)[:3]


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"dialect": "mysql"}, "--dialect"),
        ({"by": ("K",)}, "the result has columns of that name"),
        ({"by": ("prompts",)}, "the result has columns of that name"),
        ({"step_col": "weight"}, "sigmatool reserves it"),
        ({"by": ("step",), "step_col": "STEP"}, "once"),
        ({"threshold": math.inf}, "finite"),
        ({"threshold": 0.5, "reward_type": "boolean"}, "boolean"),
        ({"reward_type": "text"}, "--reward-type"),
        ({"by": ("",)}, "empty"),
        ({"table": ""}, "--table"),
        ({"command": "simulate"}, "--command"),
    ],
)
def test_impossible_request_is_a_usage_error(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(UsageError, match=fragment):
        SqlOptions(**{"table": "t", "prompt_col": "p", "reward_col": "r", **kwargs})  # type: ignore[arg-type]


@pytest.mark.parametrize("table", ['"unclosed', "`half"])
def test_table_that_is_not_a_name_is_a_usage_error(table: str) -> None:
    with pytest.raises(UsageError, match="--table"):
        histogram_query(table, "p", "r", dialect="spark")


def test_importing_the_module_does_not_import_sqlglot() -> None:
    import subprocess
    import sys

    code = "import sys, sigmatool.sql; print('sqlglot' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True
    )
    assert "False" == out.stdout.strip()


# ------------------------------------------------------------------------------------------ DuckDB


REWARDS = st.one_of(
    st.none(), st.sampled_from([0.0, 1.0]), st.sampled_from([0.5, -1.0, 2.0, math.nan, 0.25, 0.75])
)


@pytest.mark.slow  # a DuckDB query per example: `make test-slow`
@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]), REWARDS), min_size=1, max_size=40),
    threshold=st.sampled_from([None, 0.5, 0.25, 1.0, -1.0]),
)
def test_duckdb_counts_what_the_rules_say(rows: list[tuple[str, object]], threshold: float | None) -> None:
    log = pl.DataFrame(rows, schema={"prompt_id": pl.String, "reward": pl.Float64}, orient="row")
    result = run_duckdb(histogram_query("rollouts", "prompt_id", "reward", threshold=threshold), log)
    expected, bad = brute_force(rows, threshold)
    graded = result.filter(pl.col("k").is_not_null())
    assert expected == Counter({(k, n): c for k, n, c in graded.select("k", "n", "prompts").iter_rows()})
    assert bad == result["bad_rewards"].sum()


@pytest.mark.slow  # a DuckDB query per example: `make test-slow`
@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y"]), st.integers(0, 2), REWARDS),
        min_size=1,
        max_size=40,
    ),
    threshold=st.sampled_from([None, 0.5]),
)
def test_duckdb_histogram_equals_sigmatools_own(
    rows: list[tuple[str, str, int, object]], threshold: float | None
) -> None:
    log = pl.DataFrame(
        rows,
        schema={"prompt_id": pl.String, "source": pl.String, "step": pl.Int64, "reward": pl.Float64},
        orient="row",
    )
    query = histogram_query(
        "rollouts", "prompt_id", "reward", threshold=threshold, by=["source"], step_col="step"
    )
    via_sql = (
        run_duckdb(query, log)
        .filter(pl.col("k").is_not_null())
        .select("source", "step", "k", "n", "prompts")
        .sort("source", "step", "k", "n")
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.parquet"
        log.write_parquet(path)
        options = InputOptions(
            paths=(str(path),),
            rollouts=True,
            prompt_col="prompt_id",
            reward_col="reward",
            threshold=threshold,
            by=("source", "step"),
            skip_invalid=True,
        )
        if via_sql.height == 0:  # no usable prompt at all
            with pytest.raises(DataError, match="no usable prompts"):
                read_histogram(options)
            return
        direct = read_histogram(options).frame
    expected = direct.select("source", "step", "k", "n", pl.col("prompts").cast(pl.Int64)).sort(
        "source", "step", "k", "n"
    )
    assert_frame_equal(expected, via_sql)


@pytest.fixture(scope="module")
def rollout_log() -> pl.DataFrame:
    """400 prompts over 4 steps, 4 to 16 rollouts each, rows shuffled; some rewards and prompts null."""
    rng = np.random.default_rng(20260611)
    prompts = 400
    n = rng.integers(4, 17, size=prompts)
    p = rng.beta(0.6, 0.9, prompts)
    p[:25], p[25:40] = 0.0, 1.0
    prompt = np.repeat(np.arange(prompts), n)
    graded = np.where(rng.random(prompt.size) < p[prompt], 1.0, 0.0)
    # A graded reward in [0, 1] for --threshold, higher for easier prompts.
    score = np.clip(p[prompt] + rng.normal(0.0, 0.3, prompt.size), 0.0, 1.0)
    missing = rng.random(prompt.size) < 0.03
    shuffle = rng.permutation(prompt.size)
    return pl.DataFrame(
        {
            "Prompt ID": [f"q{i:04d}" for i in prompt[shuffle]],
            "data source": np.array(["gsm8k", "math", "olympiad"])[prompt % 3][shuffle],
            "step": (prompt % 4)[shuffle],
            "reward": pl.Series(graded[shuffle]).set(pl.Series(missing[shuffle]), None),
            "score": pl.Series(score[shuffle]).set(pl.Series(missing[shuffle]), None),
            "passed": pl.Series(graded[shuffle] == 1.0).set(pl.Series(missing[shuffle]), None),
        }
    )


CASES = [
    pytest.param(["silent", "--estimator", "plugin", "--G", "4,8,16"], {}, id="silent"),
    pytest.param(["silent", "--estimator", "unbiased", "--G", "2,3"], {}, id="silent-unbiased"),
    pytest.param(["budget", "--estimator", "plugin"], {}, id="budget"),
    pytest.param(
        ["budget", "--estimator", "plugin", "--G", "2,4,8,inf", "--bins", "4"], {}, id="budget-sizes"
    ),
    pytest.param(["groupsize", "--prior", "none", "--fidelity", "0.95"], {}, id="groupsize"),
    pytest.param(
        ["silent", "--estimator", "plugin", "--G", "8"],
        {"by": ["data source"], "step_col": "step"},
        id="silent-by-step",
    ),
    pytest.param(["budget", "--estimator", "plugin"], {"by": ["data source"]}, id="budget-by"),
    pytest.param(["groupsize", "--prior", "none"], {"step_col": "step"}, id="groupsize-step"),
    pytest.param(
        ["silent", "--estimator", "plugin", "--G", "4,8"],
        {"reward_col": "score", "threshold": 0.3},
        id="silent-threshold",
    ),
    pytest.param(
        ["budget", "--estimator", "plugin"],
        {"reward_col": "score", "threshold": 0.7, "step_col": "step"},
        id="budget-threshold",
    ),
    pytest.param(
        ["groupsize", "--prior", "none"],
        {"reward_col": "passed", "reward_type": "boolean"},
        id="groupsize-boolean",
    ),
    pytest.param(["plan", "--estimator", "plugin", "--budget", "6"], {}, id="plan"),
    pytest.param(
        ["plan", "--estimator", "plugin"],
        {"by": ["data source"], "reward_col": "score", "threshold": 0.5},
        id="plan-by",
    ),
]


@pytest.mark.parametrize(("command", "query_args"), CASES)
@pytest.mark.parametrize("export", ["csv", "parquet"])
def test_command_on_duckdb_result_prints_what_rollouts_prints(
    command: list[str], query_args: dict[str, object], export: str, rollout_log: pl.DataFrame, tmp_path: Path
) -> None:
    log_path = tmp_path / "log.parquet"
    rollout_log.write_parquet(log_path)
    args: dict[str, object] = {"reward_col": "reward", **query_args}
    query = histogram_query("rollouts", "Prompt ID", **args)  # type: ignore[arg-type]
    hist = run_duckdb(query, rollout_log)
    hist_path = tmp_path / f"hist.{export}"
    hist.write_csv(hist_path) if export == "csv" else hist.write_parquet(hist_path)
    rollouts = ["--rollouts", "--prompt-col", "Prompt ID", "--reward-col", str(args["reward_col"])]
    if args.get("threshold") is not None:
        rollouts += ["--threshold", str(args["threshold"])]
    by = list(args.get("by", []))  # type: ignore[call-overload]
    step = args.get("step_col")
    for name in [*by, *([step] if step else [])]:
        rollouts += ["--by", str(name)]
    direct = csv_of(invoke(*command, log_path, *rollouts, "--format", "csv"))
    via_sql = csv_of(invoke(*command, hist_path, *histogram_args(by, step), "--format", "csv"))  # type: ignore[arg-type]
    assert_frame_equal(direct, via_sql)


def test_duckdb_result_of_a_clean_log_has_no_bad_rewards(rollout_log: pl.DataFrame) -> None:
    hist = run_duckdb(histogram_query("rollouts", "Prompt ID", "reward"), rollout_log)
    assert 0 == hist["bad_rewards"].sum()


def test_prompts_without_a_usable_reward_keep_a_row_without_counts() -> None:
    """a: one rejected and one null reward; c: only a null one; both keep their rewards in the counts."""
    log = pl.DataFrame({"prompt_id": ["a", "a", "b", "c"], "reward": [0.5, None, 1.0, None]})
    hist = run_duckdb(histogram_query("rollouts", "prompt_id", "reward"), log)
    names = ("k", "n", "prompts", "bad_rewards", "null_rewards")
    expected = pl.DataFrame(
        {"k": [None, 1], "n": [None, 1], "prompts": [2, 1], "bad_rewards": [1, 0], "null_rewards": [2, 0]},
        schema=dict.fromkeys(names, pl.Int64),
    )
    assert_frame_equal(expected, hist.sort("k", nulls_last=False))


def test_duckdb_runs_the_query_on_awkward_column_names(rollout_log: pl.DataFrame) -> None:
    plain = rollout_log.select("Prompt ID", "data source", "step", "reward")
    awkward = plain.rename(
        {"Prompt ID": "select", "data source": "Order", "step": "group", "reward": 'we"ird`r'}
    )
    expected = run_duckdb(
        histogram_query("rollouts", "Prompt ID", "reward", by=["data source"], step_col="step"), plain
    )
    result = run_duckdb(
        histogram_query("rollouts", "select", 'we"ird`r', by=["Order"], step_col="group"), awkward
    )
    assert_frame_equal(expected, result.rename({"Order": "data source", "group": "step"}))

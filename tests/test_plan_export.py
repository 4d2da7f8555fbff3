"""The per-prompt export: the user's rows unchanged, in order, with the plan's columns; and docs/plan.md's snippets."""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sigmatool.errors import UsageError
from sigmatool.plan import plan
from sigmatool.plan.export import ADDED_COLUMNS, export, group_sizes_for
from tests.conftest import ROOT, invoke

SOME = settings(max_examples=20, deadline=None)


def dataset(n: int, seed: int) -> pl.DataFrame:
    """Prompts with text, a shuffled id, an integer column with nulls, and rates k/16 (many shared values)."""
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "prompt": [f"question {i}" for i in range(n)],
            "id": rng.permutation(n) * 3 + 7,
            "solve_rate": rng.integers(0, 17, size=n) / 16,
            "extra": [None if i % 5 == 0 else i for i in range(n)],
        }
    )


def exported(frame: pl.DataFrame, path: Path, **plan_kwargs: object) -> tuple[pl.DataFrame, object]:
    result = plan(frame.select(pl.col("solve_rate").alias("p")), **plan_kwargs)  # type: ignore[arg-type]
    export(frame.lazy(), result, p_col="solve_rate", id_col="id").sink_parquet(path)
    return pl.read_parquet(path), result


@SOME
@given(n=st.integers(1, 300), seed=st.integers(0, 10**6), budget=st.sampled_from([2.0, 5.0, 8.0, 11.0]))
def test_reading_the_export_back_gives_the_input_columns_unchanged_plus_the_plan(
    n: int, seed: int, budget: float, tmp_path_factory: pytest.TempPathFactory
) -> None:
    frame = dataset(n, seed)
    back, _ = exported(
        frame, tmp_path_factory.mktemp("export") / "plan.parquet", budget=budget, sizes="4,8,16"
    )
    assert [*frame.columns, *ADDED_COLUMNS] == back.columns
    assert frame.equals(back.select(frame.columns))


@SOME
@given(
    n=st.integers(1, 300),
    seed=st.integers(0, 10**6),
    objective=st.sampled_from(["signal", "knapsack-rl", "fidelity"]),
)
def test_each_value_gets_the_sizes_its_plan_row_says(
    n: int, seed: int, objective: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    frame = dataset(n, seed)
    back, result = exported(
        frame,
        tmp_path_factory.mktemp("export") / "plan.parquet",
        budget=6,
        sizes="2,4,8,16",
        objective=objective,
        target=0.9 if objective == "fidelity" else None,
    )
    counted = (
        back.group_by("p_used", "group_size")
        .agg(pl.len().cast(pl.Int64).alias("prompts"))
        .sort("p_used", "group_size")
    )
    planned = result.values.select(pl.col("p").alias("p_used"), "group_size", "prompts").sort(
        "p_used", "group_size"
    )  # type: ignore[attr-defined]
    assert planned.equals(counted)


def test_split_values_give_the_larger_size_to_the_first_prompts_by_id(tmp_path: Path) -> None:
    frame = dataset(2000, seed=11)
    back, result = exported(
        frame, tmp_path / "plan.parquet", budget=7, sizes="4,8,16", objective="knapsack-rl"
    )
    split = result.values.filter(pl.col("p").is_duplicated())  # type: ignore[attr-defined]
    assert split.height >= 2
    for p in split["p"].unique().to_list():
        sizes = back.filter(pl.col("p_used") == p).sort("id")["group_size"].to_list()
        larger, first = split.filter(pl.col("p") == p).sort("first_rank").row(0)[1:3]
        assert [larger] * first == sizes[:first]
        assert larger > sizes[first]


def test_the_plan_columns_agree_with_the_values_table(tmp_path: Path) -> None:
    back, result = exported(dataset(500, seed=2), tmp_path / "plan.parquet", budget=8)
    joined = back.join(
        result.values.rename({"p": "p_used"}),  # type: ignore[attr-defined]
        on=["p_used", "group_size"],
        suffix="_plan",
    )
    assert 500 == joined.height
    for column in ("keep", "p_silent_at_G", "expected_sigma", "fidelity_at_G", "hit_utility"):
        assert joined[column].equals(joined[f"{column}_plan"], check_names=False)


def test_export_streams_and_matches_the_in_memory_result() -> None:
    frame = dataset(3000, seed=5)
    result = plan(frame.select(pl.col("solve_rate").alias("p")), budget=8)
    lazy = export(frame.lazy(), result, p_col="solve_rate", id_col="id")
    assert lazy.collect().equals(lazy.collect(engine="streaming"))


def test_a_row_without_a_rate_gets_no_size() -> None:
    result = plan(np.array([0.5, 0.25]), budget=8)
    out = export(pl.LazyFrame({"p": [0.5, None]}), result).collect()
    assert [8, None] == out["group_size"].to_list()
    assert [True, False] == out["keep"].to_list()


def test_a_rate_the_plan_was_not_made_for_is_a_usage_error() -> None:
    result = plan(np.array([0.5, 0.25]), budget=8)
    with pytest.raises(UsageError, match=r"p = 0\.75"):
        export(pl.LazyFrame({"p": [0.5, 0.75]}), result).collect()


def test_an_input_column_named_like_a_plan_column_is_a_usage_error() -> None:
    result = plan(np.array([0.5]), budget=8)
    with pytest.raises(UsageError, match="'keep'"):
        export(pl.LazyFrame({"p": [0.5], "keep": [1]}), result)


def test_a_missing_rate_or_id_column_is_a_usage_error() -> None:
    result = plan(np.array([0.5]), budget=8)
    with pytest.raises(UsageError, match="'rate'"):
        export(pl.LazyFrame({"p": [0.5]}), result, p_col="rate", id_col="id")


def test_group_sizes_for_an_array_follow_array_order() -> None:
    rates = np.array([0.5, 0.5, 0.5, 0.5])
    result = plan(rates, total=24, sizes="4,8")
    assert [8, 8, 4, 4] == group_sizes_for(result, rates).tolist()


def python_blocks(path: Path) -> list[str]:
    return [part.split("```", 1)[0] for part in path.read_text().split("```python\n")[1:]]


def documented_commands(path: Path, prefix: str) -> list[str]:
    """Command lines of the doc's ```sh blocks that start with ``prefix`` (a comment after # dropped)."""
    lines = []
    for block in path.read_text().split("```sh\n")[1:]:
        lines += [line.split("#")[0].strip() for line in block.split("```", 1)[0].splitlines()]
    return [line for line in lines if line.startswith(prefix)]


def test_plan_docs_trainer_snippets_run_on_the_documented_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    dataset(400, seed=3).write_parquet("prompts.parquet")
    prefix = "sigmatool plan prompts.parquet --budget 8 --per-prompt"
    (command,) = set(documented_commands(ROOT / "docs" / "plan.md", prefix))
    assert 0 == invoke(*shlex.split(command)[1:]).exit_code
    blocks = python_blocks(ROOT / "docs" / "plan.md")
    assert 3 <= len(blocks)
    for code in blocks:
        exec(compile(code, "docs/plan.md", "exec"), {})
    assert Path("train_kept.parquet").exists()

"""The loading layer with the input's own columns: every column kept, in order, beside the checked values."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from sigmatool import load
from sigmatool.errors import DataError, UsageError
from sigmatool.load.names import INTERNAL, RAW_P
from sigmatool.options import InputOptions
from tests.conftest import ROOT, TOY, invoke


def test_originals_keep_every_input_column_in_order(write_csv) -> None:  # type: ignore[no-untyped-def]
    path = write_csv("text,pass_rate,extra\nwhat is 1+1?,0.5,x\nand 2+2?,0.25,y\n")
    with load.dataset(InputOptions(paths=(str(path),))) as ds:
        full = load.with_originals(ds)
    assert ("text", "pass_rate", "extra") == full.columns


def test_originals_carry_the_checked_values_beside_them(write_csv) -> None:  # type: ignore[no-untyped-def]
    path = write_csv("text,pass_rate\na,0.5\nb,0.25\n")
    with load.dataset(InputOptions(paths=(str(path),))) as ds:
        frame = load.with_originals(ds).frame.collect()
    assert [0.5, 0.25] == frame[RAW_P].to_list()


def test_several_files_with_different_extra_columns_are_one_dataset(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("pass_rate,txt\n0.5,a\n")
    (tmp_path / "b.csv").write_text("pass_rate,other\n0.75,x\n")
    with load.dataset(InputOptions(paths=(str(tmp_path / "a.csv"), str(tmp_path / "b.csv")))) as ds:
        frame = load.with_originals(ds).frame.collect()
    assert [None, "x"] == frame["other"].to_list()


def test_a_column_with_an_internal_name_is_refused(write_csv) -> None:  # type: ignore[no-untyped-def]
    path = write_csv(f"pass_rate,{INTERNAL[0]}\n0.5,1\n")
    with load.dataset(InputOptions(paths=(str(path),))) as ds, pytest.raises(DataError, match="reserved"):
        load.with_originals(ds)


def test_a_rollout_log_has_no_per_prompt_rows_to_keep(write_csv) -> None:  # type: ignore[no-untyped-def]
    path = write_csv("q,r\na,1\n")
    options = InputOptions(paths=(str(path),), rollouts=True, prompt_col="q", reward_col="r")
    with load.dataset(options) as ds, pytest.raises(UsageError):
        load.with_originals(ds)


def test_the_plan_commands_help_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sigmatool.cli.plan import plan_command

    monkeypatch.chdir(ROOT)
    example = next(
        line.strip() for line in (plan_command.__doc__ or "").splitlines() if "sigmatool plan" in line
    )
    args = example.split()[1:]
    args[args.index("-o") + 1] = str(tmp_path / "plan.csv")
    assert 0 == invoke(*args).exit_code
    assert pl.read_csv(TOY).height == pl.read_csv(tmp_path / "plan.csv")["group_size"].count()

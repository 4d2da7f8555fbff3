"""A file of counts in columns ``k`` and ``n`` (what ``track --export-pass-rates`` writes) reads as counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SAMPLE, csv_of, invoke

RUN = SAMPLE / "example_run"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("export") / "rates.csv"
    result = invoke("track", RUN, "--from", "verl", "--export-pass-rates", path, "-f", "csv")
    assert 0 == result.exit_code, result.stderr
    return path


def test_silent_reads_an_export_as_its_counts(exported: Path) -> None:
    named = csv_of(invoke("silent", exported, "--k-col", "k", "--n-col", "n", "-f", "csv"))
    assert named.to_dicts() == csv_of(invoke("silent", exported, "-f", "csv")).to_dicts()


def test_the_note_says_which_columns_were_read(exported: Path) -> None:
    assert "columns 'k' and 'n'" in invoke("silent", exported, "-f", "csv").stderr


def test_preflight_runs_on_a_later_step_s_pass_rates(exported: Path) -> None:
    loop = ("--train-batch-size", "8", "--gen-batch-size", "16", "--n", "4", "--max-gen-batches", "2")
    named = csv_of(invoke("preflight", exported, "--k-col", "k", "--n-col", "n", *loop, "-f", "csv"))
    assert named.to_dicts() == csv_of(invoke("preflight", exported, *loop, "-f", "csv")).to_dicts()


def test_a_named_rate_column_still_wins_over_k_and_n(write_csv) -> None:  # type: ignore[no-untyped-def]
    path = write_csv("pass_rate,k,n\n0.5,1,4\n0.25,1,4\n")
    summary = csv_of(invoke("silent", path, "--G", "2", "--prior", "none", "-f", "csv"))
    assert (0.5**2 + 0.5**2 + 0.25**2 + 0.75**2) / 2 == pytest.approx(summary["silent_rate"][0], rel=1e-12)

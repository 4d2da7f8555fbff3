"""Verifier audits read by ``--denoise-from`` and ``--grader-error-from``, one file per tool, each counted
again here from its own rows.

The files in tests/audits/: reward-doctor 0.2.0's ``audit FILE:FN --format json``, run on a substring
verifier and on an exact-match one; falsepass 0.11.0's ``probe-results.json`` and ``results ENV --json``,
made by falsepass 0.11.0's own ``ProbeResult.to_dict`` and ``report.digest`` (20 known-good rows, 3 denied,
12 known-bad, 2 paid, one same as a good reply, one unscored); evalproof 0.2.1's ``calibrate … --json``,
made by its ``CalibrationReport`` and ``to_json`` from a confusion of 200 gold labels.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import TOY, csv_of, invoke, one_error_line, run_cli

AUDITS = Path(__file__).resolve().parent / "audits"


def _load(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((AUDITS / name).read_text())


def _reward_doctor(name: str) -> tuple[float, float, float, float]:
    d = _load(name)
    modes = [f["mode"] for f in d["failures"]]
    cats = d["by_category"]
    fp_trials = cats["exploit"]["total"] + cats["distinction"]["total"]
    fn_trials = cats["equivalence"]["total"] + cats["format"]["total"]
    assert d["false_positive_rate"] == modes.count("false positive") / fp_trials
    return d["false_positive_rate"], d["false_negative_rate"], fp_trials, fn_trials


def _falsepass_probes() -> tuple[float, float, float, float]:
    rows = [r for r in _load("falsepass-0.11.0-probe-results.json")["results"]
            if r["score"] is not None and not r["same_as_good"] and not r["no_control"]]  # fmt: skip
    good = [r for r in rows if r["expected"] == "full"]
    bad = [r for r in rows if r["expected"] == "zero"]
    fp = sum(not r["passed"] for r in bad) / len(bad)
    fn = sum(not r["passed"] for r in good) / len(good)
    return fp, fn, len(bad), len(good)


def _evalproof() -> tuple[float, float, float, float]:
    c = _load("evalproof-0.2.1-calibration.json")["confusion"]
    return c["fp"] / (c["fp"] + c["tn"]), c["fn"] / (c["tp"] + c["fn"]), c["fp"] + c["tn"], c["tp"] + c["fn"]


def _falsepass_results() -> tuple[float, float, float, float]:
    head = _load("falsepass-0.11.0-results.json")["headline"]
    return 0.0, head["false_fail_rate"], math.inf, head["known_good"]


FILES = {
    "reward-doctor-0.2.0-substring.json": lambda: _reward_doctor("reward-doctor-0.2.0-substring.json"),
    "reward-doctor-0.2.0-exact.json": lambda: _reward_doctor("reward-doctor-0.2.0-exact.json"),
    "falsepass-0.11.0-probe-results.json": _falsepass_probes,
    "falsepass-0.11.0-results.json": _falsepass_results,
    "evalproof-0.2.1-calibration.json": _evalproof,
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_audit_gives_its_rates_and_trials(name: str) -> None:
    from sigmatool.audits import read_audit

    found = read_audit(str(AUDITS / name), "--denoise-from")
    fp, fn, fp_trials, fn_trials = FILES[name]()
    assert (found.fp, found.fn) == (pytest.approx(fp, abs=1e-15), pytest.approx(fn, abs=1e-15))
    assert (found.fp_trials, found.fn_trials) == (fp_trials, fn_trials)


def _silent(*args: object) -> pl.DataFrame:
    return csv_of(invoke("silent", TOY, "--G", "4", *args, "-f", "csv"))


@pytest.mark.parametrize("name", sorted(FILES))
def test_denoise_from_is_denoise_with_the_files_rates(name: str) -> None:
    fp, fn, _, _ = FILES[name]()
    read = _silent("--denoise-from", AUDITS / name)
    typed = _silent("--denoise", f"{fp!r},{fn!r}")
    assert read["silent_rate"][0] == typed["silent_rate"][0]


def test_the_trials_widen_the_mean_pass_rates_interval() -> None:
    fp, fn, _, _ = _evalproof()
    read = _silent("--denoise-from", AUDITS / "evalproof-0.2.1-calibration.json").row(0, named=True)
    typed = _silent("--denoise", f"{fp!r},{fn!r}").row(0, named=True)
    assert (
        read["pass_rate_mean_hi"] - read["pass_rate_mean_lo"]
        > typed["pass_rate_mean_hi"] - typed["pass_rate_mean_lo"]
    )


def test_grader_error_from_is_grader_error_with_the_files_rates() -> None:
    fp, fn, _, _ = _evalproof()
    read = _silent("--grader-error-from", AUDITS / "evalproof-0.2.1-calibration.json")
    typed = _silent("--grader-error", f"{fp!r},{fn!r}")
    assert read["silent_rate"][0] == typed["silent_rate"][0]


def test_falsepass_probes_say_their_fp_is_a_worst_case() -> None:
    done = invoke(
        "silent", TOY, "--denoise-from", AUDITS / "falsepass-0.11.0-probe-results.json", "-f", "csv"
    )
    assert "worst case" in done.stderr


def test_a_file_of_no_known_form_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"accuracy": 0.9}))
    done = run_cli("silent", TOY, "--denoise-from", path)
    assert done.returncode == 1
    assert "--denoise-from" in one_error_line(done.stderr)


def test_a_graders_csv_is_no_audit(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("fp,fn\n0.1,0.2\n")
    done = invoke("silent", TOY, "--denoise-from", path)
    assert done.exit_code == 1

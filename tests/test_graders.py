"""``sigmatool graders``: every column against the enumeration of each prompt's G-subsets of its paired
rollouts, the exact McNemar test summed from the binomial, and scipy's Clopper–Pearson interval."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from tests.conftest import csv_of, invoke, one_error_line, run_cli


def _log(tmp_path: Path, seed: int = 5) -> tuple[Path, list[tuple[str, list[int], list[int]]]]:
    """A rollout log of 7 prompts of 2–7 rollouts, each graded by A and B (B disagrees now and then)."""
    rng = np.random.default_rng(seed)
    prompts, rows = [], []
    for i in range(7):
        n = int(rng.integers(2, 8))
        a = (rng.random(n) < rng.random()).astype(int).tolist()
        b = [x if rng.random() < 0.8 else 1 - x for x in a]
        prompts.append((f"q{i}", a, b))
        rows += [{"prompt": f"q{i}", "rollout": r, "ra": a[r], "rb": b[r]} for r in range(n)]
    path = tmp_path / "log.csv"
    pl.DataFrame(rows).write_csv(path)
    return path, prompts


def _silent(x: list[int]) -> bool:
    return len(set(x)) == 1


def _enumerated(prompts: list[tuple[str, list[int], list[int]]], G: int) -> dict[str, float]:
    """The summary's silent columns by enumerating every G-subset of every prompt with n ≥ G."""
    sa, sb, anb, bna, used = 0.0, 0.0, 0.0, 0.0, 0
    for _, a, b in prompts:
        if len(a) < G:
            continue
        subsets = list(itertools.combinations(range(len(a)), G))
        one = [(_silent([a[i] for i in s]), _silent([b[i] for i in s])) for s in subsets]
        sa += sum(x for x, _ in one) / len(one)
        sb += sum(y for _, y in one) / len(one)
        anb += sum(x and not y for x, y in one) / len(one)
        bna += sum(y and not x for x, y in one) / len(one)
        used += 1
    return {"silent_rate_a": sa / used, "silent_rate_b": sb / used, "silent_a_not_b": anb / used,
            "silent_b_not_a": bna / used, "prompts": used}  # fmt: skip


def _summary(path: Path, *extra: object) -> pl.DataFrame:
    return csv_of(invoke("graders", path, "--reward-col", "ra", "--reward-col-b", "rb", "--G", "2,3",
                         *extra, "-f", "csv"))  # fmt: skip


@pytest.mark.parametrize("G", [2, 3])
def test_silent_columns_are_the_enumeration_of_g_subsets(tmp_path: Path, G: int) -> None:
    path, prompts = _log(tmp_path)
    row = _summary(path).filter(pl.col("G") == G).row(0, named=True)
    for name, value in _enumerated(prompts, G).items():
        assert row[name] == pytest.approx(value, abs=1e-12), name


def test_rollouts_right_under_one_grader_only(tmp_path: Path) -> None:
    path, prompts = _log(tmp_path)
    row = _summary(path).row(0, named=True)
    a_only = sum(x and not y for _, a, b in prompts for x, y in zip(a, b, strict=True))
    b_only = sum(y and not x for _, a, b in prompts for x, y in zip(a, b, strict=True))
    total = sum(len(a) for _, a, _ in prompts)
    assert (row["a_only"], row["b_only"], row["rollouts"]) == (a_only, b_only, total)
    assert row["agree_share"] == pytest.approx((total - a_only - b_only) / total, abs=1e-15)


def test_mcnemar_p_is_the_exact_two_sided_binomial_sum(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    row = _summary(path).row(0, named=True)
    a, b = row["a_only"], row["b_only"]
    m = a + b
    expected = min(1.0, 2 * sum(math.comb(m, i) for i in range(min(a, b) + 1)) / 2**m)
    assert row["mcnemar_p"] == pytest.approx(expected, abs=1e-12)


def test_prompts_silent_under_one_grader_only(tmp_path: Path) -> None:
    path, prompts = _log(tmp_path)
    row = _summary(path).row(0, named=True)
    assert row["prompts_silent_a_only"] == sum(_silent(a) and not _silent(b) for _, a, b in prompts)
    assert row["prompts_silent_b_only"] == sum(_silent(b) and not _silent(a) for _, a, b in prompts)


@pytest.mark.parametrize("trusted", ["a", "b"])
def test_trusted_rates_and_clopper_pearson_intervals(tmp_path: Path, trusted: str) -> None:
    path, prompts = _log(tmp_path)
    row = _summary(path, "--trusted", trusted).row(0, named=True)
    pairs = [(x, y) for _, a, b in prompts for x, y in zip(a, b, strict=True)]
    truth, other = (0, 1) if trusted == "a" else (1, 0)
    wrong = [p for p in pairs if p[truth] == 0]
    right = [p for p in pairs if p[truth] == 1]
    fp_k, fn_k = sum(p[other] == 1 for p in wrong), sum(p[other] == 0 for p in right)
    assert (row["fp_trials"], row["fn_trials"]) == (len(wrong), len(right))
    assert row["fp"] == pytest.approx(fp_k / len(wrong), abs=1e-15)
    assert row["fn"] == pytest.approx(fn_k / len(right), abs=1e-15)
    fp_ci = stats.binomtest(fp_k, len(wrong)).proportion_ci(0.95, method="exact")
    fn_ci = stats.binomtest(fn_k, len(right)).proportion_ci(0.95, method="exact")
    assert (row["fp_lo"], row["fp_hi"]) == pytest.approx((fp_ci.low, fp_ci.high), abs=1e-12)
    assert (row["fn_lo"], row["fn_hi"]) == pytest.approx((fn_ci.low, fn_ci.high), abs=1e-12)


def test_per_prompt_rows_are_the_enumeration(tmp_path: Path) -> None:
    path, prompts = _log(tmp_path)
    rows = csv_of(invoke("graders", path, "--reward-col", "ra", "--reward-col-b", "rb", "--G", "3",
                         "--per-prompt", "-f", "csv"))  # fmt: skip
    for (name, a, b), row in zip(prompts, rows.iter_rows(named=True), strict=True):
        assert (row["prompt"], row["n"], row["k_a"], row["k_b"]) == (name, len(a), sum(a), sum(b))
        if len(a) < 3:
            assert row["p_silent_a"] is None
            continue
        expected = _enumerated([(name, a, b)], 3)
        assert row["p_silent_a_not_b"] == pytest.approx(expected["silent_a_not_b"], abs=1e-12)
        assert row["p_silent_b"] == pytest.approx(expected["silent_rate_b"], abs=1e-12)


def test_two_logs_paired_on_the_rollout_column_match_one_log(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    frame = pl.read_csv(path)
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    frame.select("prompt", "rollout", pl.col("ra").alias("reward")).write_csv(first)
    frame.select("prompt", "rollout", pl.col("rb").alias("reward")).reverse().write_csv(second)
    two = csv_of(invoke("graders", first, second, "--reward-col", "reward", "--rollout-col", "rollout",
                        "--G", "2,3", "-f", "csv"))  # fmt: skip
    assert two.equals(_summary(path))


def test_graders_json_is_read_back_by_denoise_from(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    out = tmp_path / "graders.json"
    done = invoke("graders", path, "--reward-col", "ra", "--reward-col-b", "rb", "--trusted", "a",
                  "-f", "json", "-o", out)  # fmt: skip
    assert done.exit_code == 0, done.stderr
    row = json.loads(out.read_text())[0]
    counts = tmp_path / "counts.csv"
    counts.write_text("k,n\n1,4\n2,4\n3,4\n")
    read = csv_of(invoke("silent", counts, "--denoise-from", out, "--G", "2", "-f", "csv"))
    plain = csv_of(
        invoke("silent", counts, "--denoise", f"{row['fp']!r},{row['fn']!r}", "--G", "2", "-f", "csv")
    )
    assert read["silent_rate"][0] == plain["silent_rate"][0]


def test_graders_with_one_reward_source_is_a_usage_error(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    done = run_cli("graders", path, "--reward-col", "ra")
    assert done.returncode == 2
    assert "one reward source" in one_error_line(done.stderr)

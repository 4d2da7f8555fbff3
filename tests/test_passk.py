"""``--pass-at K``: every command under pass@K credit, against exact fractions computed here from the bundled
Big-Math counts (k right of 64), independently of sigmatool's kernels.

A group of G with c right is silent under pass@K iff c = 0 or c > G − K (docs/passk.md); its Dr. GRPO weight
is Δσ², Δ = C(G−c−1, K−1)/C(G−1, K−1), σ² = c(G−c)/G²; GRPO's Δσ²/σ_K, σ_K² = q(1 − q), q = C(G−c, K)/C(G, K).
A prompt's value is Σ_c w(c) f(c): w hypergeometric from its counts at G ≤ n (the default), binomial at
p̂ = k/n (``--estimator plugin``), beta-binomial under ``--prior 1,1``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache
from math import comb

import polars as pl
import pytest

from tests.conftest import BIGMATH, csv_of, invoke, run_cli

N = 64


@pytest.fixture(scope="module")
def counts() -> dict[int, int]:
    """Prompts per k of the bundled 64-sample rates."""
    rates = pl.read_parquet(BIGMATH)["llama8b_solve_rate"].to_list()
    out: dict[int, int] = {}
    for r in rates:
        k = round(r * N)
        out[k] = out.get(k, 0) + 1
    return out


def silent_c(c: int, G: int, K: int) -> bool:
    return c == 0 or c > G - K


def hyp(c: int, k: int, G: int) -> Fraction:
    return Fraction(comb(k, c) * comb(N - k, G - c), comb(N, G))


def binom(c: int, k: int, G: int) -> Fraction:
    p = Fraction(k, N)
    return comb(G, c) * p**c * (1 - p) ** (G - c)


@cache
def beta_fn(a: int, b: int) -> Fraction:
    """B(a, b) for whole a, b: (a−1)!(b−1)!/(a+b−1)!."""
    return Fraction(math.factorial(a - 1) * math.factorial(b - 1), math.factorial(a + b - 1))


def beta_binom(c: int, k: int, G: int) -> Fraction:
    a, b = 1 + k, 1 + N - k
    return comb(G, c) * beta_fn(a + c, b + G - c) / beta_fn(a, b)


def mean_over(counts: dict[int, int], f) -> Fraction:  # type: ignore[no-untyped-def]
    total = sum(counts.values())
    return sum((m * f(k) for k, m in counts.items()), Fraction(0)) / total


def silent_share(counts: dict[int, int], G: int, K: int, law) -> Fraction:  # type: ignore[no-untyped-def]
    return mean_over(counts, lambda k: sum(law(c, k, G) for c in range(G + 1) if silent_c(c, G, K)))


def drgrpo_c(c: int, G: int, K: int) -> Fraction:
    if c == G:
        return Fraction(0)
    delta = Fraction(comb(G - c - 1, K - 1), comb(G - 1, K - 1))
    return delta * Fraction(c * (G - c), G * G)


def grpo_c(c: int, G: int, K: int) -> float:
    if silent_c(c, G, K):
        return 0.0
    q = Fraction(comb(G - c, K), comb(G, K))
    return float(drgrpo_c(c, G, K)) / math.sqrt(float(q * (1 - q)))


def silent_csv(*args: object) -> pl.DataFrame:
    return csv_of(invoke("silent", BIGMATH, "--format", "csv", *args))


@pytest.mark.parametrize(("K", "expected"), [(2, 0.5334), (4, 0.6743)])
def test_silent_share_at_g8_is_the_hypergeometric_fraction(
    counts: dict[int, int], K: int, expected: float
) -> None:
    out = silent_csv("--G", "8", "--pass-at", K)
    exact = silent_share(counts, 8, K, hyp)
    assert round(float(exact), 4) == expected
    assert out["silent_rate"][0] == pytest.approx(float(exact), abs=1e-12)
    assert out["pass_at"].to_list() == [K]


@pytest.mark.parametrize("K", [2, 4])
def test_all_right_is_more_than_g_minus_k_right(counts: dict[int, int], K: int) -> None:
    out = silent_csv("--G", "16", "--pass-at", K)
    exact = mean_over(counts, lambda k: sum(hyp(c, k, 16) for c in range(17 - K, 17)))
    assert out["all_right_rate"][0] == pytest.approx(float(exact), abs=1e-12)


@pytest.mark.parametrize("K", [2, 4])
def test_plugin_silent_share_is_the_binomial_fraction(counts: dict[int, int], K: int) -> None:
    out = silent_csv("--G", "8", "--pass-at", K, "--estimator", "plugin")
    assert out["silent_rate"][0] == pytest.approx(float(silent_share(counts, 8, K, binom)), abs=1e-12)


def test_prior_silent_share_is_the_beta_binomial_fraction(counts: dict[int, int]) -> None:
    out = silent_csv("--G", "8", "--pass-at", "2,4", "--prior", "1,1")
    for K, value in zip(out["pass_at"], out["silent_rate"], strict=True):
        assert value == pytest.approx(float(silent_share(counts, 8, K, beta_binom)), abs=1e-12)


def test_pass_at_k_is_one_minus_the_unbiased_all_wrong(counts: dict[int, int]) -> None:
    out = silent_csv("--G", "8", "--pass-at", "1,4")
    for K, value in zip(out["pass_at"], out["pass_at_k"], strict=True):
        exact = mean_over(counts, lambda k, K=K: 1 - Fraction(comb(N - k, K), comb(N, K)))
        assert value == pytest.approx(float(exact), abs=1e-12)


def test_a_list_of_k_gives_a_row_per_g_and_k() -> None:
    out = silent_csv("--G", "8,16", "--pass-at", "1,2")
    assert out.select("G", "pass_at").rows() == [(8, 1), (16, 1), (8, 2), (16, 2)]


def test_per_prompt_rows_carry_pass_at_k(counts: dict[int, int]) -> None:
    out = csv_of(invoke("silent", BIGMATH, "--G", "8", "--pass-at", "2", "--per-prompt", "-f", "csv"))
    row = out.row(0, named=True)
    k = round(row["p"] * N)
    assert row["p_silent"] == pytest.approx(
        float(sum(hyp(c, k, 8) for c in range(9) if silent_c(c, 8, 2))), abs=1e-12
    )
    assert row["pass_at_k"] == pytest.approx(float(1 - Fraction(comb(N - k, 2), comb(N, 2))), abs=1e-12)


def test_budget_grpo_share_of_rare_solvers_is_the_exact_weight(counts: dict[int, int]) -> None:
    """Prompts with p̂ < 0.1 take 22.6 % of GRPO's pass@4 gradient at G = 8 (9.5 % at pass@1)."""
    out = csv_of(invoke("budget", BIGMATH, "--G", "8", "--pass-at", "1,4", "-f", "csv"))
    rows = out.filter((pl.col("segment") == "bin") & (pl.col("p_lo") == 0.0))
    for K, share in zip(rows["pass_at"], rows["grpo_share"], strict=True):

        def weight(k: int, K: int = K) -> float:
            return sum(float(hyp(c, k, 8)) * grpo_c(c, 8, K) for c in range(9))

        low = sum(m * weight(k) for k, m in counts.items() if k / N < 0.1)
        total = sum(m * weight(k) for k, m in counts.items())
        assert share == pytest.approx(low / total, abs=1e-12)
    assert [round(x, 3) for x in rows["grpo_share"]] == [0.095, 0.226]


def test_budget_drgrpo_weight_is_exact_under_pass_at(counts: dict[int, int]) -> None:
    out = csv_of(invoke("budget", BIGMATH, "--G", "8", "--pass-at", "2", "-f", "csv"))
    rows = out.filter(pl.col("segment") == "bin")

    def weight(k: int) -> Fraction:
        return sum((hyp(c, k, 8) * drgrpo_c(c, 8, 2) for c in range(9)), Fraction(0))

    total = sum(m * weight(k) for k, m in counts.items())
    for lo, hi, share in rows.select("p_lo", "p_hi", "drgrpo_share").rows():
        inside = sum(m * weight(k) for k, m in counts.items() if lo <= k / N < hi or (hi == 1.0 and k == N))
        assert share == pytest.approx(float(inside / total), abs=1e-12)


def test_preflight_keep_rate_and_crash_at_pass_at_2() -> None:
    """The README's DAPO loop (gen batch 384, 2 batches, n = 16) crashes with chance .027 per step at pass@1,
    .995 at pass@2; its keep rate is 1 − the silent share at G = n."""
    args = (
        "--samples",
        "64",
        "--gen-batch-size",
        "384",
        "--max-gen-batches",
        "2",
        "--steps",
        "300",
        "-f",
        "csv",
    )
    plain = csv_of(invoke("preflight", BIGMATH, *args))
    two = csv_of(invoke("preflight", BIGMATH, *args, "--pass-at", "2"))
    silent = csv_of(invoke("silent", BIGMATH, "--G", "16", "--pass-at", "2", "-f", "csv"))["silent_rate"][0]
    assert two["keep_rate"][0] == pytest.approx(1 - silent, abs=1e-12)
    assert round(plain["p_crash_step"][0], 3) == 0.027
    assert round(two["p_crash_step"][0], 3) == 0.995
    assert plain["min_safe_gen_batch_size"][0] < two["min_safe_gen_batch_size"][0]


def test_preflight_at_k_equal_n_keeps_nothing() -> None:
    out = csv_of(invoke("preflight", BIGMATH, "--n", "4", "--pass-at", "4", "--trainer", "verl", "-f", "csv"))
    assert out["keep_rate"][0] == 0.0
    assert out["p_crash_step"][0] == 1.0


def _fidelity_plugin(p: float, G: int, K: int) -> float:
    """E[GRPO weight at G]/its large-G limit at a pass rate p, summed here."""
    mean = sum(comb(G, c) * p**c * (1 - p) ** (G - c) * grpo_c(c, G, K) for c in range(G + 1))
    limit = p * (1 - p) ** (K / 2) / math.sqrt(1 - (1 - p) ** K)
    return mean / limit


@pytest.mark.parametrize("K", [2, 4])
def test_groupsize_is_the_smallest_g_reaching_the_target(tmp_path, K: int) -> None:  # type: ignore[no-untyped-def]
    rates = [0.05, 0.2, 0.5, 0.8]
    data = tmp_path / "rates.csv"
    data.write_text("pass_rate\n" + "\n".join(map(str, rates)) + "\n")
    out = csv_of(invoke("groupsize", data, "--per-prompt", "--pass-at", K, "-f", "csv"))
    for p, G in zip(out["p"], out["group_size"], strict=True):
        search = next(g for g in range(K + 1, 4097) if _fidelity_plugin(p, g, K) >= 0.9)
        assert G == search


def test_groupsize_drgrpo_needs_g_of_k_over_one_minus_target(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "rates.csv"
    data.write_text("pass_rate\n0.3\n0.6\n")
    out = csv_of(
        invoke("groupsize", data, "--per-prompt", "--pass-at", "4", "--method", "drgrpo", "-f", "csv")
    )
    assert out["group_size"].to_list() == [40, 40]  # 1 − 4/G ≥ 0.9


COMMANDS = [
    ("silent", "--G", "8,16"),
    ("budget", "--G", "8"),
    ("groupsize",),
    ("plan",),
    ("preflight", "--samples", "64"),
    ("curriculum", "--steps", "5"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_pass_at_one_is_the_plain_output(command: tuple[str, ...]) -> None:
    plain = invoke(command[0], BIGMATH, *command[1:], "-f", "csv")
    one = invoke(command[0], BIGMATH, *command[1:], "--pass-at", "1", "-f", "csv")
    assert plain.exit_code == 0, plain.stderr
    assert one.exit_code == 0, one.stderr
    assert one.stdout == plain.stdout


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_pass_at_two_changes_every_command(command: tuple[str, ...]) -> None:
    plain = invoke(command[0], BIGMATH, *command[1:], "-f", "csv")
    two = invoke(command[0], BIGMATH, *command[1:], "--pass-at", "2", "-f", "csv")
    assert two.exit_code == 0, two.stderr
    assert two.stdout != plain.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("silent", "--pass-at", "0"), "whole number ≥ 1"),
        (("silent", "--pass-at", "1.5"), "whole number ≥ 1"),
        (("silent", "--G", "4", "--pass-at", "8"), "--pass-at 8 > --G 4"),
        (("groupsize", "--pass-at", "2,4"), "one K"),
        (("preflight", "--n", "4", "--pass-at", "8"), "--pass-at 8 > --n 4"),
        (("plan", "--objective", "hit", "--pass-at", "2"), "takes no --pass-at"),
    ],
)
def test_bad_pass_at_is_one_line_and_exit_2(args: tuple[str, ...], said: str) -> None:
    done = run_cli(args[0], "/nonexistent/never-read.csv", *args[1:])
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert said in lines[0]


EXAMPLE = BIGMATH.parent / "example_run"


def test_track_counts_silent_and_all_right_groups_under_pass_at_2() -> None:
    """The bundled verl dumps (``_dump_generations``' JSONL: one line per rollout, ``uid`` the group, ``acc``
    the verdict), counted here line by line: a group of G with c right is silent under pass@2 when c = 0 or
    c > G − 2."""
    import json

    groups: dict[tuple[int, str], list[bool]] = {}
    for path in sorted(EXAMPLE.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            groups.setdefault((row["step"], row["uid"]), []).append(bool(row["acc"]))
    out = csv_of(invoke("track", EXAMPLE, "--from", "verl", "--pass-at", "2", "-f", "csv"))
    for step, silent, right in out.select("step", "silent_fraction", "all_right_fraction").rows():
        mine = [v for (s, _), v in groups.items() if s == step]
        c = [sum(v) for v in mine]
        assert silent == pytest.approx(
            sum(x == 0 or x > len(v) - 2 for x, v in zip(c, mine, strict=True)) / len(mine), abs=1e-15
        )
        assert right == pytest.approx(
            sum(x > len(v) - 2 for x, v in zip(c, mine, strict=True)) / len(mine), abs=1e-15
        )


def test_track_refuses_groups_smaller_than_k() -> None:
    done = run_cli("track", EXAMPLE, "--from", "verl", "--pass-at", "5")
    assert done.returncode == 1
    assert "fewer than 5 usable answers" in done.stderr
    assert "step 1" in done.stderr


def test_simulate_draws_silent_groups_at_the_pass_at_k_rate() -> None:
    """Each step's observed silent share (first groups, Monte Carlo) within 5 binomial deviations of the
    closed form under pass@2; DAPO redraws more groups than at pass@1."""
    args = ("simulate", "--steps", "10", "--prompts", "6000", "--trace", "-f", "csv")
    trace = csv_of(invoke(*args, "--pass-at", "2"))
    for observed, predicted in trace.select("observed_silent", "predicted_silent").rows():
        assert abs(observed - predicted) <= 5 * math.sqrt(predicted * (1 - predicted) / 6000)
    plain = csv_of(invoke(*args)).filter(pl.col("step") == 1)
    first = trace.filter(pl.col("step") == 1)
    assert (first["predicted_silent"] > plain["predicted_silent"]).all()


def test_report_answers_as_the_commands_under_pass_at(tmp_path, counts: dict[int, int]) -> None:  # type: ignore[no-untyped-def]
    """The report's silent table at G = 8 is silent --pass-at 2's number; its grid starts at K; its settings
    name the credit."""
    out = tmp_path / "r.md"
    done = invoke("report", BIGMATH, "--pass-at", "2", "-o", out)
    assert done.exit_code == 0, done.stderr
    text = out.read_text()
    exact = float(silent_share(counts, 8, 2, hyp))
    assert f"| unbiased | 8 | 215,608 | {100 * exact:.2f} % |" in text
    assert "| unbiased | 2 | 215,608 | 100.00 % |" in text
    assert "- credit: pass@2" in text


def test_a_grader_and_a_list_of_k_name_every_rows_pass_at_k(counts: dict[int, int]) -> None:
    """With --grader-error, pass@K is of what the grader reads: r = FP + (1 − FP − FN) p, unbiased from k of n
    as 1 − E[(1 − r)^K]; the pass@1 row has its value too."""
    out = silent_csv("--G", "8", "--pass-at", "1,2", "--grader-error", "0.05,0.1")
    fp, fn = Fraction(5, 100), Fraction(1, 10)

    def miss(
        k: int, K: int
    ) -> Fraction:  # E[(1 − r)^K] from k of n: Σ_j Hyp(j; n, k, K)(1 − FN)... read wrong
        total = Fraction(0)
        for j in range(K + 1):  # j truly right among K drawn; all K read wrong
            w = Fraction(comb(k, j) * comb(N - k, K - j), comb(N, K))
            total += w * fn**j * (1 - fp) ** (K - j)
        return total

    for K, value in zip(out["pass_at"], out["pass_at_k"], strict=True):
        assert value == pytest.approx(float(mean_over(counts, lambda k, K=K: 1 - miss(k, K))), abs=1e-12)


def test_a_reward_that_is_not_0_or_1_exits_1_under_pass_at(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """max@k of graded rewards is not modelled: a non-binary reward is refused, naming its row and --threshold."""
    log = tmp_path / "log.csv"
    log.write_text("prompt,reward\na,1\na,0\na,0.5\na,1\n")
    done = run_cli("silent", log, "--rollouts", "--prompt-col", "prompt", "--reward-col", "reward", "--G", "2",
                   "--pass-at", "2")  # fmt: skip
    assert done.returncode == 1
    assert "row 3" in done.stderr
    assert "--threshold" in done.stderr


def test_preflight_trains_on_the_rewards_of_the_groups_pass_at_k_keeps(counts: dict[int, int]) -> None:
    """verl's DAPO filter under pass@2 at n = 16 keeps 0 < c ≤ 14: the trained reward is
    E[c/16; kept] / P(kept), each prompt's c hypergeometric from its 64 answers."""
    out = csv_of(invoke("preflight", BIGMATH, "--samples", "64", "--n", "16", "--pass-at", "2", "-f", "csv"))
    kept = mean_over(counts, lambda k: sum(hyp(c, k, 16) for c in range(1, 15)))
    rewarded = mean_over(counts, lambda k: sum(hyp(c, k, 16) * Fraction(c, 16) for c in range(1, 15)))
    assert out["reward_trained"][0] == pytest.approx(float(rewarded / kept), abs=1e-12)
    assert out["reward_dataset"][0] == pytest.approx(
        float(mean_over(counts, lambda k: Fraction(k, N))), abs=1e-12
    )


@pytest.mark.parametrize("K", [2, 4])
def test_curriculum_band_step_is_the_exact_pass_at_k_share(counts: dict[int, int], K: int) -> None:
    """A band schedule draws every prompt with 0.2 ≤ p̂ ≤ 0.8 alike: each step's silent share at G = 8 is their
    mean hypergeometric pass@K silence, its all-right share their c > 8 − K."""
    out = csv_of(
        invoke("curriculum", BIGMATH, "--schedule", "band", "--steps", "1", "--pass-at", K, "-f", "csv")
    )
    inside = {k: m for k, m in counts.items() if Fraction(1, 5) <= Fraction(k, N) <= Fraction(4, 5)}
    assert out["effective_prompts"][0] == pytest.approx(sum(inside.values()))
    assert out["silent_rate"][0] == pytest.approx(float(silent_share(inside, 8, K, hyp)), abs=1e-12)
    right = mean_over(inside, lambda k: sum(hyp(c, k, 8) for c in range(9 - K, 9)))
    assert out["all_right_rate"][0] == pytest.approx(float(right), abs=1e-12)


def test_pass_at_one_is_the_plain_track_and_simulate() -> None:
    for args in (("track", EXAMPLE, "--from", "verl"), ("simulate", "--steps", "5", "--prompts", "500")):
        plain = invoke(*args, "-f", "csv")
        one = invoke(*args, "--pass-at", "1", "-f", "csv")
        assert plain.exit_code == 0, plain.stderr
        assert one.stdout == plain.stdout

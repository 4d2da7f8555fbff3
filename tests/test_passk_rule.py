"""Every 0/1 outcome of a group under pass@K, through the trainers' own credit code.

A group of G answers with c right is *silent* (every answer's credit the same, so every advantage zero once
centred) iff c = 0 or c > G − K; the credits centred are Δ (y − ȳ) times a constant, Δ = C(G−c−1, K−1)/
C(G−1, K−1); and E[Δσ²] over c ~ Bin(G, p) is (1 − K/G)(1 − p)^(K−1) p (1 − p). PKPO's s^(loo−1) and
GRPO-pass@k credit a right answer only in the K-subsets it alone makes right, so they are silent iff c = 0 or
c ≥ G − K + 2. This file checks those claims on every reward vector y of length G ≤ 8 and every K ≤ G, and for
G = 9, 10 on three orders of each c: every source below sorts the group or reads it through c alone, so
permuting a group permutes its advantages (the enumeration at G ≤ 8 checks that too).

The sources, rewritten in pure Python (exact fractions) or numpy as their docstrings say, each naming its
repository, file, lines and commit (torch is not installed, and none of them is importable here):

- rllm's ``adv_estimator: pkpo`` (PKPO, arXiv:2505.15201), and rllm's GRPO standardisation;
- PKPO's reference code (the paper's Listing 1, read from a public copy): s, s^(loo) and s^(loo−1), checked
  against the paper's sums over subsets;
- Pass@k Training's analytic advantage (arXiv:2508.10751, ``code/passk_adv.py``);
- EasyR1's ``GRPO_PASSK`` advantage (arXiv:2503.19595), which is pass@G.

The references (``_delta``, ``_miss``, …) are exact fractions from the formulas alone;
:mod:`sigmatool.kernels.passk` is checked against them at the end.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.special import comb as scipy_comb

from sigmatool.kernels import passk

Outcome = tuple[int, ...]
EPS = 1e-6  # every trainer below guards its division by this


def _outcomes(G: int) -> list[Outcome]:
    """Every 0/1 vector for G ≤ 8; beyond, each c right first, wrong first and in one shuffled order."""
    if G <= 8:
        return list(itertools.product((0, 1), repeat=G))
    out: set[Outcome] = set()
    for c in range(G + 1):
        y = [1] * c + [0] * (G - c)
        out.add(tuple(y))
        out.add(tuple(reversed(y)))
        random.Random(100 * G + c).shuffle(y)
        out.add(tuple(y))
    return sorted(out)


SIZES = range(2, 11)
CASES = [(y, K) for G in SIZES for y in _outcomes(G) for K in range(1, G + 1)]


def _comb(n: int, k: int) -> int:
    """C(n, k), 0 outside 0 ≤ k ≤ n (negative n included)."""
    return math.comb(n, k) if 0 <= k <= n else 0


# --- The references: exact, from the formulas alone ---------------------------------------------------------


def _delta(G: int, K: int, c: int) -> Fraction:
    """Δ(c) = C(G−c−1, K−1)/C(G−1, K−1): the share of (K−1)-subsets of the others all wrong."""
    return Fraction(_comb(G - c - 1, K - 1), math.comb(G - 1, K - 1))


def _miss(G: int, K: int, c: int) -> Fraction:
    """q(c) = C(G−c, K)/C(G, K): the share of K-subsets with no right answer."""
    return Fraction(_comb(G - c, K), math.comb(G, K))


def _silent(G: int, K: int, c: int) -> bool:
    return c == 0 or c > G - K


def _silent_loo_minus_one(G: int, K: int, c: int) -> bool:
    """PKPO's s^(loo−1) and GRPO-pass@k (K ≥ 2): a right answer earns only in K-subsets it alone makes right."""
    return c == 0 or c >= G - K + 2


def _sigma2(G: int, c: int) -> Fraction:
    return Fraction(c * (G - c), G * G)


def _drgrpo(G: int, K: int, c: int) -> Fraction:
    """Dr. GRPO's weight of a group, Δσ²."""
    return _delta(G, K, c) * _sigma2(G, c)


def _spread2(G: int, K: int, c: int) -> Fraction:
    """σ_K² = q (1 − q), the variance of the K-subsets' pass@K rewards."""
    q = _miss(G, K, c)
    return q * (1 - q)


def _grpo(G: int, K: int, c: int) -> float:
    """GRPO's weight of a group, Δσ²/σ_K (0 where silent)."""
    return 0.0 if _silent(G, K, c) else float(_drgrpo(G, K, c)) / math.sqrt(_spread2(G, K, c))


def _centred(G: int, K: int, c: int, y: int) -> Fraction:
    """Δ (y − ȳ): the advantage before normalising."""
    return _delta(G, K, c) * (y - Fraction(c, G))


def _advantages(G: int, K: int, c: int) -> tuple[float, float]:
    """Δ (y − ȳ)/σ_K of a right and of a wrong answer (0, 0 where silent)."""
    if _silent(G, K, c):
        return 0.0, 0.0
    spread = math.sqrt(_spread2(G, K, c))
    return float(_centred(G, K, c, 1)) / spread, float(_centred(G, K, c, 0)) / spread


def _rho(n: int, c: int, k: int) -> Fraction:
    """PKPO's unbiased pass@k, ρ(n, c, k) = 1 − C(n−c, k)/C(n, k)."""
    return 1 - Fraction(_comb(n - c, k), math.comb(n, k))


# --- rllm: adv_estimator pkpo and the GRPO standardisation ----------------------------------------------------


def _rllm_pkpo_credit(rewards: Sequence[int], k: int) -> list[Fraction]:
    """rllm's PKPO credit: ``(1/C(n,k)) Σ`` over the k-subsets holding an answer of the subset's max.

    rllm-org/rllm, ``rllm/trainer/algorithms/rl_algo.py`` lines 8–10 (``_comb``) and 46–68 of
    ``calculate_pkpo_advantages_per_group``, commit 6b3b2da5d57f9b0a941f518568df8d889d8d8e21 (pull request
    #743, branch ``pkpo-adv-estimator``). Rewritten over the 0/1 rewards and fractions: ``np.argsort(kind=
    "stable")`` is a stable ``sorted``; the arithmetic is the same, without rounding.
    """
    n = len(rewards)
    k = max(1, min(k, n))
    order = sorted(range(n), key=lambda i: rewards[i])
    g = [rewards[i] for i in order]
    cnk = math.comb(n, k)
    credit_sorted = [Fraction(0)] * n
    suffix = Fraction(0)  # running sum_{q>p} C(q-1, k-2) * g[q]
    for p in range(n - 1, -1, -1):
        credit_sorted[p] = (_comb(p, k - 1) * g[p] + suffix) / cnk
        suffix += _comb(p - 1, k - 2) * g[p]
    credit = [Fraction(0)] * n
    for p, i in enumerate(order):
        credit[i] = credit_sorted[p]
    for val in sorted(set(rewards)):  # exchangeable samples get equal credit
        members = [i for i in range(n) if rewards[i] == val]
        mean = sum((credit[i] for i in members), Fraction(0)) / len(members)
        for i in members:
            credit[i] = mean
    return credit


@functools.cache
def _rllm_credit(y: Outcome, K: int) -> tuple[Fraction, ...]:
    """rllm's PKPO credit of a 0/1 outcome."""
    return tuple(_rllm_pkpo_credit(y, K))


@functools.cache
def _rllm_pkpo(y: Outcome, K: int) -> tuple[Fraction, ...]:
    """rllm's PKPO advantage, the credit less its group mean (``rl_algo.py`` lines 70–71, commit 6b3b2da5)."""
    credit = _rllm_credit(y, K)
    mean = sum(credit, Fraction(0)) / len(credit)
    return tuple(x - mean for x in credit)


def _rllm_grpo(rewards: Sequence[Fraction], epsilon: float = EPS) -> list[float]:
    """rllm's GRPO standardisation, ``(r − mean)/(std + ε)`` with numpy's std (ddof 0).

    rllm-org/rllm, ``rllm/trainer/algorithms/rl_algo.py`` lines 13–25 (``calculate_grpo_advantages_per_group``),
    commit 6b3b2da5. The mean and the centred rewards are exact fractions, so a silent group gives exact zeros.
    """
    n = len(rewards)
    if n <= 1:
        mean, std = Fraction(0), 1.0
    else:
        mean = sum(rewards, Fraction(0)) / n
        std = math.sqrt(sum(((r - mean) ** 2 for r in rewards), Fraction(0)) / n)
    return [float(r - mean) / (std + epsilon) for r in rewards]


# --- PKPO's reference code (Listing 1 of arXiv:2505.15201) ----------------------------------------------------


@functools.cache
def _m_normed(N: int, K: int, i: int, j: int) -> Fraction:
    """m_ij/C(N, K) by the listing's stable products (sorted positions i ≤ j, from 0).

    PKPO's Listing 1 (arXiv:2505.15201), read from its copy in kpahwa16/pass-k-policy-optimization,
    ``pkpo_core.py`` lines 24–46, commit 1b0928e6eef4f28e355b88cd40f0247263bff22d; ``np.prod`` of two
    ``np.arange`` ratios is a product of fractions here.
    """
    if i == j and i >= K - 1:
        tops, bottoms = range(i - K + 2, i + 1), range(N - K + 2, N + 1)
        return Fraction(K, N - K + 1) * math.prod(Fraction(a, b) for a, b in zip(tops, bottoms, strict=True))
    if j > i and j >= K - 1 and K >= 2:
        tops, bottoms = range(j - K + 2, j), range(N - K + 2, N)
        ratio = math.prod(Fraction(a, b) for a, b in zip(tops, bottoms, strict=True))
        return Fraction(K, N - K + 1) * Fraction(K - 1, N) * ratio
    return Fraction(0)


@functools.cache
def _m_diagonal(N: int, K: int) -> tuple[Fraction, ...]:
    """``pkpo_core.py`` lines 49–51 (commit 1b0928e6)."""
    return tuple(_m_normed(N, K, i, i) for i in range(N))


@functools.cache
def _deltas(N: int, K: int) -> tuple[Fraction, ...]:
    """``_delta`` and ``_deltas``, ``pkpo_core.py`` lines 54–61 (commit 1b0928e6)."""
    return tuple(_m_normed(N - 1, K, i, i + 1) - _m_normed(N - 1, K, i + 1, i + 1) for i in range(N - 2))


def _sorted_apply(
    func: Callable[[list[int], int], list[Fraction]],
) -> Callable[[Sequence[int], int], list[Fraction]]:
    """Apply ``func`` to the rewards sorted ascending, and put its values back in the group's order.

    ``pkpo_core.py`` lines 64–76 (commit 1b0928e6); ``np.argsort`` is a stable ``sorted``.
    """

    def inner(x: Sequence[int], K: int) -> list[Fraction]:
        i_sort = sorted(range(len(x)), key=lambda i: x[i])
        values = func([x[i] for i in i_sort], K)
        out = [Fraction(0)] * len(x)
        for position, i in enumerate(i_sort):
            out[i] = values[position]
        return out

    return inner


@_sorted_apply
def _s(g: list[int], K: int) -> list[Fraction]:
    """The unbaselined credit s (the paper's Eq. 19): ``pkpo_core.py`` lines 131–160 (commit 1b0928e6)."""
    N = len(g)
    c = [gi * m for gi, m in zip(g, _m_diagonal(N, K), strict=True)]
    for i, d in enumerate(_deltas(N + 1, K)):
        c[i] += g[i + 1] * d
    return list(itertools.accumulate(reversed(c)))[::-1]


@_sorted_apply
def _b(g: list[int], K: int) -> list[Fraction]:
    """The leave-one-out baseline sums (Eq. 30): ``pkpo_core.py`` lines 163–182 (commit 1b0928e6)."""
    N = len(g)
    w = [m * j for m, j in zip(_m_diagonal(N - 1, K), range(1, N), strict=True)]
    for i, d in enumerate(_deltas(N, K), start=1):
        w[i] += d * i
    c1 = sum((wi * gi for wi, gi in zip(w, g[1:], strict=True)), Fraction(0))
    c2 = [(g[i] - g[i + 1]) * w[i] for i in range(N - 1)]
    return list(itertools.accumulate([c1, *c2]))


@functools.cache
def _s_of(y: Outcome, K: int) -> tuple[Fraction, ...]:
    return tuple(_s(y, K))


@functools.cache
def _b_of(y: Outcome, K: int) -> tuple[Fraction, ...]:
    return tuple(_b(y, K))


@functools.cache
def _sloo(y: Outcome, K: int) -> tuple[Fraction, ...]:
    """s^(loo) (Eq. 29): ``pkpo_core.py`` line 205 (commit 1b0928e6), ``s − b^(K)/(N − 1)``.

    That copy returns ``s`` when K ≥ N; the listing needs no such branch (``_b`` is 0 at K = N).
    """
    return tuple(s - b / (len(y) - 1) for s, b in zip(_s_of(y, K), _b_of(y, K), strict=True))


@functools.cache
def _sloo_minus_one(y: Outcome, K: int) -> tuple[Fraction, ...]:
    """s^(loo−1) (Eq. 33), K ≥ 2: ``pkpo_core.py`` line 232 (commit 1b0928e6), ``s − b^(K−1) K/(K−1)/N``."""
    return tuple(s - b * K / (K - 1) / len(y) for s, b in zip(_s_of(y, K), _b_of(y, K - 1), strict=True))


# --- Pass@k Training and EasyR1 -------------------------------------------------------------------------------


@functools.cache
def _passk_training(y: Outcome, K: int) -> NDArray[np.float64]:
    """Pass@k Training's analytic advantage, ``calc_adv`` as written (scipy's float ``comb``, ε = 1e-6).

    RUCAIBox/Passk_Training, ``code/passk_adv.py`` lines 10–19, commit
    00474d78dc80afd0a3dde1bda476efec32db34ed (arXiv:2508.10751).
    """
    val = np.asarray(y, dtype=np.float64)
    k = K
    c = len(np.where(val == 1)[0])
    n = len(val)
    rho = 1 - scipy_comb(n - c, k) / scipy_comb(n, k)
    sigma = np.sqrt(rho * (1 - rho))
    adv_p = (1 - rho) / (sigma + EPS)
    adv_n = (1 - rho - scipy_comb(n - c - 1, k - 1) / scipy_comb(n - 1, k - 1)) / (sigma + EPS)
    new_val = np.where(val == 1, adv_p, val)
    new_val = np.where(new_val == 0, adv_n, new_val)
    return np.asarray(new_val, dtype=np.float64)


def _passk_training_numerators(G: int, K: int, c: int) -> tuple[Fraction, Fraction, Fraction]:
    """``calc_adv``'s two numerators, 1 − ρ and 1 − ρ − Δ, and its variance ρ (1 − ρ), in exact arithmetic."""
    rho = 1 - Fraction(_comb(G - c, K), math.comb(G, K))
    step = Fraction(_comb(G - c - 1, K - 1), math.comb(G - 1, K - 1))
    return 1 - rho, 1 - rho - step, rho * (1 - rho)


def _easyr1_grpo_passk(y: Outcome) -> NDArray[np.float64]:
    """EasyR1's ``GRPO_PASSK``: only the best answer gets ``(r_max − r_second_max)/(std + ε)``.

    hiyouga/EasyR1, ``verl/trainer/core_algos.py`` lines 219–265 (``compute_grpo_passk_outcome_advantage``),
    commit b44b311b669bf1fd1aa2fc36f2251482ba33cb16. ``torch.topk(k=2)`` is the first two of a stable
    descending sort (which of tied maxima it names changes nothing: their difference is 0); ``torch.std`` is
    the unbiased std (ddof 1).
    """
    rewards = np.asarray(y, dtype=np.float64)
    advantages = np.zeros_like(rewards)
    top = np.argsort(-rewards, kind="stable")[:2]
    advantages[top[0]] = (rewards[top[0]] - rewards[top[1]]) / (np.std(rewards, ddof=1) + EPS)
    return advantages


# --- The silence rule ------------------------------------------------------------------------------------------


def _pkpo_standardised(y: Outcome, K: int) -> list[float]:
    return _rllm_grpo(_rllm_pkpo(y, K))


# The credits a trainer may use before any centring: silent means one value for the whole group.
PKPO_CREDITS: dict[str, Callable[[Outcome, int], Sequence[Fraction]]] = {
    "rllm_credit": _rllm_credit,
    "sloo": _sloo,
}
# The advantages a trainer uses: silent means every one is zero.
PKPO_ADVANTAGES: dict[str, Callable[[Outcome, int], Sequence[float | Fraction]]] = {
    "rllm_centred": _rllm_pkpo,
    "grpo_standardised": _pkpo_standardised,
}


@pytest.mark.parametrize("form", sorted(PKPO_CREDITS))
def test_pkpo_credits_are_all_equal_iff_no_right_answer_or_more_than_g_minus_k(form: str) -> None:
    wrong = [
        (y, K) for y, K in CASES if _silent(len(y), K, sum(y)) != (len(set(PKPO_CREDITS[form](y, K))) == 1)
    ]
    assert [] == wrong


@pytest.mark.parametrize("form", sorted(PKPO_ADVANTAGES))
def test_pkpo_advantages_are_all_zero_iff_no_right_answer_or_more_than_g_minus_k(form: str) -> None:
    wrong = [
        (y, K)
        for y, K in CASES
        if _silent(len(y), K, sum(y)) != all(a == 0 for a in PKPO_ADVANTAGES[form](y, K))
    ]
    assert [] == wrong


def test_pkpo_sloo_gives_each_answer_of_a_silent_group_one_value_zero_only_when_all_wrong() -> None:
    # s^(loo) is not centred: where every K-subset holds a right answer (c > G − K) each answer gets
    # K/G − K/(G − 1), the credit less the others' pass@K, and K/G at K = G, where no (G−1)-subset holds K.
    wrong = []
    for y, K in CASES:
        G, c = len(y), sum(y)
        if _silent(G, K, c):
            expected = 0 if c == 0 else Fraction(K, G) - (Fraction(K, G - 1) if K < G else 0)
            if [expected] * G != list(_sloo(y, K)):
                wrong.append((y, K))
    assert [] == wrong


def test_pkpo_sloo_minus_one_is_silent_iff_no_right_answer_or_at_least_g_minus_k_plus_2() -> None:
    wrong = [
        (y, K)
        for y, K in CASES
        if K >= 2 and _silent_loo_minus_one(len(y), K, sum(y)) != all(a == 0 for a in _sloo_minus_one(y, K))
    ]
    assert [] == wrong


def test_easyr1_grpo_passk_is_silent_iff_no_right_answer_or_at_least_two() -> None:
    # GRPO_PASSK is pass@G: c ≥ G − K + 2 at K = G.
    wrong = [
        y
        for G in SIZES
        for y in _outcomes(G)
        if _silent_loo_minus_one(G, G, sum(y)) != bool(np.all(_easyr1_grpo_passk(y) == 0.0))
    ]
    assert [] == wrong


def test_easyr1_grpo_passk_is_pkpo_sloo_minus_one_at_k_equal_g_over_the_std() -> None:
    groups = [y for G in SIZES for y in _outcomes(G)]
    expected = [float(s) / (np.std(y, ddof=1) + EPS) for y in groups for s in _sloo_minus_one(y, len(y))]
    actual = np.concatenate([_easyr1_grpo_passk(y) for y in groups])
    np.testing.assert_allclose(expected, actual, rtol=1e-15, atol=0)


def test_passk_training_is_silent_iff_no_right_answer_or_more_than_g_minus_k() -> None:
    wrong = [
        (y, K) for y, K in CASES if _silent(len(y), K, sum(y)) != bool(np.all(_passk_training(y, K) == 0.0))
    ]
    assert [] == wrong


# --- The advantage and the update ---------------------------------------------------------------------------


def _subset_credit(y: Outcome, k: int, members: Sequence[int], i: int) -> Fraction:
    """S(i, k, members): the mean over k-subsets of ``members`` of the subset's max, counted where i is in it."""
    subsets = list(itertools.combinations(members, k))
    return Fraction(sum(max(y[j] for j in subset) for subset in subsets if i in subset), len(subsets))


def _subset_sloo(y: Outcome, k: int) -> list[Fraction]:
    """The paper's Eq. 29 by brute force: S(i, k, [n]) − (1/(n − 1)) Σ_{j≠i} S(j, k, [n] ∖ i)."""
    n = len(y)
    out = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        baseline = sum((_subset_credit(y, k, others, j) for j in others), Fraction(0)) if k < n else 0
        out.append(_subset_credit(y, k, range(n), i) - Fraction(baseline) / (n - 1))
    return out


def _subset_sloo_minus_one(y: Outcome, k: int) -> list[Fraction]:
    """The paper's Eq. 33 by brute force: (1/C(n, k)) Σ over k-subsets I ∋ i of max_I − max_{I∖i}."""
    subsets = list(itertools.combinations(range(len(y)), k))
    return [
        Fraction(
            sum(
                max(y[j] for j in subset) - max(y[j] for j in subset if j != i)
                for subset in subsets
                if i in subset
            ),
            len(subsets),
        )
        for i in range(len(y))
    ]


def test_pkpo_listing_is_the_papers_sums_over_subsets() -> None:
    small = [(y, K) for y, K in CASES if len(y) <= 6]
    assert [list(_rllm_credit(y, K)) for y, K in small] == [list(_s_of(y, K)) for y, K in small]
    assert [_subset_sloo(y, K) for y, K in small] == [list(_sloo(y, K)) for y, K in small]
    pairs = [(y, K) for y, K in small if K >= 2]
    assert [_subset_sloo_minus_one(y, K) for y, K in pairs] == [list(_sloo_minus_one(y, K)) for y, K in pairs]


def test_pkpo_credit_is_k_over_g_when_right_and_k_over_g_rho_when_wrong() -> None:
    wrong = []
    for y, K in CASES:
        G, c = len(y), sum(y)
        expected = [Fraction(K, G) if r else Fraction(K, G) * _rho(G - 1, c, K - 1) for r in y]
        if expected != list(_rllm_credit(y, K)):
            wrong.append((y, K))
    assert [] == wrong


def test_pkpo_centred_credit_is_k_over_g_times_delta_times_centred_reward() -> None:
    wrong = [
        (y, K)
        for y, K in CASES
        if [Fraction(K, len(y)) * _centred(len(y), K, sum(y), r) for r in y] != list(_rllm_pkpo(y, K))
    ]
    assert [] == wrong


def test_pkpo_update_is_k_over_g_times_delta_sigma2_times_the_score_gap() -> None:
    # (1/G) Σ_i a_i s_i for any scores s: the mean score of the right answers less that of the wrong ones.
    wrong = []
    for y, K in CASES:
        G, c = len(y), sum(y)
        if c in (0, G):
            continue
        scores = [7 * i * i - 3 * i + 2 for i in range(G)]
        right = Fraction(sum(s for s, r in zip(scores, y, strict=True) if r), c)
        wrong_mean = Fraction(sum(s for s, r in zip(scores, y, strict=True) if not r), G - c)
        update = sum((a * s for a, s in zip(_rllm_pkpo(y, K), scores, strict=True)), Fraction(0)) / G
        if Fraction(K, G) * _drgrpo(G, K, c) * (right - wrong_mean) != update:
            wrong.append((y, K))
    assert [] == wrong


def test_passk_training_advantage_is_exactly_delta_times_centred_reward_over_sigma_k() -> None:
    # calc_adv's numerators are Δ (y − ȳ), and its variance ρ (1 − ρ) is σ_K² = q (1 − q).
    for G in SIZES:
        for K in range(1, G + 1):
            for c in range(G + 1):
                right, wrong, variance = _passk_training_numerators(G, K, c)
                assert _centred(G, K, c, 1) == right, (G, K, c)
                assert _centred(G, K, c, 0) == wrong, (G, K, c)
                assert _spread2(G, K, c) == variance, (G, K, c)


def test_passk_training_advantages_are_delta_times_centred_reward_over_sigma_k() -> None:
    expected = [
        float(_centred(len(y), K, sum(y), r)) / (math.sqrt(_spread2(len(y), K, sum(y))) + EPS)
        for y, K in CASES
        for r in y
    ]
    actual = np.concatenate([_passk_training(y, K) for y, K in CASES])
    np.testing.assert_allclose(expected, actual, rtol=1e-12, atol=0)


def test_expected_delta_sigma2_over_the_binomial_is_its_closed_form() -> None:
    for p in (Fraction(1, 2), Fraction(1, 3), Fraction(2, 7), Fraction(9, 10), Fraction(1, 97)):
        for G in SIZES:
            for K in range(1, G + 1):
                mean = sum(
                    (math.comb(G, c) * p**c * (1 - p) ** (G - c) * _drgrpo(G, K, c) for c in range(G + 1)),
                    Fraction(0),
                )
                assert (1 - Fraction(K, G)) * (1 - p) ** (K - 1) * p * (1 - p) == mean, (p, G, K)


def _standardised_equal(a: Sequence[Fraction], y: Outcome) -> bool:
    """Whether (a − ā)/sd(a) = (y − ȳ)/sd(y), in exact arithmetic: same signs, and equal squares."""
    n = len(y)
    a_mean, y_mean = sum(a, Fraction(0)) / n, Fraction(sum(y), n)
    a_var = sum(((x - a_mean) ** 2 for x in a), Fraction(0))
    y_var = sum(((r - y_mean) ** 2 for r in y), Fraction(0))
    return all(
        (x - a_mean > 0) == (r - y_mean > 0) and (x - a_mean) ** 2 * y_var == (r - y_mean) ** 2 * a_var
        for x, r in set(zip(a, y, strict=True))
    )


def _passk_training_exact(y: Outcome, K: int) -> list[Fraction]:
    right, wrong, _ = _passk_training_numerators(len(y), K, sum(y))
    return [right if r else wrong for r in y]


CREDITS: dict[str, Callable[[Outcome, int], Sequence[Fraction]]] = {
    "rllm_pkpo": _rllm_credit,
    "sloo": _sloo,
    "sloo_minus_one": _sloo_minus_one,
    "passk_training": _passk_training_exact,
}


@pytest.mark.parametrize("source", sorted(CREDITS))
def test_credits_standardised_by_their_own_std_are_pass_at_1_advantages(source: str) -> None:
    lowest_k, silent = (2, _silent_loo_minus_one) if source == "sloo_minus_one" else (1, _silent)
    wrong = [
        (y, K)
        for y, K in CASES
        if K >= lowest_k
        and not silent(len(y), K, sum(y))
        and not _standardised_equal(CREDITS[source](y, K), y)
    ]
    assert [] == wrong


# --- sigmatool's kernel against the references ----------------------------------------------------------------

PAIRS = [(G, K) for G in SIZES for K in range(1, G + 1)]


@pytest.mark.parametrize(("G", "K"), PAIRS)
def test_kernel_delta_is_the_reference(G: int, K: int) -> None:
    expected = [float(_delta(G, K, c)) for c in range(G + 1)]
    np.testing.assert_allclose(expected, passk.delta(G, K), rtol=1e-14, atol=0)


@pytest.mark.parametrize(("G", "K"), PAIRS)
def test_kernel_miss_is_the_reference(G: int, K: int) -> None:
    expected = [float(_miss(G, K, c)) for c in range(G + 1)]
    np.testing.assert_allclose(expected, passk.miss(G, K), rtol=1e-14, atol=0)


@pytest.mark.parametrize(("G", "K"), PAIRS)
def test_kernel_silent_is_the_reference(G: int, K: int) -> None:
    assert [_silent(G, K, c) for c in range(G + 1)] == passk.silent(G, K).tolist()


@pytest.mark.parametrize(("G", "K"), PAIRS)
def test_kernel_grpo_weight_is_the_reference(G: int, K: int) -> None:
    expected = [_grpo(G, K, c) for c in range(G + 1)]
    np.testing.assert_allclose(expected, passk.grpo(G, K), rtol=1e-13, atol=0)


@pytest.mark.parametrize(("G", "K"), PAIRS)
def test_kernel_drgrpo_weight_is_the_reference(G: int, K: int) -> None:
    expected = [float(_drgrpo(G, K, c)) for c in range(G + 1)]
    np.testing.assert_allclose(expected, passk.drgrpo(G, K), rtol=1e-14, atol=0)


@pytest.mark.parametrize(("G", "K"), PAIRS)
def test_kernel_advantages_are_the_reference(G: int, K: int) -> None:
    expected = [_advantages(G, K, c) for c in range(G + 1)]
    np.testing.assert_allclose(
        expected, [passk.advantages(G, K, c) for c in range(G + 1)], rtol=1e-13, atol=0
    )


@pytest.mark.parametrize(("G", "K"), PAIRS)
def test_kernel_expected_drgrpo_is_the_binomial_mean(G: int, K: int) -> None:
    ps = [Fraction(1, 2), Fraction(1, 3), Fraction(2, 7), Fraction(9, 10), Fraction(1, 97)]
    expected = [
        float(
            sum(
                (math.comb(G, c) * p**c * (1 - p) ** (G - c) * _drgrpo(G, K, c) for c in range(G + 1)),
                Fraction(0),
            )
        )
        for p in ps
    ]
    np.testing.assert_allclose(
        expected, passk.expected_drgrpo([float(p) for p in ps], G, K), rtol=1e-13, atol=0
    )

"""The other trainers' loops (docs/preflight.md, "Other trainers' loops"): the parts that are not verl's.

- **NeMo-RL** (NVIDIA-NeMo/RL @ 7ea279ab, ``nemo_rl/algorithms/grpo.py``): the step needs ``P × n`` kept
  *rows*; with the leave-one-out baseline a group whose others all agree loses that row (k = 1 or n − 1 of
  n right: n − 1 rows kept), so after m groups the kept rows are ``n G − b`` with G ~ Binomial(m, a) the
  informative groups and b | G ~ Binomial(G, ρ) those that lost a row (ρ their share of them):
  :func:`rows_short`, :func:`rows_lost`. Its cache is reset at each epoch's start, so a half-filled step
  is dropped there: :func:`reset_run` sums the run over epochs that each start afresh.
- **SkyRL's replace** (NovaSky-AI/SkyRL @ a9564572, ``trainer_utils.py`` l.432-514): each batch of B
  groups passes on its own when more than ``min_replace_ratio`` of them are good, so the batches a step
  takes are geometric, capped: :func:`replace_pass`.
- **slime and AReaL** stream prompts until T groups are accepted: the rejections before the T-th
  acceptance are negative binomial, R ~ NB(T, a), so a step completes T + R groups; slime submits
  rounds of O prompts while accepted + in flight < T, so it submits ``O ⌈(T + R) / O⌉`` and aborts the
  rest in flight: :func:`streamed`.

Groups are drawn with replacement, each kept by its own draw, as in the verl loop's model; completion
order is taken as independent of the rewards (slime and AReaL take groups as they finish).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
TAIL = 1e-16  # a sum over an unbounded count stops when this much chance is left


def _stats() -> Any:
    """scipy.stats, imported on first use (0.4 s that a command not reaching the loop should not pay)."""
    import scipy.stats

    return scipy.stats


def rows_short(a: float, short: float, B: int, T: int, n: int, k: NDArray[np.int64]) -> FloatArray:
    """P(fewer than T n rows kept after k batches of B groups), per k: a group is informative with chance
    ``a``, and informative but one row short with chance ``short`` (NeMo-RL's leave-one-out).

    >>> [round(float(x), 4) for x in rows_short(0.5, 0.0, 2, 2, 4, np.array([0, 1, 2]))]
    [1.0, 0.75, 0.3125]
    """
    st = _stats()
    rho = short / a if a > 0 else 0.0
    out = np.ones(k.size)
    for i, batches in enumerate(k.tolist()):
        m = batches * B
        if m < T or a <= 0:
            continue
        g = np.arange(T, m + 1)
        done = st.binom.pmf(g, m, a) * st.binom.cdf(n * (g - T), g, rho)
        out[i] = max(1.0 - math.fsum(done.tolist()), 0.0)
    return out


def rows_lost(a: float, short: float, m: int, T: int, n: int) -> float:
    """E[rows kept; fewer than T n] after m groups: the rows a crashing step had kept, lost with it."""
    st = _stats()
    if a <= 0:
        return 0.0
    rho = short / a
    g = np.arange(1, m + 1)
    c = n * (g - T)  # b > c: the step is short
    p_short = st.binom.sf(c, g, rho)
    with np.errstate(invalid="ignore"):
        b_short = np.where(g > 1, g * rho * st.binom.sf(c - 1, g - 1, rho), rho * (c < 1))
    return math.fsum((st.binom.pmf(g, m, a) * (n * g * p_short - b_short)).tolist())


def reset_run(
    f: FloatArray, crash: float, per_epoch: int, epochs: int, steps: int
) -> tuple[float, float, float]:
    """(P(crash), expected optimizer steps, expected generation batches) of a run whose epochs each hold
    ``per_epoch`` batches and start with an empty cache (a step still short at an epoch's end is dropped,
    no crash), ending after ``epochs`` epochs, ``steps`` steps or a crash; ``f`` the step's chance of
    ending after exactly k = 1…M batches, ``crash`` its chance of crashing at the M-th.

    In one epoch of L batches let g_c(τ) be the chance that c steps are done at batch τ. Then the epoch
    ends with exactly c steps and no crash with D(c) = Σ_τ g_c(τ) [L − τ < M] P(K > L − τ), crashes after
    c with C(c) = Σ_τ g_c(τ) [L − τ ≥ M] crash, and does j steps with A(j) = Σ_τ g_j(τ). Over epochs, with
    j steps left, the crash chance is w_E(j) = Σ_{c<j} C(c) + Σ_{c<j} D(c) w_{E−1}(j − c), w_0 = 0, and
    alike for steps and batches. g_c is kept where it exceeds 1e-30 of its largest value (it spreads as √c
    around c E[K]), so each count costs its spread, not the epoch's length.
    """
    M, L = f.size, per_epoch
    tail = np.concatenate(([1.0], 1.0 - np.cumsum(f)))  # P(K > r), r = 0…M
    tau = np.arange(L + 1, dtype=np.float64)
    r = L - np.arange(L + 1)
    ends = np.where(r < M, tail[np.minimum(r, M)], 0.0)
    crashes = np.where(r >= M, crash, 0.0)
    top = min(steps, L)
    A, BA, D, C, BC = (np.zeros(top + 1) for _ in range(5))
    g, at = np.ones(1), 0  # g_c on τ = at … at + len(g) − 1
    step_f = np.concatenate(([0.0], f))
    for c in range(top + 1):
        if at > L:
            break
        g = g[: L + 1 - at]
        where = slice(at, at + g.size)
        A[c], BA[c] = g.sum(), g @ tau[where]
        D[c], C[c] = g @ ends[where], g @ crashes[where]
        BC[c] = (g * crashes[where]) @ (tau[where] + M)
        g = np.convolve(g, step_f)
        keep = np.flatnonzero(g > 1e-30 * g.max()) if g.size and g.max() > 0 else np.zeros(0, dtype=np.int64)
        if keep.size == 0:
            break
        g, at = g[keep[0] : keep[-1] + 1], at + int(keep[0])
    return _epochs_with_steps(A, BA, D, C, BC, L, epochs, steps)


def _epochs_with_steps(
    A: FloatArray,
    BA: FloatArray,
    D: FloatArray,
    C: FloatArray,
    BC: FloatArray,
    L: int,
    epochs: int,
    steps: int,
) -> tuple[float, float, float]:
    """:func:`reset_run`'s sums over epochs, with j = 0…``steps`` steps left. The crash chance is summed
    from the crashes themselves, w_E(j) = Σ_{c<j} C(c) + Σ_{c<j} D(c) w_{E−1}(j − c), not taken as one
    minus the chance of none, so that a small one keeps its digits."""
    S = steps
    j = np.arange(S + 1, dtype=np.float64)

    def padded(x: FloatArray) -> FloatArray:
        return np.concatenate((x, np.zeros(max(S + 1 - x.size, 0))))[: S + 1]

    A, BA, D, C, BC = (padded(x) for x in (A, BA, D, C, BC))

    def before(x: FloatArray) -> FloatArray:  # Σ_{c<j} x(c)
        return np.concatenate(([0.0], np.cumsum(x)[:-1]))

    def after(x: FloatArray) -> FloatArray:  # Σ_{c<j} D(c) x(j − c)
        if not x.any():  # the first epoch: nothing after it
            return np.zeros(S + 1)
        shifted = x.copy()
        shifted[0] = 0.0
        return np.convolve(D, shifted)[: S + 1]

    crashes, steps_done, cost = before(C), before((D + C) * j), before(D * L + BC)
    w, e, b = np.zeros(S + 1), np.zeros(S + 1), np.zeros(S + 1)
    for _ in range(epochs):
        w, e, b = crashes + after(w), j * A + steps_done + after(e), BA + cost + after(b)
        e[0] = b[0] = 0.0
    return float(min(max(w[S], 0.0), 1.0)), float(e[S]), float(b[S])


def replace_pass(a: float, B: int, ratio: float) -> tuple[float, float]:
    """SkyRL's replace: (P(a batch of B groups passes), E[good groups | it passes]); it passes when
    ``len(good) > B × ratio``, as Python compares an int with that float."""
    st = _stats()
    least = math.floor(B * ratio) + 1
    if least > B:
        return 0.0, math.nan
    passes = float(st.binom.sf(least - 1, B, a))
    if passes <= 0:
        return 0.0, math.nan
    good = B * a * float(st.binom.sf(least - 2, B - 1, a)) if B > 1 else 1.0
    return passes, good / passes


def streamed(a: float, T: int, rounds_of: int | None) -> dict[str, float]:
    """A streamed step (slime, AReaL) at keep chance ``a``: groups completed until T are accepted (T / a
    expected), and with slime's rounds of ``rounds_of`` prompts the rounds submitted and the groups left in
    flight, aborted (``O ⌈(T + R) / O⌉ − (T + R)``, R ~ NB(T, a) the rejections)."""
    done = T / a
    if rounds_of is None:
        return {"completed": done, "rounds": math.nan, "submitted": done, "aborted": 0.0}
    st, size = _stats(), rounds_of
    rounds, j = 0.0, 0
    while True:  # E⌈(T + R) / O⌉ = Σ_j P(T + R > j O)
        term = 1.0 if j * size < T else float(st.nbinom.sf(j * size - T, T, a))
        rounds += term
        j += 1
        if term < TAIL and j * size > done:
            break
    submitted = rounds * size
    return {"completed": done, "rounds": rounds, "submitted": submitted, "aborted": submitted - done}

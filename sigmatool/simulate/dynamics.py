"""One rule's training dynamics in the controlled run: groups drawn, θ moved, the trace recorded.

A step draws ``k ~ Binomial(G, p)`` per prompt and moves θ = logit(p) by ``lr · gain``: ``σ`` (GRPO), ``σ²``
(Dr. GRPO), or ``σ`` of the first non-silent group of up to T draws (DAPO), ``σ = sqrt(k (G − k)) / G``.
G is one size for every prompt, or one per prompt (0: the prompt is not trained), possibly re-made from the
current p every few steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from sigmatool import kernels
from sigmatool.errors import UsageError
from sigmatool.kernels import Quantity, passk
from sigmatool.kernels.grader import Grader
from sigmatool.options.analyses import SIMULATE_MAX_G

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

EXTREME = (0.1, 0.9)
QUARTILES = 4
# Gradient shares are measured from about this many simulated steps per method (200 per prompt at 6,000
# prompts), at least SHARE_MIN_DRAWS per prompt: enough for ~0.1-point precision at a fraction of the run.
SHARE_DRAWS = 1_200_000
SHARE_MIN_DRAWS = 4
SHARE_MAX_DRAWS = 200

TRACE_COLUMNS = (
    "step",
    "method",
    "observed_silent",
    "predicted_silent",
    "mean_p",
    *(f"q{i + 1}_mean_p" for i in range(QUARTILES)),
    "samples_drawn",
)

Sizes = int | IntArray  # one G for every prompt, or one per prompt (0: the prompt is not trained)
GroupSizes = int | ArrayLike | Callable[[FloatArray], ArrayLike]
Replan = tuple[int, Callable[[FloatArray], Sizes]]


def _sigmoid(theta: FloatArray) -> FloatArray:
    # θ only grows from logit(0.02), so exp(−θ) cannot overflow.
    return np.asarray(1.0 / (1.0 + np.exp(-theta)), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class Credit:
    """What a group of G answers with c right gives each update rule, under pass@``K`` credit
    (docs/passk.md): GRPO's weight Δσ²/σ_K and Dr. GRPO's Δσ² (σ and σ² at K = 1), looked up by c."""

    K: int = 1
    _tables: dict[int, tuple[FloatArray, FloatArray]] = field(default_factory=dict, repr=False)

    def tables(self, G: int) -> tuple[FloatArray, FloatArray]:
        """GRPO's and Dr. GRPO's weight of each c = 0…G (built once per G)."""
        if G not in self._tables:
            c = np.arange(G + 1)
            if self.K == 1:
                sigma = kernels.group_std(c, G) if G > 0 else np.zeros(1)
                self._tables[G] = (sigma, sigma * sigma)
            else:
                self._tables[G] = (passk.grpo_at(c, G, self.K), passk.drgrpo_at(c, G, self.K))
        return self._tables[G]

    def draw(self, G: Sizes, p: FloatArray, rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
        """GRPO's and Dr. GRPO's weight of one group per prompt (0 for G = 0)."""
        # A prompt with G = 0 draws nothing: numpy's binomial returns 0 for n = 0 without using the stream.
        k = rng.binomial(G, p)
        if isinstance(G, int):
            grpo, drgrpo = self.tables(G)
            return np.asarray(grpo[k], dtype=np.float64), np.asarray(drgrpo[k], dtype=np.float64)
        out = (np.zeros(p.size), np.zeros(p.size))
        for g in np.unique(G).tolist():
            at = G == g
            grpo, drgrpo = self.tables(int(g))
            out[0][at], out[1][at] = grpo[k[at]], drgrpo[k[at]]
        return out

    def silent(self, p: FloatArray, G: Sizes) -> FloatArray:
        """P_silent(p, G) under the credit."""
        if self.K == 1:
            return kernels.silent_probability(p, G)
        return Quantity.SILENT.plugin(p, G, grader=Grader(pass_at=self.K))

    def expected(self, method: str, p: FloatArray, G: Sizes) -> FloatArray:
        """E[weight](p, G) of the rule (DAPO: GRPO's, its silent redraws weighing nothing)."""
        if self.K == 1:
            return (
                kernels.expected_sigma_squared(p, G) if method == "drgrpo" else kernels.expected_sigma(p, G)
            )
        quantity = Quantity.SIGMA_SQUARED if method == "drgrpo" else Quantity.SIGMA
        return quantity.plugin(p, G, grader=Grader(pass_at=self.K))


def gain(
    method: str, p: FloatArray, G: Sizes, cap: int, credit: Credit, rng: np.random.Generator
) -> tuple[FloatArray, IntArray, float]:
    """One step: θ-gain per prompt, groups drawn per prompt, share of first groups that were silent.

    With per-prompt sizes, prompts at G = 0 are not trained: no group, no gain, not in the silent share.
    """
    trained = np.ones(p.size, dtype=np.bool_) if isinstance(G, int) else G > 0
    first, squared = credit.draw(G, p, rng)
    silent = (first == 0.0) & trained
    draws = trained.astype(np.int64)
    if isinstance(G, int):
        observed = float(silent.mean())
    else:
        observed = float(silent.sum() / trained.sum()) if trained.any() else math.nan
    if method == "drgrpo":
        return (first * first if credit.K == 1 else squared), draws, observed
    step_gain = first
    if method == "dapo":
        step_gain = first.copy()
        redo = np.flatnonzero(silent)
        for _ in range(cap - 1):
            if redo.size == 0:
                break
            again = credit.draw(G if isinstance(G, int) else G[redo], p[redo], rng)[0]
            draws[redo] += 1
            step_gain[redo] = again
            redo = redo[again == 0.0]
    return step_gain, draws, observed


def _predicted_silent(p: FloatArray, G: Sizes, credit: Credit) -> float:
    """Mean P_silent(p, G) over the prompts that draw a group."""
    if isinstance(G, int):
        return float(credit.silent(p, G).mean())
    trained = G > 0
    return float(credit.silent(p[trained], G[trained]).mean()) if trained.any() else math.nan


def r_squared(observed: FloatArray, predicted: FloatArray) -> float:
    """1 − SSE/SST of the predictions; NaN when the observations do not vary."""
    sst = float(((observed - observed.mean()) ** 2).sum())
    if sst == 0.0:
        return math.nan
    return 1.0 - float(((observed - predicted) ** 2).sum()) / sst


def quartile_means(p: FloatArray, quartile: IntArray) -> FloatArray:
    """Mean p within each start-difficulty quartile."""
    sizes = np.bincount(quartile, minlength=QUARTILES).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.bincount(quartile, weights=p, minlength=QUARTILES) / sizes, dtype=np.float64)


def quartiles(p0: FloatArray) -> IntArray:
    """Start-difficulty quartile of each prompt, 0 = the lowest start p (hardest); ties by position."""
    quartile = np.empty(p0.size, dtype=np.int64)
    for index, members in enumerate(np.array_split(np.argsort(p0, kind="stable"), QUARTILES)):
        quartile[members] = index
    return quartile


def _share_draws(prompts: int) -> int:
    return min(SHARE_MAX_DRAWS, max(SHARE_MIN_DRAWS, math.ceil(SHARE_DRAWS / prompts)))


def extreme_shares(
    method: str, p0: FloatArray, G: Sizes, cap: int, credit: Credit, rng: np.random.Generator
) -> tuple[float, float]:
    """(measured, predicted) share of the gradient per group drawn that goes to extreme start prompts.

    Measured: each prompt's simulated gain, averaged over repeated steps at its start p, per group drawn.
    DAPO's step costs ``(1 − P^T) / (1 − P)`` groups in expectation (exact; dividing by the realized count
    instead would bias the ratio when there are few steps per prompt). Predicted: E[σ] (GRPO, and DAPO,
    whose silent redraws weigh nothing) or E[σ²] (Dr. GRPO) at G. Prompts at G = 0 weigh nothing.
    """
    extreme = (p0 < EXTREME[0]) | (p0 > EXTREME[1])
    repeats = _share_draws(p0.size)
    gain_sum = np.zeros(p0.size)
    for _ in range(repeats):
        gain_sum += gain(method, p0, G, cap, credit, rng)[0]
    trained = np.ones(p0.size, dtype=np.bool_) if isinstance(G, int) else G > 0
    size = G if isinstance(G, int) else np.maximum(G, credit.K)
    cost = kernels.dapo_expected_draws(credit.silent(p0, size), cap) if method == "dapo" else 1.0
    measured = gain_sum / repeats / cost
    expected = credit.expected(method, p0, size)
    expected = np.where(trained, expected, 0.0)
    return float(measured[extreme].sum() / measured.sum()), float(expected[extreme].sum() / expected.sum())


def run(
    method: str,
    p0: FloatArray,
    *,
    G: Sizes,
    steps: int,
    lr: float,
    cap: int,
    credit: Credit,
    quartile: IntArray,
    rng: np.random.Generator,
    on_step: Callable[[], None] | None,
    replan: Replan | None = None,
) -> pl.DataFrame:
    """Train every prompt with one rule; one trace row per step (``replan``: new sizes every k steps)."""
    theta = np.log(p0) - np.log1p(-p0)
    p = p0
    records: list[tuple[object, ...]] = []
    for step in range(1, steps + 1):
        if replan is not None and step > 1 and (step - 1) % replan[0] == 0:
            G = replan[1](p)
        predicted = _predicted_silent(p, G, credit)
        step_gain, draws, observed = gain(method, p, G, cap, credit, rng)
        theta += lr * step_gain
        p = _sigmoid(theta)
        means = quartile_means(p, quartile).tolist()
        records.append((step, method, observed, predicted, float(p.mean()), *means, int((G * draws).sum())))
        if on_step is not None:
            on_step()
    schema = dict.fromkeys(TRACE_COLUMNS, pl.Float64) | {
        "step": pl.Int64,
        "method": pl.String,
        "samples_drawn": pl.Int64,
    }
    return pl.DataFrame(records, schema=schema, orient="row")


def group_sizes(group_size: GroupSizes, p0: FloatArray) -> Sizes:
    """One G for all, or a checked per-prompt integer array (0, or 2 … SIMULATE_MAX_G)."""
    if isinstance(group_size, int | np.integer):
        return int(group_size)
    values = group_size(p0) if callable(group_size) else group_size
    sizes = np.asarray(values)
    if sizes.shape != p0.shape or not np.issubdtype(sizes.dtype, np.integer):
        raise UsageError(f"per-prompt group sizes must be {p0.size:,} integers, one per prompt")
    bad = (sizes != 0) & ((sizes < 2) | (sizes > SIMULATE_MAX_G))
    if bad.any():
        raise UsageError(f"per-prompt group sizes must be 0 (not trained) or 2 … {SIMULATE_MAX_G:,}")
    return np.asarray(sizes, dtype=np.int64)


def replan_rule(group_size: GroupSizes, every: int | None) -> Replan | None:
    """(k, sizes of p) to make the per-prompt sizes again every k steps, or None."""
    if every is None:
        return None
    if not callable(group_size) or every < 1:
        raise UsageError("replan_every needs group_size as a function of p, and a number of steps ≥ 1")
    return every, lambda p: group_sizes(group_size, p)

"""The controlled training run of docs/theory.md §6: one-parameter Bernoulli-logit prompts trained by each rule.

Each prompt is a policy ``p = sigmoid(θ)`` whose score is ``y − p``, so ``s̄₊ − s̄₋ = 1`` and one step moves θ
by exactly ``lr · gain``: ``σ`` (GRPO), ``σ²`` (Dr. GRPO), or ``σ`` of the first non-silent group out of up to
T draws (DAPO; 0 when all T are silent), with ``σ = sqrt(k (G − k)) / G`` and ``k ~ Binomial(G, p)``.

Randomness: ``np.random.SeedSequence(seed)`` is spawned into fixed streams (PCG64): one samples the start
population, one per method runs it, one per method measures its gradient shares. A method's stream does
not depend on which other methods run, so ``--methods dapo`` reproduces the DAPO rows of the full run.

Trace columns (one row per step and method, step-major): ``step``, ``method``, ``observed_silent`` (share
of the step's first groups that were silent), ``predicted_silent`` (mean ``P_silent(p, G)`` at the p before
the draw), ``mean_p``, ``q1_mean_p`` … ``q4_mean_p`` (after the step; quartiles of the start p, q1 the
hardest), ``samples_drawn`` (answers sampled in this step: G × groups drawn).

Summary columns (one row per method): ``method``, ``silent_r2``, ``start_mean_p``, ``final_mean_p``,
``start_hardest_quartile_mean_p``, ``final_hardest_quartile_mean_p``, ``samples_drawn`` (whole run),
``samples_vs_grpo``, ``extreme_share_measured``, ``extreme_share_predicted``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from sigmatool import kernels
from sigmatool.errors import DataError, UsageError
from sigmatool.options import METHODS, SimulateOptions
from sigmatool.options.analyses import SIMULATE_MAX_G
from sigmatool.render import View

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

LABELS = {"grpo": "GRPO", "drgrpo": "Dr. GRPO", "dapo": "DAPO"}
BETA_MIX = "beta-mix"
BETA_SHAPES = ((0.7, 1.6), (1.6, 0.7))
CLIP = (0.02, 0.98)
EXTREME = (0.1, 0.9)
QUARTILES = 4
# Gradient shares are measured from about this many simulated steps per method (200 per prompt at 6,000
# prompts), at least SHARE_MIN_DRAWS per prompt: enough for ~0.1-point precision at a fraction of the run.
SHARE_DRAWS = 1_200_000
SHARE_MIN_DRAWS = 4
SHARE_MAX_DRAWS = 200
# Prompt-steps that take roughly a second: the CLI shows a progress bar above this much work.
PROGRESS_WORK = 5_000_000

TRACE_COLUMNS = (
    "step",
    "method",
    "observed_silent",
    "predicted_silent",
    "mean_p",
    *(f"q{i + 1}_mean_p" for i in range(QUARTILES)),
    "samples_drawn",
)
SUMMARY_COLUMNS = (
    "method",
    "silent_r2",
    "start_mean_p",
    "final_mean_p",
    "start_hardest_quartile_mean_p",
    "final_hardest_quartile_mean_p",
    "samples_drawn",
    "samples_vs_grpo",
    "extreme_share_measured",
    "extreme_share_predicted",
)

Start = pl.DataFrame | str | ArrayLike
Sizes = int | IntArray  # one G for every prompt, or one per prompt (0: the prompt is not trained)
GroupSizes = int | ArrayLike | Callable[[FloatArray], ArrayLike]


# --------------------------------------------------------------------------------------------- options


# --------------------------------------------------------------------------------------------- start


@dataclass(frozen=True)
class _Pool:
    """Distinct interior pass rates and how many prompts stand behind each (summed weight)."""

    values: FloatArray
    weights: FloatArray


def _pool(start: pl.DataFrame | ArrayLike) -> _Pool:
    if isinstance(start, pl.DataFrame):
        if not {"p", "prompts"} <= set(start.columns):
            raise UsageError(
                "the start histogram needs columns 'p' and 'prompts' (as sigmatool.histogram returns)"
            )
        values = start["p"].cast(pl.Float64).to_numpy()
        weights = start["prompts"].cast(pl.Float64).to_numpy()
    else:
        values = np.asarray(start, dtype=np.float64).ravel()
        if not np.all((values >= 0) & (values <= 1)):
            raise DataError("start pass rates must be numbers in [0, 1]")
        weights = np.ones_like(values)
    interior = (values > 0) & (values < 1) & (weights > 0)
    if not interior.any():
        raise DataError(
            "--init: no interior pass rates (0 < p̂ < 1): every prompt is never or always solved, "
            "so none can learn"
        )
    return _Pool(values[interior], weights[interior])


def start_population(
    start: Start, prompts: int, rng: np.random.Generator, notes: list[str] | None = None
) -> FloatArray:
    """``prompts`` start pass rates, clipped to [0.02, 0.98].

    From data: interior p̂ drawn without replacement when the data has enough prompts and whole-number
    weights (a weight w stands for w prompts), else with replacement, with probability ∝ weight.
    ``"beta-mix"``: the paper's fallback, an equal mixture of Beta(0.7, 1.6) and Beta(1.6, 0.7).
    """
    notes = notes if notes is not None else []
    if isinstance(start, str) and start == BETA_MIX:
        first = rng.random(prompts) < 0.5
        (a1, b1), (a2, b2) = BETA_SHAPES
        p = rng.beta(np.where(first, a1, a2), np.where(first, b1, b2))
        notes.append(
            f"start: {prompts:,} prompts from the equal mixture of Beta({a1}, {b1}) and Beta({a2}, {b2}), "
            f"clipped to [{CLIP[0]}, {CLIP[1]}]"
        )
        return np.asarray(np.clip(p, *CLIP), dtype=np.float64)
    if isinstance(start, str):
        raise UsageError(
            f"the start population is a histogram, an array of pass rates or {BETA_MIX!r}, not {start!r}"
        )
    pool = _pool(start)
    total = float(pool.weights.sum())
    whole = bool(np.all(pool.weights == np.round(pool.weights)))
    if whole and total >= prompts:
        counts = rng.multivariate_hypergeometric(pool.weights.astype(np.int64), prompts)
        how = "without replacement"
    else:
        counts = rng.multinomial(prompts, pool.weights / total)
        how = "with replacement (fractional weights)" if not whole else "with replacement (too few prompts)"
    notes.append(
        f"start: {prompts:,} prompts drawn {how} from {f'{int(total):,}' if whole else f'{total:,.6g}'} "
        "interior prompts (0 < p̂ < 1), "
        f"clipped to [{CLIP[0]}, {CLIP[1]}]"
    )
    return np.asarray(np.clip(np.repeat(pool.values, counts), *CLIP), dtype=np.float64)


# --------------------------------------------------------------------------------------------- dynamics


def _sigmoid(theta: FloatArray) -> FloatArray:
    # θ only grows from logit(0.02), so exp(−θ) cannot overflow.
    return np.asarray(1.0 / (1.0 + np.exp(-theta)), dtype=np.float64)


def _draw(G: Sizes, p: FloatArray, sigma: FloatArray | None, rng: np.random.Generator) -> FloatArray:
    """σ of one group per prompt: a lookup at one G, the formula at per-prompt G (0 for G = 0)."""
    if isinstance(G, int):
        assert sigma is not None
        return np.asarray(sigma[rng.binomial(G, p)], dtype=np.float64)
    # A prompt with G = 0 draws nothing: numpy's binomial returns 0 for n = 0 without using the stream.
    k = rng.binomial(G, p)
    return np.asarray(np.sqrt((k * (G - k)).astype(np.float64)) / np.maximum(G, 1), dtype=np.float64)


def _gain(
    method: str, p: FloatArray, G: Sizes, cap: int, sigma: FloatArray | None, rng: np.random.Generator
) -> tuple[FloatArray, IntArray, float]:
    """One step: θ-gain per prompt, groups drawn per prompt, share of first groups that were silent.

    With per-prompt sizes, prompts at G = 0 are not trained: no group, no gain, not in the silent share.
    """
    trained = np.ones(p.size, dtype=np.bool_) if isinstance(G, int) else G > 0
    first = _draw(G, p, sigma, rng)
    silent = (first == 0.0) & trained
    draws = trained.astype(np.int64)
    if isinstance(G, int):
        observed = float(silent.mean())
    else:
        observed = float(silent.sum() / trained.sum()) if trained.any() else math.nan
    if method == "drgrpo":
        return first * first, draws, observed
    gain = first
    if method == "dapo":
        gain = first.copy()
        redo = np.flatnonzero(silent)
        for _ in range(cap - 1):
            if redo.size == 0:
                break
            again = _draw(G if isinstance(G, int) else G[redo], p[redo], sigma, rng)
            draws[redo] += 1
            gain[redo] = again
            redo = redo[again == 0.0]
    return gain, draws, observed


def _predicted_silent(p: FloatArray, G: Sizes) -> float:
    """Mean P_silent(p, G) over the prompts that draw a group."""
    if isinstance(G, int):
        return float(kernels.silent_probability(p, G).mean())
    trained = G > 0
    return float(kernels.silent_probability(p[trained], G[trained]).mean()) if trained.any() else math.nan


def _r_squared(observed: FloatArray, predicted: FloatArray) -> float:
    """1 − SSE/SST of the predictions; NaN when the observations do not vary."""
    sst = float(((observed - observed.mean()) ** 2).sum())
    if sst == 0.0:
        return math.nan
    return 1.0 - float(((observed - predicted) ** 2).sum()) / sst


def _quartile_means(p: FloatArray, quartile: IntArray, sizes: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.bincount(quartile, weights=p, minlength=QUARTILES) / sizes, dtype=np.float64)


def _quartiles(p0: FloatArray) -> IntArray:
    """Start-difficulty quartile of each prompt, 0 = the lowest start p (hardest); ties by position."""
    quartile = np.empty(p0.size, dtype=np.int64)
    for index, members in enumerate(np.array_split(np.argsort(p0, kind="stable"), QUARTILES)):
        quartile[members] = index
    return quartile


def _share_draws(prompts: int) -> int:
    return min(SHARE_MAX_DRAWS, max(SHARE_MIN_DRAWS, math.ceil(SHARE_DRAWS / prompts)))


def _extreme_shares(
    method: str, p0: FloatArray, G: Sizes, cap: int, sigma: FloatArray | None, rng: np.random.Generator
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
        gain_sum += _gain(method, p0, G, cap, sigma, rng)[0]
    trained = np.ones(p0.size, dtype=np.bool_) if isinstance(G, int) else G > 0
    size = G if isinstance(G, int) else np.maximum(G, 1)
    cost = kernels.dapo_expected_draws(kernels.silent_probability(p0, size), cap) if method == "dapo" else 1.0
    measured = gain_sum / repeats / cost
    expected = (
        kernels.expected_sigma_squared(p0, size) if method == "drgrpo" else kernels.expected_sigma(p0, size)
    )
    expected = np.where(trained, expected, 0.0)
    return float(measured[extreme].sum() / measured.sum()), float(expected[extreme].sum() / expected.sum())


def _run(
    method: str,
    p0: FloatArray,
    *,
    G: Sizes,
    steps: int,
    lr: float,
    cap: int,
    sigma: FloatArray | None,
    quartile: IntArray,
    rng: np.random.Generator,
    on_step: Callable[[], None] | None,
    replan: tuple[int, Callable[[FloatArray], Sizes]] | None = None,
) -> pl.DataFrame:
    """Train every prompt with one rule; one trace row per step (``replan``: new sizes every k steps)."""
    sizes = np.bincount(quartile, minlength=QUARTILES).astype(np.float64)
    theta = np.log(p0) - np.log1p(-p0)
    p = p0
    records: list[tuple[object, ...]] = []
    for step in range(1, steps + 1):
        if replan is not None and step > 1 and (step - 1) % replan[0] == 0:
            G = replan[1](p)
        predicted = _predicted_silent(p, G)
        gain, draws, observed = _gain(method, p, G, cap, sigma, rng)
        theta += lr * gain
        p = _sigmoid(theta)
        quartiles = _quartile_means(p, quartile, sizes).tolist()
        records.append(
            (step, method, observed, predicted, float(p.mean()), *quartiles, int((G * draws).sum()))
        )
        if on_step is not None:
            on_step()
    schema = dict.fromkeys(TRACE_COLUMNS, pl.Float64) | {
        "step": pl.Int64,
        "method": pl.String,
        "samples_drawn": pl.Int64,
    }
    return pl.DataFrame(records, schema=schema, orient="row")


def _group_sizes(group_size: GroupSizes, p0: FloatArray) -> Sizes:
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


def _replan(group_size: GroupSizes, every: int | None) -> tuple[int, Callable[[FloatArray], Sizes]] | None:
    """(k, sizes of p) to make the per-prompt sizes again every k steps, or None."""
    if every is None:
        return None
    if not callable(group_size) or every < 1:
        raise UsageError("replan_every needs group_size as a function of p, and a number of steps ≥ 1")
    return every, lambda p: _group_sizes(group_size, p)


def simulate(
    start: Start,
    *,
    prompts: int = 6000,
    group_size: GroupSizes = 8,
    steps: int = 150,
    lr: float = 0.5,
    seed: int = 7,
    methods: str | Sequence[str] = METHODS,
    dapo_cap: int = 4,
    notes: list[str] | None = None,
    on_step: Callable[[], None] | None = None,
    replan_every: int | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Run docs/theory.md §6's controlled training run; returns (trace, summary) frames.

    ``start``: a histogram frame (``p``, ``prompts``, as :func:`sigmatool.histogram` returns), an array of
    pass rates, or ``"beta-mix"``. ``notes`` collects lines for
    people (how the start was drawn); ``on_step`` is called after each simulated step (a progress bar).
    ``group_size``: one G, or one per prompt (0 = not trained) as an array or as a function of the start p;
    with ``replan_every`` = k that function is called again on the current p every k steps.
    """
    # Per-prompt sizes are checked against the start population below.
    one_size = int(group_size) if isinstance(group_size, int | np.integer) else 2
    chosen = SimulateOptions(
        prompts,
        one_size,
        steps,
        lr,
        seed,
        tuple(methods) if not isinstance(methods, str) else (methods,),
        dapo_cap,
    ).methods
    streams = [
        np.random.Generator(np.random.PCG64(s))
        for s in np.random.SeedSequence(seed).spawn(1 + 2 * len(METHODS))
    ]
    p0 = start_population(start, prompts, streams[0], notes)
    G, replan = _group_sizes(group_size, p0), _replan(group_size, replan_every)
    sigma = kernels.group_std(np.arange(G + 1), G) if isinstance(G, int) else None
    quartile = _quartiles(p0)
    start_q1 = float(
        _quartile_means(p0, quartile, np.bincount(quartile, minlength=QUARTILES).astype(np.float64))[0]
    )
    traces, rows = [], []
    grpo_samples = int(np.sum(G)) * (prompts if isinstance(G, int) else 1) * steps
    for method in chosen:
        index = METHODS.index(method)
        trace = _run(
            method,
            p0,
            G=G,
            steps=steps,
            lr=lr,
            cap=dapo_cap,
            sigma=sigma,
            quartile=quartile,
            rng=streams[1 + index],
            on_step=on_step,
            replan=replan,
        )
        traces.append(trace)
        measured, predicted = _extreme_shares(
            method, p0, G, dapo_cap, sigma, streams[1 + len(METHODS) + index]
        )
        samples = int(trace["samples_drawn"].sum())
        rows.append(
            {
                "method": method,
                "silent_r2": _r_squared(
                    trace["observed_silent"].to_numpy(), trace["predicted_silent"].to_numpy()
                ),
                "start_mean_p": float(p0.mean()),
                "final_mean_p": float(trace["mean_p"][-1]),
                "start_hardest_quartile_mean_p": start_q1,
                "final_hardest_quartile_mean_p": trace["q1_mean_p"][-1],
                "samples_drawn": samples,
                "samples_vs_grpo": samples / grpo_samples,
                "extreme_share_measured": measured,
                "extreme_share_predicted": predicted,
            }
        )
    order = {m: i for i, m in enumerate(METHODS)}
    trace_frame = (
        pl.concat(traces)
        .with_columns(pl.col("method").replace_strict(order, return_dtype=pl.Int64).alias("__order"))
        .sort(["step", "__order"])
        .select(TRACE_COLUMNS)
    )
    schema = {"method": pl.String, "samples_drawn": pl.Int64}
    summary = pl.DataFrame(rows, schema_overrides=schema, infer_schema_length=None).select(SUMMARY_COLUMNS)
    return trace_frame, summary


def headline(summary: pl.DataFrame, *, steps: int, group_size: int, prompts: int) -> str:
    """One plain sentence for the summary table."""
    rows = {r["method"]: r for r in summary.iter_rows(named=True)}
    reached = ", ".join(
        f"{r['final_hardest_quartile_mean_p']:.2f} ({LABELS[m]})"
        for m, r in rows.items()
        if r["final_hardest_quartile_mean_p"] is not None
    )
    parts = [f"After {steps:,} steps at G={group_size} on {prompts:,} prompts: hardest quartile p={reached}"]
    if "dapo" in rows:
        parts.append(f"DAPO drew {rows['dapo']['samples_vs_grpo']:.2f}× GRPO's samples")
    r2 = [
        r["silent_r2"] for r in rows.values() if r["silent_r2"] is not None and math.isfinite(r["silent_r2"])
    ]
    if r2:
        parts.append(f"silent R² ≥ {math.floor(min(r2) * 1000) / 1000:.3f}")
    return "; ".join(parts) + "."


def view(summary: pl.DataFrame, options: SimulateOptions) -> View:
    """The table view of the summary (or trace): headline, percentages, short headers."""
    return View(
        headline=headline(
            summary, steps=options.steps, group_size=options.group_size, prompts=options.prompts
        ),
        percent=("observed_silent", "predicted_silent", "extreme_share_measured", "extreme_share_predicted"),
        labels={
            "observed_silent": "silent\nobserved",
            "predicted_silent": "silent\npredicted",
            "q1_mean_p": "q1 mean p\n(hardest)",
            "silent_r2": "silent R²",
            "start_hardest_quartile_mean_p": "hardest ¼\nstart p",
            "final_hardest_quartile_mean_p": "hardest ¼\nfinal p",
            "samples_vs_grpo": "samples\n÷ GRPO's",
            "extreme_share_measured": "extreme share\nmeasured",
            "extreme_share_predicted": "extreme share\npredicted",
        },
    )

"""The start population of the controlled run: interior pass rates drawn from data, or the paper's mixture."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from sigmatool.errors import DataError, UsageError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

BETA_MIX = "beta-mix"
BETA_SHAPES = ((0.7, 1.6), (1.6, 0.7))
CLIP = (0.02, 0.98)

Start = pl.DataFrame | str | ArrayLike


@dataclass(frozen=True)
class Pool:
    """Distinct interior pass rates, how many prompts stand behind each, and their planned G if any."""

    values: FloatArray
    weights: FloatArray
    sizes: IntArray | None = None


def pool(start: pl.DataFrame | ArrayLike) -> Pool:
    """The interior values of a histogram frame (``p``, ``prompts``, optionally ``group_size``) or an array."""
    sizes = None
    if isinstance(start, pl.DataFrame):
        if not {"p", "prompts"} <= set(start.columns):
            raise UsageError(
                "the start histogram needs columns 'p' and 'prompts' (as sigmatool.histogram returns)"
            )
        values = start["p"].cast(pl.Float64).to_numpy()
        weights = start["prompts"].cast(pl.Float64).to_numpy()
        if "group_size" in start.columns:
            sizes = start["group_size"].cast(pl.Int64).to_numpy()
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
    return Pool(values[interior], weights[interior], None if sizes is None else sizes[interior])


def _beta_mix(prompts: int, rng: np.random.Generator, notes: list[str]) -> FloatArray:
    first = rng.random(prompts) < 0.5
    (a1, b1), (a2, b2) = BETA_SHAPES
    p = rng.beta(np.where(first, a1, a2), np.where(first, b1, b2))
    notes.append(
        f"start: {prompts:,} prompts from the equal mixture of Beta({a1}, {b1}) and Beta({a2}, {b2}), "
        f"clipped to [{CLIP[0]}, {CLIP[1]}]"
    )
    return np.asarray(np.clip(p, *CLIP), dtype=np.float64)


def start_sample(
    start: Start, prompts: int, rng: np.random.Generator, notes: list[str] | None = None
) -> tuple[FloatArray, IntArray | None]:
    """``prompts`` start pass rates clipped to [0.02, 0.98], and each one's G when the start carries sizes.

    From data: interior p̂ drawn without replacement when the data has enough prompts and whole-number
    weights (a weight w stands for w prompts), else with replacement, with probability ∝ weight; a start
    frame with a ``group_size`` column (a plan) gives each drawn prompt its planned G.
    ``"beta-mix"``: the paper's fallback, an equal mixture of Beta(0.7, 1.6) and Beta(1.6, 0.7).
    """
    notes = notes if notes is not None else []
    if isinstance(start, str) and start == BETA_MIX:
        return _beta_mix(prompts, rng, notes), None
    if isinstance(start, str):
        raise UsageError(
            f"the start population is a histogram, an array of pass rates or {BETA_MIX!r}, not {start!r}"
        )
    found = pool(start)
    total = float(found.weights.sum())
    whole = bool(np.all(found.weights == np.round(found.weights)))
    if whole and total >= prompts:
        counts = rng.multivariate_hypergeometric(found.weights.astype(np.int64), prompts)
        how = "without replacement"
    else:
        counts = rng.multinomial(prompts, found.weights / total)
        how = "with replacement (fractional weights)" if not whole else "with replacement (too few prompts)"
    notes.append(
        f"start: {prompts:,} prompts drawn {how} from {f'{int(total):,}' if whole else f'{total:,.6g}'} "
        "interior prompts (0 < p̂ < 1), "
        f"clipped to [{CLIP[0]}, {CLIP[1]}]"
    )
    p0 = np.asarray(np.clip(np.repeat(found.values, counts), *CLIP), dtype=np.float64)
    return p0, None if found.sizes is None else np.repeat(found.sizes, counts)


def start_population(
    start: Start, prompts: int, rng: np.random.Generator, notes: list[str] | None = None
) -> FloatArray:
    """``prompts`` start pass rates, clipped to [0.02, 0.98] (see :func:`start_sample`)."""
    return start_sample(start, prompts, rng, notes)[0]

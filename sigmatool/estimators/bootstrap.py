"""Bootstrap intervals for a summary's rates (``--ci``): prompts redrawn with replacement, as multinomial
weights on the histogram's rows within each ``--by`` group, and the whole summary recomputed per replicate.

A replicate changes only how many prompts each distinct value holds, so it costs one summary of the histogram
(and, under a fitted prior, one refit per group: the interval then includes the uncertainty of the prior).
The interval is the percentile one: the (1 − level)/2 and (1 + level)/2 quantiles of the replicates' values.
It covers the sampling of prompts for the chosen estimator, not the choice of estimator (docs/prior.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.estimators.value import Valuation
from sigmatool.load.scan import free_name
from sigmatool.options import BeyondOptions, by_columns
from sigmatool.progress import bar
from sigmatool.segments import group_index

FloatArray = NDArray[np.float64]
Summary = Callable[[pl.DataFrame, Sequence[str], Valuation], pl.DataFrame]

# Replicates are drawn, refitted and summarised together, as many as hold this many histogram rows in all
# (the stacked histogram of one chunk).
CHUNK_CELLS = 1 << 20


def replicate_weights(hist: pl.DataFrame, by: Sequence[str], seed: int) -> Iterator[FloatArray]:
    """Replicate weights for the histogram's rows, each --by group's prompts redrawn at once
    (:func:`sigmatool.prior.bootstrap.prompt_draws`); with several pass-rate columns, each column's rows as
    its own run draws them, from the same seed."""
    from sigmatool.prior.bootstrap import prompt_draws

    if by_columns(by):
        column, labels = group_index(hist, by[:1])
        parts = [np.flatnonzero(column == c) for c in range(labels.height)]
        return _together(parts, [replicate_weights(hist[rows], by[1:], seed) for rows in parts], hist.height)
    index, _ = group_index(hist, by)
    return prompt_draws(hist["prompts"].cast(pl.Float64).to_numpy(), index.astype(np.int64), seed)


def _together(
    parts: Sequence[NDArray[np.int64]], draws: Sequence[Iterator[FloatArray]], size: int
) -> Iterator[FloatArray]:
    """Each replicate of every part's draws, put in its rows."""
    while True:
        out = np.zeros(size, dtype=np.float64)
        for rows, draw in zip(parts, draws, strict=True):
            out[rows] = next(draw)
        yield out


def interval_columns(
    hist: pl.DataFrame,
    by: Sequence[str],
    val: Valuation,
    summary: Summary,
    columns: Sequence[str],
    *,
    level: float,
    replicates: int,
    seed: int,
) -> pl.DataFrame:
    """``{column}_ci_lo`` and ``{column}_ci_hi`` per row of ``summary(hist, by, val)``; null where a rate is.

    A chunk of replicates is summarised at once: their histograms stacked, each replicate's rows keyed by its
    number as one more --by column, and valued under its own refitted priors (:meth:`Valuation.stacked`)."""
    draw = replicate_weights(hist, by, seed)
    key = free_name("__replicate", hist.columns)
    chunk = max(1, min(replicates, CHUNK_CELLS // max(hist.height, 1)))
    fits = len(val.priors) if val.posterior and val.prior.kind != "fixed" else 0
    values = []
    with bar("--ci: bootstrap replicates (refits, then summaries)", replicates * (fits + 1)) as advance:
        for start in range(0, replicates, chunk):
            weights = np.asarray([next(draw) for _ in range(min(chunk, replicates - start))])
            stacked = val.stacked(val.refit_all(weights, advance), key)
            table = summary(_stack(hist, weights, key), [*by, key], stacked)
            rows = table.sort(key, maintain_order=True).select(columns).cast(pl.Float64).to_numpy()
            values.append(rows.reshape(weights.shape[0], -1, len(columns)))
            advance(weights.shape[0])
    stack = np.concatenate(values)  # replicates × rows × columns
    with warnings.catch_warnings():
        # A rate that is undefined in every replicate (an empty segment) stays null, silently.
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanquantile(stack, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0)
    out = {}
    for j, column in enumerate(columns):
        out[f"{column}_ci_lo"] = lo[:, j]
        out[f"{column}_ci_hi"] = hi[:, j]
    return pl.DataFrame(out).fill_nan(None)


def _stack(hist: pl.DataFrame, weights: FloatArray, key: str) -> pl.DataFrame:
    """The histogram once per replicate (rows of ``weights``), with its prompts and its number ``key``."""
    count, height = weights.shape
    rows = hist[np.tile(np.arange(height), count)]
    return rows.with_columns(
        pl.Series("prompts", weights.ravel()).cast(hist.schema["prompts"]),
        pl.Series(key, np.repeat(np.arange(count, dtype=np.int64), height)),
    )


def beyond_intervals(
    hist: pl.DataFrame,
    by: Sequence[str],
    val: Valuation,
    summary: Summary,
    columns: Sequence[str],
    beyond: BeyondOptions,
) -> pl.DataFrame:
    """:func:`interval_columns` at the level, replicates and seed of ``--ci``, ``--replicates``, ``--seed``."""
    assert beyond.ci is not None
    return interval_columns(
        hist,
        by,
        val,
        summary,
        columns,
        level=beyond.ci,
        replicates=beyond.replicate_count,
        seed=beyond.seed_value,
    )

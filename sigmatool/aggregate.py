"""Shared pieces of the analyses: group sizes, difficulty bins, weighted means over distinct values."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import polars as pl

from sigmatool.errors import UsageError

INF = math.inf


def parse_group_sizes(values: Iterable[str], *, allow_inf: bool = False, option: str = "--G") -> list[float]:
    """``["4,8", "16"]`` → ``[4, 8, 16]`` in the order given, without repeats; ``inf`` where allowed."""
    sizes: list[float] = []
    for value in values:
        for part in str(value).split(","):
            text = part.strip().lower()
            if not text:
                continue
            if text in ("inf", "infinity", "∞"):
                if not allow_inf:
                    raise UsageError(f"{option}: 'inf' is not allowed here; give whole numbers ≥ 1")
                size = INF
            else:
                try:
                    size = float(int(text))
                except ValueError:
                    hint = ", or inf" if allow_inf else ""
                    raise UsageError(
                        f"{option}: {part.strip()!r} is not a group size (whole numbers ≥ 1{hint})"
                    ) from None
                if size < 1:
                    raise UsageError(f"{option}: the group size must be at least 1, not {int(size)}")
            if size not in sizes:
                sizes.append(size)
    if not sizes:
        raise UsageError(f"{option}: give at least one group size")
    return sizes


def g_label(G: float) -> str:
    return "inf" if math.isinf(G) else str(int(G))


def bin_columns(bins: int, p: str = "p") -> list[pl.Expr]:
    """Equal-width bins of p on [0, 1], the last one closed: ``bin``, ``p_lo``, ``p_hi``."""
    index = (pl.col(p) * bins).floor().cast(pl.Int64).clip(0, bins - 1)
    return [
        index.alias("bin"),
        (index.cast(pl.Float64) / bins).alias("p_lo"),
        ((index + 1).cast(pl.Float64) / bins).alias("p_hi"),
    ]


def all_bins(bins: int, keys: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every bin (so that empty ones show up too), crossed with the distinct ``keys`` rows if given."""
    frame = pl.DataFrame({"bin": list(range(bins))}, schema={"bin": pl.Int64}).with_columns(
        (pl.col("bin").cast(pl.Float64) / bins).alias("p_lo"),
        ((pl.col("bin") + 1).cast(pl.Float64) / bins).alias("p_hi"),
    )
    return keys.join(frame, how="cross") if keys is not None and keys.width else frame


def weighted_mean(value: str, weight: str = "prompts") -> pl.Expr:
    """Σ w·x / Σ w over the group; null for an empty group."""
    total = pl.col(weight).sum()
    return (
        pl.when(total > 0).then((pl.col(value) * pl.col(weight)).sum() / total).otherwise(None).alias(value)
    )


def order(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    return frame.sort(list(keys), maintain_order=True) if keys else frame

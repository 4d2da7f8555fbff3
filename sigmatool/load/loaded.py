"""What an analysis reads, in one type: a histogram of distinct values, or the rows themselves, streamed.

:data:`Values` is either a histogram (a DataFrame: the ``--by`` columns, ``p``, with counts ``k`` and ``n``,
and ``prompts``, the prompts that share the value) or, when most rows hold a value of their own, the usable
rows (a LazyFrame: the ``--by`` columns, ``p`` and ``prompts``, each row's weight), read batch by batch.
Both weigh by ``prompts``. Only this module and the cell sums (:mod:`sigmatool.sums`) tell them apart; an
analysis asks what it needs: the histogram when there is one (bounds, priors and intervals need counts,
which streamed rows never have), or the prompts counted per value for a figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

Values = pl.DataFrame | pl.LazyFrame


def distinct(values: Values) -> pl.DataFrame | None:
    """The histogram of distinct values, or None when the rows stream."""
    return None if isinstance(values, pl.LazyFrame) else values


def counted(values: Values, by: Sequence[str]) -> pl.DataFrame:
    """A histogram (``by``, ``p``, ``prompts``): the histogram itself, or the streamed rows counted per value
    (a second read of them)."""
    if isinstance(values, pl.DataFrame):
        return values
    rows = values.group_by([*by, "p"]).agg(pl.col("prompts").sum())
    return rows.collect(engine="streaming").sort([*by, "p"])

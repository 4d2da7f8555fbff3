"""Answers under several pass@K credits (``--pass-at 1,2,4``): each K's answer made by the same analysis on the
run's variant of that credit (:meth:`sigmatool.run.Run.passing`), stacked into one with a ``pass_at`` column
after ``G`` (docs/passk.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar, cast

import polars as pl

CREDIT = "pass_at"


class Stackable(Protocol):
    """An answer with a summary, its overall rows, a headline, notes and warnings (a frozen dataclass)."""

    @property
    def summary(self) -> pl.DataFrame: ...
    @property
    def overall(self) -> pl.DataFrame: ...
    @property
    def headline(self) -> str: ...
    @property
    def notes(self) -> tuple[str, ...]: ...
    @property
    def trust(self) -> tuple[str, ...]: ...


R = TypeVar("R", bound=Stackable)


def with_credit(frame: pl.DataFrame, K: int) -> pl.DataFrame:
    """``frame`` with a ``pass_at`` column = K right after its ``G`` column (first when it has none)."""
    column = pl.lit(K, dtype=pl.Int64).alias(CREDIT)
    names = frame.columns
    at = names.index("G") + 1 if "G" in names else 0
    return frame.with_columns(column).select([*names[:at], CREDIT, *names[at:]])


def stacked(answers: Sequence[R], credits: Sequence[int]) -> R:
    """One answer from one per K: frames stacked with their ``pass_at``, each headline led by ``pass@K:``,
    notes and warnings each said once (the first answer's figure and sparkline, made only for one K)."""
    first = answers[0]
    pairs = list(zip(answers, credits, strict=True))
    return cast(
        R,
        replace(
            cast(Any, first),
            summary=pl.concat([with_credit(a.summary, K) for a, K in pairs], how="diagonal_relaxed"),
            overall=pl.concat([with_credit(a.overall, K) for a, K in pairs], how="diagonal_relaxed"),
            headline="\n".join(f"pass@{K}: {a.headline}" for a, K in pairs),
            notes=tuple(dict.fromkeys(n for a in answers for n in a.notes)),
            trust=tuple(dict.fromkeys(f"pass@{K}: {w}" for a, K in pairs for w in a.trust)),
        ),
    )

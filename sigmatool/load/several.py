"""Several pass-rate columns of one input, each read apart and put together in long form.

``--col a --col b`` (or a glob of names, ``--col 'pass_rate_*'``) reads each column as a dataset of its own
(:attr:`sigmatool.load.Dataset.parts`): its own form, 1/n grid, checks and notes, exactly as a run with that
one ``--col``. Every frame an analysis reads (the histogram, the streamed rows, the per-prompt rows) is then
the parts' frames stacked, each row keyed by a ``column`` column that names its pass-rate column; the
analyses break their summaries down by it as by a ``--by`` column, which it precedes.
"""

from __future__ import annotations

import fnmatch
import glob
from collections.abc import Sequence
from typing import TypeVar

import polars as pl

from sigmatool.errors import DataError
from sigmatool.options import COLUMN

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def resolve(specs: Sequence[str], names: Sequence[str], label: str) -> tuple[str, ...]:
    """The columns that ``specs`` name, in order and each once: a name as given (a missing one is named
    with the others when it is read), a glob by the columns it matches, which must be some.

    >>> resolve(["b", "rate_*"], ["id", "rate_x", "b", "rate_y"], "data.csv")
    ('b', 'rate_x', 'rate_y')
    """
    found: list[str] = []
    for spec in specs:
        if spec in names or not glob.has_magic(spec):
            found.append(spec)
            continue
        matched = [name for name in names if fnmatch.fnmatchcase(name, spec)]
        if not matched:
            raise DataError(f"{label}: --col {spec!r} matches no column; the columns are: {', '.join(names)}")
        found += matched
    return tuple(dict.fromkeys(found))


def _named(spec: str, names: Sequence[str]) -> list[str]:
    """The columns a --col names among ``names``: itself, a dotted path into one of them, or a glob's
    matches (none when it names none)."""
    if spec in names or (not glob.has_magic(spec) and spec.split(".")[0] in names):
        return [spec]
    return [name for name in names if glob.has_magic(spec) and fnmatch.fnmatchcase(name, spec)]


def present(specs: Sequence[str], names: Sequence[str], label: str) -> tuple[str, ...]:
    """The columns among ``names`` that ``specs`` name (the report: each --col applies to the inputs that
    have it); an input with none of them is an error.

    >>> present(["llama8b_solve_rate", "pass_*"], ["id", "pass_rate"], "b.csv")
    ('pass_rate',)
    """
    found = tuple(dict.fromkeys(c for spec in specs for c in _named(spec, names)))
    if not found:
        raise DataError(
            f"{label} has none of the --col columns ({', '.join(specs)}); its columns are: {', '.join(names)}"
        )
    return found


def unmatched(specs: Sequence[str], found: Sequence[str]) -> list[str]:
    """The --col names and globs that name none of the columns ``found`` in any input."""
    return [spec for spec in specs if not _named(spec, found)]


def keyed(frame: Frame, column: str) -> Frame:
    """``frame`` with the ``column`` key (the pass-rate column's name) as its first column."""
    return frame.select(pl.lit(column, dtype=pl.String).alias(COLUMN), pl.all())


def stacked(frames: Sequence[Frame], columns: Sequence[str]) -> Frame:
    """The parts' frames, each keyed by its pass-rate column, one under the other (a float32 rate of one
    column and a float64 rate of another become float64). A column of bare pass rates beside columns read
    as counts has k and n null, as a bare rate beside counts in one column has (docs/prior.md)."""
    keyed_frames = [keyed(f, c) for f, c in zip(frames, columns, strict=True)]
    names = [f.collect_schema().names() for f in keyed_frames]
    if all(n == names[0] for n in names):
        return pl.concat(keyed_frames, how="vertical_relaxed")
    order = list(dict.fromkeys(c for n in sorted(names, key=len, reverse=True) for c in n))
    return pl.concat(keyed_frames, how="diagonal_relaxed").select(order)


def part_notes(column: str, notes: Sequence[str]) -> list[str]:
    """A part's notes, each naming its column (prefixed with it when it does not already)."""
    return [note if repr(column) in note else f"--col {column}: {note}" for note in notes]

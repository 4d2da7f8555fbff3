"""Per-cell sums over many rows, accurate to about one rounding, whatever the order or batching of the rows.

A cell is a (``--by`` group, bin) pair. Each row's values are added to its cell's accumulator in extended
precision (numpy's ``longdouble``: 64 mantissa bits on x86-64), batch after batch, in row order, and the
sums are rounded to float64 once at the end: a sum of 10^7 positive terms then differs from the correctly
rounded one by about one unit in the last place, however the rows were batched (where ``longdouble`` is
plain double, as on some ARM platforms, the sums are ordinary sequential ones). A lone cell adds each
batch by numpy's pairwise sum first. Histogram rows and streamed rows go through the same code, so both
give the same numbers to that precision; a histogram, whose rows come in a fixed order, gives the same
bits however its input was ordered.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import NamedTuple, TypeVar

import numpy as np
import polars as pl
from numpy.typing import NDArray

from sigmatool.frames import sort_by
from sigmatool.options import by_columns, over_all_prompts
from sigmatool.segments import bin_index

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
LongArray = NDArray[np.longdouble]
T = TypeVar("T")
# Rows per batch of streamed rows.
BATCH_ROWS = 1 << 20


class Sums(NamedTuple):
    """Sums of each column (rows) per cell, over every ``--by`` group per bin, and over everything; each
    rounded to float64 once from the extended-precision accumulators."""

    cells: FloatArray  # width × cells, in cell order
    by_bin: FloatArray  # width × bins
    total: FloatArray  # width × 1


class Summaries(NamedTuple):
    """An analysis' summary as asked (``table``), and the same over all prompts, with no --by and no bins
    (``overall``), both from the sums of one pass over the rows."""

    table: pl.DataFrame
    overall: pl.DataFrame


def add(acc: LongArray, cell: IntArray, columns: Sequence[FloatArray]) -> None:
    """Add each column's values to ``acc`` (columns × cells), each row's to its cell's, in row order."""
    if not cell.size:
        return
    for row, column in zip(acc, columns, strict=True):
        if acc.shape[1] == 1:
            row[0] += np.sum(column)  # numpy's pairwise sum: a few roundings of the batch's sum at most
        else:
            np.add.at(row, cell, np.asarray(column, dtype=np.longdouble))


class Cells:
    """The cells of a summary: ``--by`` groups (labels in a fixed order) crossed with ``bins`` bins of p."""

    def __init__(
        self,
        labels: pl.DataFrame,
        by: Sequence[str],
        bins: int | None,
        part: Callable[[FloatArray], IntArray] | None = None,
    ) -> None:
        """``bins`` parts of p per group, each p's part its bin, or ``part(p)`` (in [0, bins)) if given."""
        self.by = list(by)
        self.labels = sort_by(labels, self.by, nulls_last=False) if self.by else pl.DataFrame()
        self.bins = bins or 1
        self.binned = bins is not None
        self.part = part or (lambda p: bin_index(p, self.bins))
        self.groups = max(self.labels.height, 1)
        self.count = self.groups * self.bins
        self._index = self.labels.with_row_index("__group") if self.by else None

    def of(self, frame: pl.DataFrame) -> IntArray:
        """Each row's cell (the frame has the --by columns and ``p``)."""
        cell = np.zeros(frame.height, dtype=np.int64)
        if self._index is not None:
            found = frame.select(self.by).join(
                self._index, on=self.by, how="left", nulls_equal=True, maintain_order="left"
            )
            cell = found["__group"].cast(pl.Int64).to_numpy() * self.bins
        if self.binned:
            cell = cell + self.part(frame["p"].cast(pl.Float64).to_numpy())
        return np.asarray(cell, dtype=np.int64)

    def sums(
        self,
        values: pl.DataFrame | pl.LazyFrame,
        width: int,
        columns: Callable[[pl.DataFrame], list[FloatArray]],
    ) -> Sums:
        """Sums over every row of ``values`` (see :func:`batches`) of what ``columns(batch)`` says each row
        adds (``width`` arrays), per cell, per bin and in all."""
        acc = np.zeros((width, self.count), dtype=np.longdouble)
        celled = ((batch, self.of(batch)) for batch in batches(values))
        for batch, cell in ahead(celled) if isinstance(values, pl.LazyFrame) else celled:
            add(acc, cell, columns(batch))
        by_bin = acc.reshape(width, self.groups, self.bins).sum(axis=1)
        total = by_bin.sum(axis=1, keepdims=True)
        return Sums(*(np.asarray(a, dtype=np.float64) for a in (acc, by_bin, total)))

    def lead(self, sums: FloatArray, bins: bool = False) -> tuple[pl.DataFrame, FloatArray]:
        """The labels of the first --by column alone, and ``sums`` (width × cells) added up over the other
        --by columns (and, unless ``bins``, over the bins): each pass-rate column's sums when several lead."""
        labels = self.labels.select(self.by[0]).unique(maintain_order=True)
        kept = self.bins if bins else 1
        per_group = sums.reshape(len(sums), self.groups, self.bins, order="C")
        per_group = per_group if bins else per_group.sum(axis=2, keepdims=True)
        index = labels.with_row_index("__lead")
        lead = self.labels.join(index, on=self.by[0], how="left", nulls_equal=True, maintain_order="left")
        out = np.zeros((len(sums), labels.height, kept))
        for row_out, row_in in zip(out, per_group, strict=True):
            np.add.at(row_out, lead["__lead"].cast(pl.Int64).to_numpy(), row_in)
        return labels, out.reshape(len(sums), labels.height * kept)

    def frame(self) -> pl.DataFrame:
        """One row per cell, in cell order: the --by columns, then ``bin`` when binned."""
        parts = []
        if self.by:
            parts.append(self.labels.select(pl.all().gather(np.repeat(np.arange(self.groups), self.bins))))
        if self.binned:
            parts.append(pl.DataFrame({"bin": np.tile(np.arange(self.bins, dtype=np.int64), self.groups)}))
        return pl.concat(parts, how="horizontal") if parts else pl.DataFrame({"__cell": [0]}).drop("__cell")


# A summary's rows from its cells' sums: (the cells' --by labels, the --by columns, sums width × cells, whether
# the cells are bins of p within each group).
Make = Callable[[pl.DataFrame, Sequence[str], FloatArray, bool], pl.DataFrame]


def summaries(
    cells: Cells,
    values: pl.DataFrame | pl.LazyFrame,
    width: int,
    columns: Callable[[pl.DataFrame], list[FloatArray]],
    make: Make,
    *,
    segments: bool = False,
) -> Summaries:
    """The skeleton of a summary (``silent``, ``budget``): one pass over the rows adding ``columns`` per cell,
    then the summary as asked and the same over all prompts, each made from those sums by ``make``. The
    overall keeps the bins with ``segments`` (budget's segments of p); else it is one row per G. With several
    pass-rate columns (the ``column`` key leads), "all prompts" are each column's."""
    sums = cells.sums(values, width, columns)
    table = make(cells.labels, cells.by, sums.cells, cells.binned)
    if over_all_prompts(cells.by) and (segments or not cells.binned):
        return Summaries(table, table)
    if by_columns(cells.by):
        lead, lead_sums = cells.lead(sums.cells, bins=segments)
        return Summaries(table, make(lead, cells.by[:1], lead_sums, segments))
    return Summaries(table, make(pl.DataFrame(), (), sums.by_bin if segments else sums.total, segments))


def labels_of(values: pl.DataFrame | pl.LazyFrame, by: Sequence[str]) -> pl.DataFrame:
    """The distinct --by labels of a histogram or of streamed rows (one pass over the rows)."""
    if not by:
        return pl.DataFrame()
    if isinstance(values, pl.DataFrame):
        return values.select(by).unique(maintain_order=True)  # several --col: in the order given
    return values.select(by).unique(maintain_order=True).collect(engine="streaming")


def ahead(items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """``items`` in their order, made on a thread of their own up to ``depth`` ahead of their use: polars reads
    and joins, and numpy computes, without holding Python's lock, so the next batch of streamed rows is read
    and placed in its cells while this one is summed. An error in the making is raised here."""
    made: queue.Queue[tuple[bool, object]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def make() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                made.put((True, item))
            made.put((False, None))
        except BaseException as exc:  # handed to the consumer, which raises it
            made.put((False, exc))

    thread = threading.Thread(target=make, name="sigmatool-batches", daemon=True)
    thread.start()
    try:
        while True:
            more, item = made.get()
            if not more:
                if isinstance(item, BaseException):
                    raise item
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        while thread.is_alive():  # a maker blocked on a full queue must see the stop
            with contextlib.suppress(queue.Empty):
                made.get(timeout=0.05)


def batches(values: pl.DataFrame | pl.LazyFrame) -> Iterator[pl.DataFrame]:
    """The rows of a histogram (one batch) or of streamed rows, batch by batch; both weigh by ``prompts``."""
    if isinstance(values, pl.DataFrame):
        yield values
        return
    yield from values.collect_batches(chunk_size=BATCH_ROWS)


# A column of values in [0, 1] summed in one polars pass, in any order, to far below one rounding: each value
# scaled by 2^26 (exact) splits into its whole part, a whole number below 2^26 (2^26 itself at 1), and the
# rest, in [0, 1), both exact. The whole parts' float64 sum is exact in any order for up to 2^27 rows (134
# million; every partial sum is a whole number below 2^53); the rests' float sum errs by a few units in its
# last place, which weigh about 2^-27 / mean units in the last place of the total (1e-7 of one at a mean of
# 0.15). So the total, rounded once, is the correctly rounded sum of the values (barring a near tie),
# whatever the order or batching of the rows, when their mean is well above 2^-26 (1.5e-8); values all
# below that have no whole part, and their sum is the rests' float sum, within a rounding or so.
FIXED_POINT = 2.0**26
EXACT_ROWS = 2**27

Stage = tuple[tuple[str, pl.Expr], ...]


def fixed_point_stages(columns: Sequence[tuple[str, pl.Expr]]) -> tuple[Stage, ...]:
    """The parts of each named expression (values in [0, 1]) that :func:`fixed_point_sums` adds up, as two
    steps of named columns, the second made from the first: applied one ``with_columns`` per step, every
    part is computed once per row (polars shares no subexpression between aggregates: one expression per
    sum computes each value twice). Both steps are exact: a scaling by a power of two, a floor."""
    scaled = tuple((f"{name}.scaled", expr * FIXED_POINT) for name, expr in columns)
    high = tuple((f"{name}.high", pl.col(f"{name}.scaled").floor()) for name, _ in columns)
    return scaled, high


def with_stages(frame: pl.LazyFrame, stages: Sequence[Stage]) -> pl.LazyFrame:
    """``frame`` with the named columns of each step added in turn (one ``with_columns`` per step)."""
    for stage in stages:
        frame = frame.with_columns(expr.alias(name) for name, expr in stage)
    return frame


def fixed_point_sums(column: str) -> list[pl.Expr]:
    """Two aggregates of ``column``'s parts (made by :func:`fixed_point_stages`) from which
    :func:`fixed_point_total` gives its sum; named ``{column}.high`` and ``{column}.rest``."""
    high = pl.col(f"{column}.high")
    return [high.sum(), (pl.col(f"{column}.scaled") - high).sum().alias(f"{column}.rest")]


def fixed_point_total(totals: pl.DataFrame, column: str) -> Fraction:
    """The sum of ``column`` from the aggregates of :func:`fixed_point_sums` (a one-row frame of them), as an
    exact fraction of what they hold (see :data:`FIXED_POINT`; beyond :data:`EXACT_ROWS` rows the whole
    parts are float64 sums of whole numbers).

    >>> import math
    >>> x = [0.1, 0.2, 0.3, 1e-20]
    >>> parts = with_stages(pl.LazyFrame({"x": x}), fixed_point_stages([("x", pl.col("x"))]))
    >>> totals = parts.select(fixed_point_sums("x")).collect()
    >>> float(fixed_point_total(totals, "x")) == math.fsum(x)
    True
    """
    high, rest = (Fraction(float(totals[f"{column}.{part}"].item())) for part in ("high", "rest"))
    return (high + rest) / Fraction(int(FIXED_POINT))

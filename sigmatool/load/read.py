"""The walk put together: an input's options to its :class:`Dataset`, then its histogram or its rows.

The top of the descent (the face of :mod:`sigmatool.load` lists the steps below it): :func:`dataset` opens
the sources, :func:`load` resolves the value column and scans each source into one lazy frame of raw columns
(rollout rows graded and pooled per prompt, a rate with ``--samples N`` read as counts), and
:func:`histogram`, :func:`rows` and :func:`per_prompt_frame` read its values; with several pass-rate columns
each is read as with that one ``--col`` and the parts' frames are stacked (:mod:`sigmatool.load.several`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Literal

import polars as pl

from sigmatool.errors import DataError, UsageError, first_line
from sigmatool.load import several
from sigmatool.load.dataset import Dataset, counts_from_rate, rate_value
from sigmatool.load.dataset import per_prompt_frame as prompt_rows
from sigmatool.load.histogram import Histogram, Progress
from sigmatool.load.histogram import histogram as one_histogram
from sigmatool.load.logs import reward_flags, rollout_frame, rollout_rows, trainer_dataset
from sigmatool.load.names import BAD, INTERNAL, RAW_P, REWARD, RIGHT, USABLE
from sigmatool.load.rows import Rows, Totals
from sigmatool.load.rows import rows as one_rows
from sigmatool.load.rows import streams as one_streams
from sigmatool.load.scan import project
from sigmatool.load.schema import value_column
from sigmatool.load.sources import Source, opened, sample_options, source_schema
from sigmatool.load.validate import usable_expr
from sigmatool.options import InputOptions


def load(
    options: InputOptions,
    sources: Sequence[Source],
    notes: Sequence[str] = (),
    text_cols: Sequence[str] = (),
    originals: bool = False,
) -> Dataset:
    """Scan the sources and check their columns; reads schemas only, never the data.

    ``originals``: the frame keeps every column of the input, unchanged and in order (a column missing from
    one of several files is null there), with the internal columns after them.
    """
    if options.cols:
        return _several(options, sources, notes, text_cols, originals)
    opts, form, found = value_column(options, sources)
    frames = []
    for source in sources:
        frame, source_notes = project(source, opts, text_cols, form, originals)
        frames.append(frame)
        found += source_notes
    how: Literal["vertical_relaxed", "diagonal_relaxed"] = (
        "diagonal_relaxed" if originals else "vertical_relaxed"
    )
    try:
        frame = pl.concat(frames, how=how) if len(frames) > 1 else frames[0]
        schema = frame.collect_schema()
    except pl.exceptions.PolarsError as exc:
        raise DataError(f"the input files do not share one schema: {first_line(exc)}") from exc
    kind = "counts" if opts.k_col else form.form
    columns = tuple(c for c in schema.names() if c not in INTERNAL) if originals else ()
    ds = Dataset(frame, tuple(sources), opts, (*notes, *found), tuple(text_cols), form=kind, columns=columns)
    if opts.rollouts:
        right, usable = reward_flags(opts, schema[REWARD])
        bad = pl.col(REWARD).is_not_null() & ~pl.col(USABLE)
        raw = (
            rollout_rows(frame, opts)
            .with_columns(right.alias(RIGHT), usable.alias(USABLE))
            .with_columns(bad.alias(BAD))
        )
        return replace(ds, raw=raw, frame=rollout_frame(raw, opts.by), form="rollouts")
    ds = replace(ds, rate_dtype=schema.get(RAW_P))
    if opts.samples is not None and not form.counted:
        ds = replace(ds, frame=frame.with_columns(counts_from_rate(opts, rate_value(ds))))
    return ds


def _several(
    options: InputOptions,
    sources: Sequence[Source],
    notes: Sequence[str],
    text_cols: Sequence[str],
    originals: bool,
) -> Dataset:
    """A dataset of several pass-rate columns: one part per column, each loaded as with that one --col
    (see :mod:`sigmatool.load.several`)."""
    first = sources[0]
    names = several.resolve(options.cols, source_schema(first)[0].names(), first.label)
    parts = tuple(
        load(replace(options, col=name, cols=()), sources, (), text_cols, originals) for name in names
    )
    return Dataset(
        pl.LazyFrame(),
        tuple(sources),
        replace(options, cols=names),
        tuple(notes),
        tuple(text_cols),
        form="columns",
        columns=parts[0].columns,
        parts=parts,
    )


def _notes(ds: Dataset, parts: Sequence[Histogram | Rows]) -> tuple[str, ...]:
    """The input's notes, then each part's own, naming its column; each once."""
    found = [n for part in parts for n in several.part_notes(part.dataset.options.col or "", part.notes)]
    return tuple(dict.fromkeys([*ds.notes, *found]))


def reload(ds: Dataset, text_cols: tuple[str, ...]) -> Dataset:
    """The same input read again, with ``text_cols`` as text."""
    return load(ds.options, ds.sources, ds.notes, text_cols)


def histogram(ds: Dataset, on_rows: Progress | None = None) -> Histogram:
    """The checked histogram of distinct values (see :class:`Histogram`), in one streaming pass (one per
    pass-rate column when there are several)."""
    if not ds.parts:
        return one_histogram(ds, reload, on_rows)
    hists = [histogram(part, on_rows) for part in ds.parts]
    frame = several.stacked([h.frame for h in hists], ds.options.cols)
    read = replace(ds, parts=tuple(h.dataset for h in hists))
    reading = tuple(f"--col {h.dataset.options.col}: {line}" for h in hists for line in h.reading)
    return Histogram(frame, read, _notes(ds, hists), reading)


def with_originals(ds: Dataset) -> Dataset:
    """The same input (the same sources, so stdin's copy too) with every original column kept beside the
    internal ones; the names of the originals, in order, are ``columns``. Reads schemas only."""
    if ds.options.rollouts:
        raise UsageError("a rollout log has one row per answer, not per prompt: its rows cannot carry a plan")
    if ds.parts:
        return replace(ds, parts=tuple(with_originals(part) for part in ds.parts))
    found = load(ds.options, ds.sources, (), ds.text_cols, originals=True)
    if ds.grid is None:
        return found
    # Rates read on their grid keep that reading, row by row.
    return replace(found, grid=ds.grid, frame=found.frame.with_columns(ds.grid.counts(rate_value(found))))


def rows(ds: Dataset, on_rows: Progress | None = None, totals: Totals | None = None) -> Rows:
    """The checked usable rows, lazily, for data with many distinct pass rates (see :func:`streams`); with
    ``totals`` computed in the pass that checks them where that can be done (:class:`Rows`)."""
    if not ds.parts:
        return one_rows(ds, reload, on_rows, totals)
    parts = [rows(part, on_rows) for part in ds.parts]
    return Rows(several.stacked([r.frame for r in parts], ds.options.cols), ds, _notes(ds, parts))


def streams(ds: Dataset) -> bool:
    """Whether to stream the rows rather than build the histogram: many distinct plain pass rates (in every
    pass-rate column, when there are several); see :func:`sigmatool.load.rows.streams`."""
    return all(one_streams(part) for part in ds.parts or (ds,))


def per_prompt_frame(ds: Dataset) -> pl.LazyFrame:
    """Usable rows, one per prompt: ``--by`` columns, ``id``, ``p``, kernel keys, ``weight``; with several
    pass-rate columns, one per prompt and column, keyed by ``column`` first."""
    if ds.parts:
        return several.stacked([per_prompt_frame(part) for part in ds.parts], ds.options.cols)
    return prompt_rows(ds, usable_expr(ds))


@contextlib.contextmanager
def dataset(options: InputOptions) -> Iterator[Dataset]:
    """The input as a :class:`Dataset`, valid inside the ``with`` block (stdin's copy is removed after)."""
    if options.trainer is not None:
        yield trainer_dataset(options)
        return
    with opened(options) as (sources, notes):
        yield load(options, sources, notes)


@contextlib.contextmanager
def column_datasets(options: InputOptions) -> Iterator[list[Dataset]]:
    """One dataset per pass-rate column of ``options.cols`` that the input has, each as with that one --col
    (the report compares each column of each input); valid inside the ``with`` block."""
    with opened(options) as (sources, notes):
        first = sources[0]
        names = several.present(options.cols, source_schema(first)[0].names(), first.label)
        yield [load(replace(options, col=name, cols=()), sources, notes) for name in names]


def read_histogram(options: InputOptions, on_rows: Progress | None = None) -> Histogram:
    """Open, load and histogram in one call."""
    with dataset(options) as ds:
        return histogram(ds, on_rows)


def sample_histogram() -> Histogram:
    """The bundled Big-Math sample's histogram (215,608 prompts, 65 distinct pass rates)."""
    return read_histogram(sample_options())

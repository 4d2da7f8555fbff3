"""Any difficulty dataset into one checked, lazy shape: a histogram of distinct values, or the rows streamed.

Inputs are per-prompt pass rates, k-of-n counts, or raw rollout rows, in parquet, CSV/TSV, JSON (lines),
from files, globs, stdin or object stores. An input's walk descends, each module calling only those below it
(tests/test_house.py holds the order; docs/input.md says what each module does):

1. sources, where the bytes come from: :mod:`~sigmatool.load.names` (the raw columns' names),
   :mod:`~sigmatool.load.remote`, :mod:`~sigmatool.load.objects`, :mod:`~sigmatool.load.grouping` (notes on
   a log's prompt keys) and :mod:`~sigmatool.load.engine` (a log counted where it lives),
   :mod:`~sigmatool.load.sources`;
2. schema, which columns mean what: :mod:`~sigmatool.load.forms`, :mod:`~sigmatool.load.schema`;
3. scan, the lazy frame of raw columns: :mod:`~sigmatool.load.scan`;
4. values, raw columns into p, k, n and then the answer: :mod:`~sigmatool.load.dataset` (rates and counts),
   :mod:`~sigmatool.load.logs` (rollouts), :mod:`~sigmatool.load.integrity` (a log's groups),
   :mod:`~sigmatool.load.validate`, :mod:`~sigmatool.load.grid`,
   :mod:`~sigmatool.load.histogram` or :mod:`~sigmatool.load.rows`, :mod:`~sigmatool.load.loaded`,
   :mod:`~sigmatool.load.several`;
5. the walk put together, :mod:`~sigmatool.load.read`, and a run's log step by step, :mod:`~sigmatool.load.runs`.

Nothing is read until an analysis asks for the histogram (one streaming pass) or streams the rows.

    with dataset(InputOptions(paths=("rates.csv",))) as ds:
        hist = histogram(ds)
"""

from __future__ import annotations

from sigmatool.load.dataset import Dataset, id_notes
from sigmatool.load.histogram import Histogram, aggregate
from sigmatool.load.loaded import Values, counted
from sigmatool.load.logs import trainer_dataset, trainer_log
from sigmatool.load.read import (
    column_datasets,
    dataset,
    histogram,
    load,
    per_prompt_frame,
    read_histogram,
    rows,
    sample_histogram,
    streams,
    with_originals,
)
from sigmatool.load.rows import Rows, Totals
from sigmatool.load.sources import Source, bundled_sample, opened, parquet_rows, sample_options
from sigmatool.load.validate import usable_expr
from sigmatool.options import InputOptions

__all__ = [
    "Dataset", "Histogram", "InputOptions", "Rows", "Source", "Totals", "Values", "aggregate", "bundled_sample",
    "column_datasets", "counted", "dataset", "histogram", "id_notes", "load", "opened", "parquet_rows",
    "per_prompt_frame", "read_histogram", "rows", "sample_histogram", "sample_options", "streams",
    "trainer_dataset", "trainer_log", "usable_expr", "with_originals",
]  # fmt: skip

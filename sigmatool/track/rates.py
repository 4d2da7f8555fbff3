"""A table of per-prompt pass rates keyed like a trainer's prompts, for comparing a run against it.

The table is any sigmatool input (a rate column, ``k``/``n`` columns, "k/n" text, lists of grades; read and
checked as every command reads it). Its key column matches the run's prompts as follows: text is hashed
exactly as the trainer readers hash the prompt text they read, so it must be that text (verl: the dump's
``input``); whole numbers are taken as such hashes already, as ``track --export-pass-rates`` writes them.
With a ``step`` column the table gives one rate per step and prompt.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from sigmatool.errors import DataError
from sigmatool.load import Dataset, histogram, load, opened, per_prompt_frame
from sigmatool.load.sources import source_schema
from sigmatool.options import InputOptions

DEFAULT_KEY = "prompt"


def _table_options(schema: pl.Schema, label: str, key: str | None, col: str | None) -> InputOptions:
    """How to read the table: its key, its step column if any, counts k/n when present, else a rate."""
    key = key or DEFAULT_KEY
    if key not in schema:
        raise DataError(
            f"{label}: no prompt key column {key!r} (--pass-rates-key names it); "
            f"the columns are: {', '.join(schema.names())}"
        )
    counts = col is None and "k" in schema and "n" in schema
    if col is None and not counts and "p" in schema:
        col = "p"
    return InputOptions(
        col=col,
        k_col="k" if counts else None,
        n_col="n" if counts else None,
        id_col=key,
        by=("step",) if "step" in schema and key != "step" else (),
    )


def rate_table(path: str, key: str | None = None, col: str | None = None) -> tuple[pl.DataFrame, list[str]]:
    """``[step], prompt (UInt64), p`` or ``[step], prompt, k, n`` from the table at ``path``, and notes."""
    with opened(InputOptions(paths=(path,))) as (sources, found):
        schema = source_schema(sources[0])[0]
        options = replace(_table_options(schema, sources[0].label, key, col), paths=(path,))
        ds = load(options, sources, found)
        notes = list(histogram(ds).notes)
        rows = per_prompt_frame(ds).collect()
    return _keyed(rows, ds, options.id_col or DEFAULT_KEY, sources[0].label), notes


def _keyed(rows: pl.DataFrame, ds: Dataset, key: str, label: str) -> pl.DataFrame:
    ids = rows["id"]
    if ids.dtype == pl.String:
        prompt = ids.hash()
    elif ids.dtype.is_integer():
        if bool((ids < 0).any()):
            raise DataError(f"{label}: key column {key!r} has negative numbers, which are not prompt hashes")
        prompt = ids.cast(pl.UInt64)
    else:
        raise DataError(f"{label}: key column {key!r} holds {ids.dtype}, not prompt text or prompt hashes")
    values = ["k", "n"] if ds.has_counts else ["p"]
    return rows.select(*ds.by, prompt.alias("prompt"), *values)

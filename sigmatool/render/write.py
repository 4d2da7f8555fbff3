"""Writing a result: the output format resolved, then a frame written or per-row output streamed in it
(non-finite numbers as null, CSV and TSV refused for nested columns)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from sigmatool.errors import DataError, UsageError
from sigmatool.options import OutputFormat, OutputOptions
from sigmatool.render.files import target
from sigmatool.render.table import TABLE_ROWS, View, print_table

EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".txt": "table",
}
# What made a file (a schedule's record): under this key in a parquet file's metadata, else in a JSON file
# beside it named FILE + RECORD_SUFFIX (sigmatool.integrations.meta says what the record holds).
RECORD_KEY = "sigmatool"
RECORD_SUFFIX = ".sigmatool.json"
# Width of the table view when it does not go to a terminal (and COLUMNS is not set).
PLAIN_WIDTH = 100


def resolve_format(fmt: str, output: str | None, option: str = "-o") -> str:
    """The concrete format: explicit, else from the output file's extension, else table on a terminal."""
    if fmt not in OutputFormat.__members__:
        raise UsageError(f"--format: one of {', '.join(OutputFormat.__members__)}, not {fmt!r}")
    if fmt != "auto":
        return fmt
    if output and output != "-":
        suffix = Path(output).suffix.lower()
        if suffix not in EXTENSIONS:
            raise UsageError(
                f"{option} {output}: cannot tell the format from {suffix or 'no extension'!r}; "
                f"use one of {', '.join(EXTENSIONS)} or pass --format"
            )
        return EXTENSIONS[suffix]
    return "table" if sys.stdout.isatty() else "csv"


def table_width(handle: Any) -> int:
    """Columns for the table view: the terminal's, else $COLUMNS, else PLAIN_WIDTH."""
    if hasattr(handle, "isatty") and handle.isatty():
        return shutil.get_terminal_size((PLAIN_WIDTH, 24)).columns
    try:
        return max(20, int(os.environ["COLUMNS"]))
    except (KeyError, ValueError):
        return PLAIN_WIDTH


def _finite(frame: pl.DataFrame | pl.LazyFrame) -> Any:
    """Non-finite floats (an infinite expectation, an undefined ratio) become null in data formats."""
    schema = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    floats = [name for name, dtype in schema.items() if dtype.is_float()]
    return frame.with_columns(
        pl.when(pl.col(c).is_finite()).then(pl.col(c)).otherwise(None).alias(c) for c in floats
    )


def record_sidecar(path: str) -> str:
    """The file beside ``path`` that holds its record (CSV, TSV, JSON, JSON lines)."""
    return path + RECORD_SUFFIX


def _parquet_metadata(record: Mapping[str, Any] | None) -> dict[str, str] | None:
    return None if record is None else {RECORD_KEY: json.dumps(record, sort_keys=True)}


def write_record(output: str | None, fmt: str, record: Mapping[str, Any] | None, option: str = "-o") -> None:
    """Beside a CSV, TSV, JSON or JSON lines file, its record (atomically; parquet holds it inside; stdout
    and the table view have none)."""
    if record is None or not output or output == "-" or fmt in ("parquet", "table"):
        return
    if not os.path.isfile(output):  # a pipe or a device: nothing beside it
        return
    with target(record_sidecar(output), binary=False, option=option) as handle:
        json.dump(record, handle, indent=2, sort_keys=True)
        handle.write("\n")


def write_frame(
    df: pl.DataFrame,
    out: OutputOptions,
    view: View | None = None,
    option: str = "-o",
    record: Mapping[str, Any] | None = None,
) -> None:
    """Write a (small) result frame in the resolved format; ``option`` names the output in messages;
    ``record`` what made it (:func:`write_record`)."""
    fmt = resolve_format(out.fmt, out.output, option)
    _write_frame(df, out, fmt, view, option, record)
    write_record(out.output, fmt, record, option)


def _write_frame(
    df: pl.DataFrame,
    out: OutputOptions,
    fmt: str,
    view: View | None,
    option: str,
    record: Mapping[str, Any] | None,
) -> None:
    if fmt == "table":
        if view is not None and view.compact is not None and not out.full:
            view = replace(view, rows=view.compact, footer=[*view.footer, view.compact_note])
        with target(out.output, binary=False, option=option) as handle:
            print_table(df, view or View(), handle, table_width(handle))
        return
    data: pl.DataFrame = _finite(df)
    if fmt in ("csv", "tsv"):
        check_flat(data.schema, fmt, out.output or "-", option)
        separator = "\t" if fmt == "tsv" else ","
        if out.output in (None, "-") and not hasattr(sys.stdout, "buffer"):
            sys.stdout.write(data.write_csv(separator=separator))  # a stdout that takes text only
            return
        # Written as bytes straight to the output: a text copy of a large summary would double its memory.
        with target(out.output, binary=True, option=option) as handle:
            data.write_csv(handle, separator=separator)
        return
    with target(out.output, binary=fmt == "parquet", option=option) as handle:
        if fmt == "json":
            json.dump(data.to_dicts(), handle, indent=2, default=str)
            handle.write("\n")
        elif fmt == "jsonl":
            for row in data.iter_rows(named=True):
                handle.write(json.dumps(row, default=str) + "\n")
        else:
            data.write_parquet(handle, metadata=_parquet_metadata(record))


def check_flat(schema: pl.Schema, fmt: str, output: str, option: str = "-o") -> None:
    """A UsageError naming the columns that CSV or TSV cannot hold (lists, structs, arrays: an input's nested
    column carried to per-prompt output), and the formats that can; before anything is written."""
    nested = [f"{name!r} ({dtype})" for name, dtype in schema.items() if dtype.is_nested()]
    if nested:
        where = f"{fmt.upper()} output" if output == "-" else f"{option} {output}: {fmt.upper()}"
        raise UsageError(
            f"{where} cannot hold the nested column(s) {', '.join(nested[:3])}"
            f"{' and more' if len(nested) > 3 else ''} carried from the input; write parquet, json or jsonl "
            "(--format, or the file's extension), which hold them"
        )


def sink_frame(
    lf: pl.LazyFrame, out: OutputOptions, view: View | None = None, record: Mapping[str, Any] | None = None
) -> None:
    """Stream a (possibly huge) per-row frame to the output without materialising it; ``record`` what made
    it (:func:`write_record`)."""
    fmt = resolve_format(out.fmt, out.output)
    _sink_frame(lf, out, fmt, view, record)
    write_record(out.output, fmt, record)


def _sink_frame(
    lf: pl.LazyFrame, out: OutputOptions, fmt: str, view: View | None, record: Mapping[str, Any] | None
) -> None:
    if fmt == "table":
        preview = lf.head(TABLE_ROWS + 1).collect()
        view = view or View()
        if preview.height > TABLE_ROWS:
            view.footer = [
                *view.footer,
                f"first {TABLE_ROWS} rows shown; use --format csv or -o FILE for all",
            ]
        write_frame(preview.head(TABLE_ROWS), OutputOptions("table", out.output), view)
        return
    data: pl.LazyFrame = _finite(lf)
    if fmt in ("csv", "tsv"):
        check_flat(data.collect_schema(), fmt, out.output or "-", "-o")
    try:
        if fmt == "json":
            _sink_json_array(data, out.output)
            return
        with target(out.output, binary=fmt == "parquet") as handle:
            if fmt in ("csv", "tsv"):
                data.sink_csv(handle, separator="\t" if fmt == "tsv" else ",")
            elif fmt == "jsonl":
                data.sink_ndjson(handle)
            else:
                data.sink_parquet(handle, metadata=_parquet_metadata(record))
    except pl.exceptions.PolarsError as exc:
        if "Broken pipe" in str(exc):
            raise BrokenPipeError(str(exc)) from exc
        raise DataError(f"cannot read the input: {str(exc).strip().splitlines()[0]}") from exc


def write_any(
    frame: pl.DataFrame | pl.LazyFrame,
    out: OutputOptions,
    view: View | None = None,
    record: Mapping[str, Any] | None = None,
) -> None:
    """A result frame written (:func:`write_frame`), or per-row output streamed (:func:`sink_frame`), with
    the ``record`` of what made it."""
    if isinstance(frame, pl.LazyFrame):
        sink_frame(frame, out, view, record)
    else:
        write_frame(frame, out, view, record=record)


def _sink_json_array(lf: pl.LazyFrame, output: str | None) -> None:
    with target(output, binary=False) as handle:
        handle.write("[")
        first = True
        for batch in lf.collect_batches():
            for row in batch.iter_rows(named=True):
                handle.write(("\n  " if first else ",\n  ") + json.dumps(row, default=str))
                first = False
        handle.write("\n]\n")

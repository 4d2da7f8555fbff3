"""Output: the only module that branches on the output format.

Data formats (csv, tsv, json, jsonl, parquet) carry full precision and write non-finite numbers as null.
The table view is for people: it rounds, shows shares as percentages, draws bars and leads with a sentence.
Files are written atomically: to a temporary file beside the target, then renamed over it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import polars as pl
from rich.console import Console
from rich.table import Table
from rich.text import Text

from sigmatool.errors import DataError, UsageError

FORMATS: tuple[str, ...] = ("auto", "table", "csv", "tsv", "json", "jsonl", "parquet")
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
TABLE_PREVIEW_ROWS = 40
BAR_WIDTH = 12


@dataclass
class View:
    """What the table view adds to a frame: a headline, notes under the table, and how to show columns."""

    headline: str = ""
    footer: list[str] = field(default_factory=list)
    percent: Sequence[str] = ()
    bars: Sequence[str] = ()
    bar_full: float = 1.0  # the value that fills a whole bar; larger values are drawn full
    hide: Sequence[str] = ()
    title: str = ""
    labels: dict[str, str] = field(default_factory=dict)


def stderr_console() -> Console:
    """People's channel: notes, progress and errors. Colour only on a terminal and without NO_COLOR."""
    return Console(stderr=True, highlight=False, soft_wrap=True)


def resolve_format(fmt: str, output: str | None) -> str:
    """The concrete format: explicit, else from the output file's extension, else table on a terminal."""
    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if fmt != "auto":
        return fmt
    if output and output != "-":
        suffix = Path(output).suffix.lower()
        if suffix not in EXTENSIONS:
            raise UsageError(
                f"-o {output}: cannot tell the format from {suffix or 'no extension'!r}; "
                f"use one of {', '.join(EXTENSIONS)} or pass --format"
            )
        return EXTENSIONS[suffix]
    return "table" if sys.stdout.isatty() else "csv"


@contextlib.contextmanager
def _target(output: str | None, binary: bool) -> Iterator[IO[Any]]:
    """Yield a handle for the output: stdout, or a temporary file renamed over ``output`` on success."""
    if not output or output == "-":
        yield sys.stdout.buffer if binary else sys.stdout
        sys.stdout.flush()
        return
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise UsageError(f"-o {output}: the folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".sigmatool-", suffix=".part", dir=folder)
    try:
        handle = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
        with handle:
            yield handle
        os.replace(tmp, output)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _finite(frame: pl.DataFrame | pl.LazyFrame) -> Any:
    """Non-finite floats (an infinite expectation, an undefined ratio) become null in data formats."""
    schema = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    floats = [name for name, dtype in schema.items() if dtype.is_float()]
    return frame.with_columns(
        pl.when(pl.col(c).is_finite()).then(pl.col(c)).otherwise(None).alias(c) for c in floats
    )


def write_frame(df: pl.DataFrame, fmt: str, output: str | None, view: View | None = None) -> None:
    """Write a (small) result frame in the resolved format."""
    fmt = resolve_format(fmt, output)
    if fmt == "table":
        with _target(output, binary=False) as handle:
            print_table(df, view or View(), handle)
        return
    data: pl.DataFrame = _finite(df)
    with _target(output, binary=fmt == "parquet") as handle:
        if fmt in ("csv", "tsv"):
            handle.write(data.write_csv(separator="\t" if fmt == "tsv" else ","))
        elif fmt == "json":
            json.dump(data.to_dicts(), handle, indent=2, default=str)
            handle.write("\n")
        elif fmt == "jsonl":
            for row in data.iter_rows(named=True):
                handle.write(json.dumps(row, default=str) + "\n")
        else:
            data.write_parquet(handle)


def sink_frame(lf: pl.LazyFrame, fmt: str, output: str | None, view: View | None = None) -> None:
    """Stream a (possibly huge) per-row frame to the output without materialising it."""
    fmt = resolve_format(fmt, output)
    if fmt == "table":
        preview = lf.head(TABLE_PREVIEW_ROWS + 1).collect()
        view = view or View()
        if preview.height > TABLE_PREVIEW_ROWS:
            view.footer = [
                *view.footer,
                f"first {TABLE_PREVIEW_ROWS} rows shown; use --format csv or -o FILE for all of them",
            ]
        write_frame(preview.head(TABLE_PREVIEW_ROWS), "table", output, view)
        return
    data: pl.LazyFrame = _finite(lf)
    try:
        if fmt == "json":
            _sink_json_array(data, output)
            return
        with _target(output, binary=fmt == "parquet") as handle:
            if fmt in ("csv", "tsv"):
                data.sink_csv(handle, separator="\t" if fmt == "tsv" else ",")
            elif fmt == "jsonl":
                data.sink_ndjson(handle)
            else:
                data.sink_parquet(handle)
    except pl.exceptions.PolarsError as exc:
        raise DataError(f"cannot read the input: {str(exc).strip().splitlines()[0]}") from exc


def _sink_json_array(lf: pl.LazyFrame, output: str | None) -> None:
    with _target(output, binary=False) as handle:
        handle.write("[")
        first = True
        for batch in lf.collect_batches():
            for row in batch.iter_rows(named=True):
                handle.write(("\n  " if first else ",\n  ") + json.dumps(row, default=str))
                first = False
        handle.write("\n]\n")


# --------------------------------------------------------------------------------------------- table view


def _cell(value: Any, name: str, view: View) -> Text:
    if value is None:
        return Text("–", style="dim")
    if isinstance(value, float):
        if name in view.percent:
            text = f"{100 * value:.2f}%"
            if name in view.bars:
                filled = round(max(0.0, min(1.0, value / view.bar_full)) * BAR_WIDTH)
                return (
                    Text(f"{text:>7} ")
                    + Text("█" * filled, style="cyan")
                    + Text("·" * (BAR_WIDTH - filled), style="dim")
                )
            return Text(text)
        if value != value or value in (float("inf"), float("-inf")):
            return Text(str(value), style="dim")
        return Text(f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}")
    if isinstance(value, int) and not isinstance(value, bool):
        return Text(f"{value:,}")
    return Text(str(value))


def print_table(df: pl.DataFrame, view: View, handle: IO[str]) -> None:
    """A readable table with a leading sentence; rounding and colour live only here."""
    console = Console(file=handle, highlight=False, soft_wrap=False, width=None if handle.isatty() else 160)
    if view.headline:
        console.print(Text(view.headline, style="bold"), soft_wrap=True)
    table = Table(title=view.title or None, show_edge=False, header_style="bold", pad_edge=False)
    columns = [c for c in df.columns if c not in view.hide]
    numeric = {c for c, dtype in df.schema.items() if dtype.is_numeric()}
    for name in columns:
        header = view.labels.get(name, name.replace("_", " "))
        table.add_column(header, justify="right" if name in numeric else "left", no_wrap=True)
    for row in df.select(columns).iter_rows(named=True):
        table.add_row(*[_cell(row[c], c, view) for c in columns])
    console.print(table)
    for line in view.footer:
        console.print(Text(line, style="dim"), soft_wrap=True)

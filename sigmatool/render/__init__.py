"""Output: the only package that branches on the output format.

Data formats (csv, tsv, json, jsonl, parquet) carry full precision and write non-finite numbers as null.
The table view (:mod:`.table`) is for people; :mod:`.write` resolves the format and writes a frame in it.
Files are written atomically (:mod:`.files`). Notes, progress and errors go to stderr, in colour only on a
terminal and without ``NO_COLOR``.
"""

from __future__ import annotations

from sigmatool.render.table import View, also_in_data, chance, compared_note, ranges
from sigmatool.render.write import resolve_format, sink_frame, table_width, write_any, write_frame

__all__ = [
    "View",
    "also_in_data",
    "chance",
    "compared_note",
    "ranges",
    "resolve_format",
    "sink_frame",
    "table_width",
    "write_any",
    "write_frame",
]

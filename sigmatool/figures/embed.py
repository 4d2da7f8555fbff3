"""The plotted values inside the figure files, so that a figure can be checked for what it shows.

SVG: every plotted series is an SVG group whose ``id`` is the series' ``gid``, with ``data-series``,
``data-x`` and ``data-y`` attributes holding its label and values at full precision (Python ``repr``,
space-separated), and a ``<title>`` that a browser shows on hover; each marker or bar has a ``<title>`` of
its own. PNG: a compressed text chunk (``zTXt``) with the keyword ``sigmatool-data`` holds the plot's
:meth:`~sigmatool.figures.Plot.data` as JSON.
"""

from __future__ import annotations

import html
import json
import math
import re
import struct
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sigmatool.figures.plot import Series

PNG_KEYWORD = b"sigmatool-data"
_IEND = b"IEND"
_GROUP = re.compile(r"<g\b|</g>")
_USE = re.compile(r"<use\b[^>]*/>")


def _numbers(values: Sequence[float]) -> str:
    return " ".join(repr(v) for v in values)


def _group_end(svg: str, start: int) -> int:
    """Index just past the ``</g>`` closing the group opened at ``start``."""
    depth = 0
    for match in _GROUP.finditer(svg, start):
        depth += 1 if match.group() != "</g>" else -1
        if depth == 0:
            return match.end()
    raise ValueError("unbalanced SVG groups")


def _titled(element: str, text: str) -> str:
    """``<x .../>`` → ``<x ...><title>text</title></x>``."""
    name = element[1:].split(None, 1)[0]
    return f"{element[:-2].rstrip()}><title>{html.escape(text)}</title></{name}>"


def _annotate_line(svg: str, s: Series) -> str:
    opening = f'<g id="{s.gid}">'
    start = svg.find(opening)
    if start < 0:
        return svg
    end = _group_end(svg, start)
    body = svg[start + len(opening) : end]
    finite = [i for i, y in enumerate(s.y) if math.isfinite(y) and math.isfinite(s.x[i])]
    uses = _USE.findall(body)
    if uses and len(uses) == len(finite):
        # One marker per finite point, in order: each gets its own value as a hover title.
        parts = iter(s.point_text(i) for i in finite)
        body = _USE.sub(lambda m: _titled(m.group(), next(parts)), body)
    summary = f"{s.label}: " + "; ".join(s.point_text(i) for i in finite)
    attrs = (
        f'<g id="{s.gid}" data-series="{html.escape(s.label)}" data-x-name="{html.escape(s.x_name)}" '
        f'data-y-name="{html.escape(s.y_name)}" data-x="{_numbers(s.x)}" data-y="{_numbers(s.y)}">'
    )
    return svg[:start] + attrs + f"<title>{html.escape(summary)}</title>" + body + svg[end:]


def _annotate_point(svg: str, s: Series, i: int) -> str:
    opening = f'<g id="{s.gid}-{i}">'
    tagged = (
        f'<g id="{s.gid}-{i}" data-series="{html.escape(s.label)}" data-x="{s.x[i]!r}" data-y="{s.y[i]!r}">'
        f"<title>{html.escape(s.label)}, {html.escape(s.point_text(i))}</title>"
    )
    return svg.replace(opening, tagged, 1)


def annotate_svg(svg: str, series: Sequence[Series]) -> str:
    """Attach each series' values to its SVG group (see the module docstring)."""
    for s in series:
        if s.per_point:
            for i in range(len(s.x)):
                svg = _annotate_point(svg, s, i)
        else:
            svg = _annotate_line(svg, s)
    return svg


def png_with_data(png: bytes, data: dict[str, object]) -> bytes:
    """``png`` with a ``zTXt`` chunk holding ``data`` as JSON, inserted before its final ``IEND`` chunk."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), sort_keys=True).encode("ascii")
    body = PNG_KEYWORD + b"\0\0" + zlib.compress(text, 9)
    chunk = struct.pack(">I", len(body)) + b"zTXt" + body + struct.pack(">I", zlib.crc32(b"zTXt" + body))
    end = png.rindex(_IEND) - 4  # the IEND chunk starts with its 4-byte length
    return png[:end] + chunk + png[end:]


def png_data(png: bytes) -> dict[str, object]:
    """The JSON that :func:`png_with_data` stored in a PNG file."""
    at = 8  # after the PNG signature
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        if kind == b"zTXt" and body.startswith(PNG_KEYWORD + b"\0"):
            loaded: dict[str, object] = json.loads(zlib.decompress(body[len(PNG_KEYWORD) + 2 :]))
            return loaded
        at += 12 + length
    raise ValueError("this PNG carries no sigmatool data")

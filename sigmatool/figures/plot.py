"""A figure together with the data it shows; rendered to PNG, SVG or PDF byte for byte the same every run,
and written atomically, with the plotted values inside the file so that a figure can be checked for what it
shows.

SVG: every plotted series is an SVG group whose ``id`` is the series' ``gid``, with ``data-series``,
``data-x`` and ``data-y`` attributes holding its label and values at full precision (Python ``repr``,
space-separated), and a ``<title>`` that a browser shows on hover; each marker or bar has a ``<title>`` of
its own. PNG: a compressed text chunk (``zTXt``) with the keyword ``sigmatool-data`` holds the plot's
:meth:`Plot.data` as JSON (:func:`png_data` reads it back).
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import re
import struct
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from matplotlib.artist import Artist
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from sigmatool.errors import UsageError
from sigmatool.figures.style import (
    PANEL_HEIGHT,
    SCREEN,
    Look,
    add_caption,
    g_text,
    house_style,
    look_of,
    new_figure,
)
from sigmatool.options import figure_format
from sigmatool.render.files import target

# No dates, no version strings: the same data gives the same bytes on every run.
METADATA: dict[str, dict[str, str | None]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
}


@dataclass(frozen=True)
class Series:
    """One plotted series: its SVG id, what it is, and its values."""

    gid: str
    label: str
    x_name: str
    y_name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    percent: bool = False  # y is a share, shown as a percentage in titles
    per_point: bool = False  # each point is its own artist (a bar), with SVG id f"{gid}-{i}"
    categories: tuple[str, ...] = ()  # names of the x positions 0, 1, … when x is categorical

    def point_text(self, i: int) -> str:
        """One point for people: ``G 8: 44.28 %``."""
        x, y = self.x[i], self.y[i]
        shown = "–" if not math.isfinite(y) else f"{100 * y:.2f} %" if self.percent else f"{y:.4g}"
        where = self.categories[i] if self.categories else f"{self.x_name} {g_text(f'{x:g}')}"
        return f"{where}: {shown}"


@dataclass
class Plot:
    """A finished figure, its caption, the series it shows (in drawing order) and the look it is drawn in."""

    name: str
    figure: Figure
    caption: str
    series: list[Series] = field(default_factory=list)
    look: Look = SCREEN

    def get(self, label: str) -> Series:
        """The series with this label (labels are unique within a plot)."""
        for s in self.series:
            if s.label == label:
                return s
        raise KeyError(f"{self.name}: no series {label!r}; there are {[s.label for s in self.series]}")

    def line(
        self,
        drawn: Artist | BarContainer,
        label: str,
        x_name: str,
        y_name: str,
        x: Sequence[float],
        y: Sequence[float],
        *,
        percent: bool = False,
        categories: Sequence[str] = (),
    ) -> None:
        """Record a drawn series: one artist (a line, a step outline, a band), or bars, one SVG group per
        bar; ``categories`` name the x positions 0, 1, … of categorical bars."""
        gid = f"{self.name}-s{len(self.series)}"
        if isinstance(drawn, BarContainer):
            for i, patch in enumerate(drawn.patches):
                patch.set_gid(f"{gid}-{i}")
        else:
            drawn.set_gid(gid)
        per_point = isinstance(drawn, BarContainer)
        values = _floats(x), _floats(y)
        self.series.append(Series(gid, label, x_name, y_name, *values, percent, per_point, tuple(categories)))

    bars = line  # the same record, named for what the figure draws

    def render(self, fmt: str) -> bytes:
        """The figure as ``png``, ``svg`` or ``pdf`` bytes."""
        if fmt not in METADATA:
            raise UsageError(f"figures are png, svg or pdf, not {fmt!r}")
        buffer = io.BytesIO()
        with house_style(self.look):
            self.figure.savefig(buffer, format=fmt, metadata=METADATA[fmt])
        data = buffer.getvalue()
        if fmt == "svg":
            return annotate_svg(data.decode("utf-8"), self.series).encode("utf-8")
        return png_with_data(data, self.data()) if fmt == "png" else data

    def data(self) -> dict[str, object]:
        """The plot's name, caption and series as plain JSON-ready values (non-finite numbers as strings)."""
        return {
            "name": self.name,
            "caption": self.caption,
            "series": [
                {"label": s.label, "x_name": s.x_name, "y_name": s.y_name, "x": _json(s.x), "y": _json(s.y)}
                for s in self.series
            ],
        }

    def svg(self) -> str:
        return self.render("svg").decode("utf-8")

    def save(self, path: str | os.PathLike[str], option: str = "--plot") -> Path:
        """Write the figure in the format its extension names (.png, .svg, .pdf), atomically; ``option``
        names the file in error messages."""
        file = Path(path)
        write_atomic(file, self.render(figure_format(os.fspath(path), option)), option)
        return file


@contextmanager
def drawing(
    name: str,
    width: float,
    height: float = PANEL_HEIGHT,
    *,
    panels: int = 1,
    style: str = "screen",
    caption: bool | None = None,
) -> Iterator[Plot]:
    """A new figure ``width`` × ``height`` screen inches for ``panels`` panels side by side, as a
    :class:`Plot` to draw on in the house style of the look ``style`` names; once the block has drawn it and
    set its caption, the caption goes under the figure when the look draws captions (:meth:`Look.captions`).
    """
    look = look_of(style)
    with house_style(look):
        plot = Plot(name, new_figure(width, height, look, panels), "", look=look)
        yield plot
        if look.captions(caption):
            add_caption(plot.figure, plot.caption, look)


def _json(values: Sequence[float]) -> list[float | str]:
    return [v if math.isfinite(v) else repr(v) for v in values]


def _floats(values: Sequence[float]) -> tuple[float, ...]:
    return tuple(float("nan") if v is None else float(v) for v in values)


def write_atomic(path: str | os.PathLike[str], data: bytes, option: str = "--plot") -> None:
    """Write ``data`` to ``path`` atomically, with the mode a new file gets from the umask (the one writer
    of every output file, :func:`sigmatool.render.files.target`); ``option`` names the file in errors."""
    with target(os.fspath(path), binary=True, option=option) as handle:
        handle.write(data)


# --------------------------------------------------------------------------------------------- embedded data

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

"""A figure together with the data it shows; rendered to PNG, SVG or PDF byte for byte the same every run,
and written atomically. SVG and PNG files carry the plotted values (see :mod:`sigmatool.figures.embed`)."""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from matplotlib.artist import Artist
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from sigmatool.errors import UsageError
from sigmatool.figures.embed import annotate_svg, png_with_data
from sigmatool.figures.style import g_text, house_style
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
    """A finished figure, its caption and the series it shows (in drawing order)."""

    name: str
    figure: Figure
    caption: str
    series: list[Series] = field(default_factory=list)

    def get(self, label: str) -> Series:
        """The series with this label (labels are unique within a plot)."""
        for s in self.series:
            if s.label == label:
                return s
        raise KeyError(f"{self.name}: no series {label!r}; there are {[s.label for s in self.series]}")

    def line(
        self,
        line: Artist,
        label: str,
        x_name: str,
        y_name: str,
        x: Sequence[float],
        y: Sequence[float],
        *,
        percent: bool = False,
    ) -> None:
        """Record a drawn line (or any one artist: a step outline, a band) as a series."""
        gid = f"{self.name}-s{len(self.series)}"
        line.set_gid(gid)
        self.series.append(Series(gid, label, x_name, y_name, _floats(x), _floats(y), percent))

    def bars(
        self,
        bars: BarContainer,
        label: str,
        x_name: str,
        y_name: str,
        x: Sequence[float],
        y: Sequence[float],
        *,
        percent: bool = False,
        categories: Sequence[str] = (),
    ) -> None:
        """Record drawn bars as a series, one SVG group per bar."""
        gid = f"{self.name}-s{len(self.series)}"
        for i, patch in enumerate(bars.patches):
            patch.set_gid(f"{gid}-{i}")
        values = _floats(x), _floats(y)
        self.series.append(Series(gid, label, x_name, y_name, *values, percent, True, tuple(categories)))

    def render(self, fmt: str) -> bytes:
        """The figure as ``png``, ``svg`` or ``pdf`` bytes."""
        if fmt not in METADATA:
            raise UsageError(f"figures are png, svg or pdf, not {fmt!r}")
        buffer = io.BytesIO()
        with house_style():
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


def _json(values: Sequence[float]) -> list[float | str]:
    return [v if math.isfinite(v) else repr(v) for v in values]


def _floats(values: Sequence[float]) -> tuple[float, ...]:
    return tuple(float("nan") if v is None else float(v) for v in values)


def write_atomic(path: str | os.PathLike[str], data: bytes, option: str = "--plot") -> None:
    """Write ``data`` to ``path`` atomically, with the mode a new file gets from the umask (the one writer
    of every output file, :func:`sigmatool.render.files.target`); ``option`` names the file in errors."""
    with target(os.fspath(path), binary=True, option=option) as handle:
        handle.write(data)

"""What a command's answer says of itself when it is shown. :func:`sigmatool.cli.run.show` asks the result,
as rich's ``Console.render`` asks a renderable for ``__rich_console__``: no table from kinds of result to
printers, so a result cannot be shown without its frame, view, figure and warnings.

- ``frame()``: what the data formats write (per-prompt rows: a LazyFrame, streamed);
- ``view()``: the table view (None: the rows as they are);
- ``figure(source, caption, style)``: what ``--plot`` draws (None: no figure), matplotlib imported only then;
- ``warnings()``: what the answer says of the numbers' trust; the table's headline says each, the data
  formats, which have no headline, on stderr.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import polars as pl

    from sigmatool.figures.plot import Plot
    from sigmatool.render import View


class Drawn(Protocol):
    """What ``--plot`` draws: a figure of the data, or None when there is none."""

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None: ...


class Shown(Drawn, Protocol):
    """A command's answer: its frame, table view, figure and warnings."""

    def frame(self) -> pl.DataFrame | pl.LazyFrame: ...

    def view(self) -> View | None: ...

    def warnings(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class RowsResult:
    """Rows written as they are (per-prompt output, streamed when a LazyFrame): ``drawn`` the analysis whose
    figure ``--plot`` draws beside them, ``said`` what the rows' numbers are to be trusted for (empty
    lines left out)."""

    rows: pl.DataFrame | pl.LazyFrame
    drawn: Drawn | None = None
    said: tuple[str, ...] = ()
    record: Mapping[str, Any] | None = None  # what made the rows, written with them (a schedule's record)

    def frame(self) -> pl.DataFrame | pl.LazyFrame:
        return self.rows

    def view(self) -> View | None:
        return None

    def figure(self, source: str, caption: bool | None = None, style: str = "screen") -> Plot | None:
        return None if self.drawn is None else self.drawn.figure(source, caption, style)

    def warnings(self) -> tuple[str, ...]:
        return tuple(line for line in self.said if line)

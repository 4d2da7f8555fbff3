"""Progress of long work, for people: a bar or a spinner on stderr when stderr is a terminal, nothing when it
is a pipe, a file or a log (stdout stays data). rich is imported only when something is shown.

A loop of long work (the ``--ci`` bootstrap, the ``--bounds`` programmes) wraps its iterable in :func:`steps`;
a block of it (a report's analyses, a plan) runs inside :func:`working`; reading counts its rows through
:func:`bar`. One display at a time: progress inside progress shows only the outer one.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
Advance = Callable[[int], None]
_SHOWING: list[bool] = []


def shown() -> bool:
    """Whether progress is shown: stderr is a terminal and no other progress is on it."""
    stream = sys.stderr
    return stream is not None and stream.isatty() and not _SHOWING


def nothing(done: int) -> None:
    """An :data:`Advance` that shows nothing (where no one watches, or no caller asked)."""


@contextlib.contextmanager
def bar(label: str, total: int | None = None, unit: str = "") -> Iterator[Advance]:
    """Show ``label`` with a bar of ``total`` steps (a spinner without one) while the block runs; the block
    gets the function that advances it by a number of steps."""
    if not shown():
        yield nothing
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    count = f"{{task.completed:,}}{' ' + unit if unit else ''}"
    columns = [SpinnerColumn(), TextColumn("{task.description}", markup=False)]
    if total is not None or unit:
        columns += [BarColumn(), TextColumn(count + (f" of {total:,}" if total is not None else ""))]
    _SHOWING.append(True)
    try:
        # Notes printed meanwhile go above the bar; stdout is data and is never redirected to it.
        console = Console(stderr=True)
        with Progress(
            *columns, TimeElapsedColumn(), console=console, transient=True, redirect_stdout=False
        ) as shown_:
            task = shown_.add_task(label, total=total)
            yield lambda done: shown_.advance(task, done)
    finally:
        _SHOWING.pop()


def steps(items: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
    """The items, one by one, with a bar of ``total`` steps on a terminal."""
    with bar(label, total) as advance:
        for item in items:
            yield item
            advance(1)


@contextlib.contextmanager
def working(label: str) -> Iterator[None]:
    """A spinner with the time spent while the block runs, on a terminal."""
    with bar(label):
        yield

"""Temporary files that are always removed, even when a signal arrives the instant they are made."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import Any, TypeVar

from sigmatool.errors import Interrupted

T = TypeVar("T")
# The signals that end a run by unwinding it (Ctrl-C, timeout, Slurm, Kubernetes, a closed terminal).
ENDING = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextlib.contextmanager
def owned(create: Callable[[], T], remove: Callable[[T], None]) -> Iterator[T]:
    """``create()`` a temporary thing and ``remove()`` it on the way out, however the block ends.

    The ending signals are held back while it is created, so none can arrive between its creation and the
    moment its removal is guaranteed; one that arrived meanwhile is handled just after, inside the block.
    Blocking them in this thread is not enough when the process has other threads (a thread pool): the
    kernel then hands the signal to one of those, and Python runs its handler in this thread at once. So
    the handlers are also swapped, for the moment of creation, for one that only notes the signal, which
    is raised again once the removal is guaranteed.
    """
    arrived: list[int] = []
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, ENDING)
    handlers = _held(arrived)
    try:
        thing = create()
        try:
            _release(handlers, previous, arrived)
            yield thing
        finally:
            remove(thing)
    finally:
        _release(handlers, previous, arrived)


def _held(arrived: list[int]) -> dict[int, Any]:
    """Swap each ending signal's handler for one that notes it in ``arrived``; the handlers swapped out
    (none outside the main thread, where Python lets no handler be set)."""
    swapped: dict[int, Any] = {}
    try:
        for signum in ENDING:
            swapped[signum] = signal.signal(signum, lambda got, _frame: arrived.append(got))
    except ValueError:  # not the main thread
        pass
    return swapped


def _release(handlers: dict[int, Any], mask: Iterable[int], arrived: list[int]) -> None:
    """Put the handlers and the signal mask back, then raise the signals that arrived meanwhile (once)."""
    while handlers:
        signum, handler = handlers.popitem()
        signal.signal(signum, handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    while arrived:
        signal.raise_signal(arrived.pop(0))


# The signals that :func:`signals_trapped` turns into an unwinding, as Ctrl-C is already.
TRAPPED = (signal.SIGTERM, signal.SIGHUP)


def _raise(signum: int, frame: FrameType | None) -> None:
    # Once is enough: the unwinding that follows (removing temporary files) must not be cut short.
    for trapped in TRAPPED:
        signal.signal(trapped, signal.SIG_IGN)
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_trapped() -> Iterator[None]:
    """SIGTERM and SIGHUP (timeout, Slurm, Kubernetes) unwind like Ctrl-C, so temporary files are removed."""
    previous = {}
    try:
        for signum in TRAPPED:
            previous[signum] = signal.signal(signum, _raise)
    except ValueError:  # not the main thread: leave signals to whoever owns it
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

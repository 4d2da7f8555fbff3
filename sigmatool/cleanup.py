"""Temporary files that are always removed, even when a signal arrives the instant they are made."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")
# The signals that end a run by unwinding it (Ctrl-C, timeout, Slurm, Kubernetes, a closed terminal).
ENDING = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextlib.contextmanager
def owned(create: Callable[[], T], remove: Callable[[T], None]) -> Iterator[T]:
    """``create()`` a temporary thing and ``remove()`` it on the way out, however the block ends.

    The ending signals are held back while it is created, so none can arrive between its creation and the
    moment its removal is guaranteed; one that arrived meanwhile is handled just after, inside the block.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, ENDING)
    try:
        thing = create()
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
            yield thing
        finally:
            remove(thing)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)

"""``sigmatool.cleanup.owned``: a temporary thing is removed however the block ends, even when an ending
signal arrives while it is being made, in a process with other threads (a thread pool), where blocking
the signal in the creating thread does not stop Python from running its handler there."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sigmatool.cleanup import owned


class Stop(BaseException):
    """What the test's handler raises: the run unwinding."""


@pytest.fixture
def other_thread() -> Iterator[threading.Thread]:
    """A thread that does not block the ending signals (made before any block), as a pool's are."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    yield thread
    stop.set()
    thread.join()


@pytest.fixture
def unwinding() -> Iterator[None]:
    def handler(signum: int, _frame: object) -> None:
        raise Stop(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    yield
    signal.signal(signal.SIGTERM, previous)


def test_a_signal_while_the_thing_is_made_waits_until_its_removal_is_sure(
    tmp_path: Path, other_thread: threading.Thread, unwinding: None
) -> None:
    made = tmp_path / "spool"
    assert other_thread.ident is not None
    ident = other_thread.ident

    def create() -> Path:
        made.mkdir()
        signal.pthread_kill(ident, signal.SIGTERM)  # the other thread takes it; the handler runs here
        time.sleep(0.05)  # many bytecodes: Python would have run the handler by now
        return made

    with pytest.raises(Stop), owned(create, lambda path: path.rmdir()):
        raise AssertionError("the signal is raised before the block's body runs")  # pragma: no cover
    assert not made.exists()


def test_the_handlers_are_back_for_the_block_and_after(tmp_path: Path, unwinding: None) -> None:
    made, handler = tmp_path / "spool", signal.getsignal(signal.SIGTERM)

    def create() -> Path:
        made.mkdir()
        assert signal.getsignal(signal.SIGTERM) is not handler  # held while it is made
        return made

    with owned(create, lambda path: path.rmdir()) as path:
        assert path.exists()
        assert signal.getsignal(signal.SIGTERM) is handler
    assert not made.exists()
    assert signal.getsignal(signal.SIGTERM) is handler

"""Ctrl-C in the middle of a write: ``DeferredInterrupt`` notes it and lets the caller act between steps (the git
transaction, ``apply --no-git`` writing its files). For the tests: ``test_sigint`` sends Ctrl-C at a known point of
a run, so the handling of SIGINT is tested where it matters instead of by timing."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable

TEST_SIGINT = "ASCEND_PORT_TEST_SIGINT"


class DeferredInterrupt:
    """Ctrl-C while the block runs is noted (``fired``), not raised: the caller finishes the step in hand (a git
    call, a file being replaced) and acts between steps (``check``). Child processes still get the signal from the
    terminal. Outside the main thread, where no handler can be set, Ctrl-C is left as it is."""

    def __init__(self) -> None:
        self.fired = False
        self._saved: object = None

    def __enter__(self) -> DeferredInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._saved = signal.signal(signal.SIGINT, self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            signal.signal(signal.SIGINT, self._saved)  # type: ignore[arg-type]
            self._saved = None

    def _note(self, signum: int, frame: object) -> None:
        self.fired = True

    def check(self) -> None:
        """Raise the noted Ctrl-C now, between steps."""
        if self.fired:
            raise KeyboardInterrupt


def test_sigint(point: str, fired: Callable[[], bool] = lambda: False) -> None:
    """``ASCEND_PORT_TEST_SIGINT=<point>`` sends this process SIGINT at ``point``; ``<point>:terminal`` says so on
    stderr and waits (up to a minute) for the test to press Ctrl-C on the terminal instead (``fired``: whether it
    came, where a handler takes SIGINT instead of KeyboardInterrupt)."""
    wanted = os.environ.get(TEST_SIGINT)
    if wanted == point:
        os.kill(os.getpid(), signal.SIGINT)
    elif wanted == f"{point}:terminal":
        print("test: waiting for Ctrl-C", file=sys.stderr, flush=True)
        deadline = time.monotonic() + 60
        while not fired() and time.monotonic() < deadline:
            time.sleep(0.05)

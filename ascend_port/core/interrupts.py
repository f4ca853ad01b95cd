"""For the tests only: Ctrl-C at a known point of a run (``apply --no-git`` writing its files, the git workflow
writing its report), so the handling of SIGINT is tested where it matters instead of by timing."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

TEST_SIGINT = "ASCEND_PORT_TEST_SIGINT"


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

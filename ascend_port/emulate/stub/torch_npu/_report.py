"""What the emulated process used: torch_npu / torch.npu calls with counts, the fused-op calls whose arguments broke
the op's contract, the names looked up that the target torch_npu lacks, and the NotImplementedErrors raised.
Written at exit as JSON into the folder $ASCEND_PORT_EMULATE_REPORT (one file per process), merged by the runner."""

from __future__ import annotations

import atexit
import functools
import json
import os
from collections import Counter

REPORT_ENV = "ASCEND_PORT_EMULATE_REPORT"
calls: Counter[str] = Counter()
not_implemented: Counter[str] = Counter()
violations: Counter[str] = Counter()  # "torch_npu.op: message" (the op raised its contract error)
absent: Counter[str] = Counter()  # names the target torch_npu lacks (AttributeError raised)
notes: Counter[str] = Counter()  # what the emulator did differently from a real NPU, in words (e.g. torch.compile)


def record_call(name: str) -> None:
    calls[name] += 1


def counted(name: str, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        calls[name] += 1
        return function(*args, **kwargs)

    return wrapper


def record_violation(name: str, error: BaseException) -> None:
    violations[f"{name}: {str(error).splitlines()[0] if str(error) else type(error).__name__}"] += 1


def record_absent(name: str) -> None:
    absent[name] += 1


def record_note(text: str) -> None:
    notes[text] += 1


def not_emulated(name: str) -> NotImplementedError:
    not_implemented[name] += 1
    return NotImplementedError(f"{name} is not emulated by ascend-port emulate")


@atexit.register
def _write() -> None:
    folder = os.environ.get(REPORT_ENV)
    if not folder or not (calls or not_implemented or violations or absent or notes):
        return
    report = {
        "pid": os.getpid(),
        "calls": dict(calls),
        "not_implemented": dict(not_implemented),
        "contract_violations": dict(violations),
        "absent": dict(absent),
        "notes": dict(notes),
    }
    try:
        path = os.path.join(folder, f"{os.getpid()}.json")
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(report, stream)
    except OSError:
        pass

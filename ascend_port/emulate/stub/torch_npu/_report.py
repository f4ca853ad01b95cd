"""What the emulated process used: torch_npu / torch.npu calls with counts, the fused-op calls whose arguments broke
the op's contract, the names looked up that the target torch_npu lacks, the NotImplementedErrors raised, the settings
written, whether it ever allocated npu storage, and the operators that reached the npu (for the run hazards).
Written at exit as JSON into the folder $ASCEND_PORT_EMULATE_REPORT (one file per process), merged by the runner."""

from __future__ import annotations

import atexit
import functools
import json
import os
import sys
from collections import Counter
from pathlib import Path

REPORT_ENV = "ASCEND_PORT_EMULATE_REPORT"
calls: Counter[str] = Counter()
not_implemented: Counter[str] = Counter()
violations: Counter[str] = Counter()  # "torch_npu.op: message" (the op raised its contract error)
absent: Counter[str] = Counter()  # names the target torch_npu lacks (AttributeError raised)
notes: Counter[str] = Counter()  # what the emulator did differently from a real NPU, in words (e.g. torch.compile)
writes: Counter[str] = Counter()  # settings the program wrote (torch.npu.matmul.allow_hf32 = True)
torch_internal: Counter[str] = Counter()  # calls and lookups made by torch's own code (torch.compile's probes)

# Only the program's calls count: a call or lookup whose nearest caller outside the emulator is torch's own code
# (torch.compile probing torch.npu.is_available, torch_npu.npu.Scheduling) goes to torch_internal instead. Other
# libraries (transformers, accelerate, deepspeed) count: they call torch_npu for the program, and a port needs what
# they call as much as what the program's own files call.
_EMULATOR = str(Path(__file__).resolve().parents[2])  # ascend_port/emulate: the stand-in and the references
# torch's wrappers that only pass the program's call on (optimizer.step's profiling hook, no_grad as a decorator,
# Module.__call__, autograd.Function.apply, checkpoint): the caller is the frame beyond them.
_PASS_THROUGH = frozenset(
    os.path.join(*parts)
    for parts in (
        ("optim", "optimizer.py"),
        ("utils", "_contextlib.py"),
        ("nn", "modules", "module.py"),
        ("autograd", "function.py"),
        ("utils", "checkpoint.py"),
        ("utils", "hooks.py"),
        ("amp", "autocast_mode.py"),
    )
)


def _torch_dir() -> str | None:
    torch = sys.modules.get("torch")
    return os.path.dirname(torch.__file__) + os.sep if torch is not None and torch.__file__ else None


def from_program() -> bool:
    """Is the nearest caller outside the emulator (and the import machinery) the program, not torch?"""
    torch_dir = _torch_dir()
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_EMULATOR) or name.startswith("<frozen ")):
            if torch_dir is None or not name.startswith(torch_dir):
                return True
            if name[len(torch_dir) :] not in _PASS_THROUGH:
                return False
        frame = frame.f_back
    return True


def _count(counter: Counter[str], name: str) -> None:
    if from_program():
        counter[name] += 1
    else:
        torch_internal[name] += 1


def record_call(name: str) -> None:
    _count(calls, name)


def record_write(name: str) -> None:
    _count(writes, name)


def counted(name: str, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        _count(calls, name)
        return function(*args, **kwargs)

    return wrapper


def record_violation(name: str, error: BaseException) -> None:
    violations[f"{name}: {str(error).splitlines()[0] if str(error) else type(error).__name__}"] += 1


def record_absent(name: str) -> None:
    _count(absent, name)


def record_note(text: str) -> None:
    notes[text] += 1


def not_emulated(name: str) -> NotImplementedError:
    _count(not_implemented, name)
    return NotImplementedError(f"{name} is not emulated by ascend-port emulate")


def _helper() -> bool:
    """A process that never computes by design: a multiprocessing child (a DataLoader worker, spawned) or torchrun's
    launcher, which import torch (and so the stand-in) but leave the npu to the program's processes. (Read from
    sys.modules: importing multiprocessing at exit, after autograd's threads, aborts the interpreter.)"""
    multiprocessing = sys.modules.get("multiprocessing")
    child = multiprocessing is not None and multiprocessing.parent_process() is not None
    return child or "torch.distributed.run" in sys.modules


def _npu_storage_allocated(helper: bool) -> bool | None:
    """Did the process ever allocate npu storage (the native device's allocation counters), None if unknown, or if
    the process is a helper that did not (a DataLoader worker); a multiprocessing child that did is no helper: the
    workers of `torch.multiprocessing.spawn` compute."""
    native = getattr(sys.modules.get("torch"), "_ascend_port_emulate_native", None)
    if native is None:
        return None
    try:
        warmup = getattr(native, "warmup_allocations", ())  # (the emulator's own, at start: device.py)
        counts = [native.memory_stats(i)[2] for i in range(native.device_count())]
        allocated = any(n > (warmup[i] if i < len(warmup) else 0) for i, n in enumerate(counts))
    except Exception:  # a half-initialized device at exit: unknown, not a crash
        return None
    return None if helper and not allocated else allocated


def _op_stats() -> dict:
    """The run hazards the native device recorded (see native.cpp's record_op): per operator that reached the npu,
    its calls, its distinct input-shape signatures (and how many of them were first seen in the second half of its
    calls) and its calls by float64 / complex dtype. The runner judges them
    against the target release (ascend_port/emulate/hazards.py)."""
    native = getattr(sys.modules.get("torch"), "_ascend_port_emulate_native", None)
    if native is None:
        return {}
    try:
        stats = getattr(native, "op_stats_at_exit", None) or native.op_stats()
    except Exception:  # a half-initialized device at exit: nothing to say
        return {}
    recorded = {
        name: {"calls": calls, "shapes": shapes, "late_shapes": late, "dtypes": dict(sorted(wide))}
        for name, calls, shapes, late, wide in sorted(stats)
    }
    # the ops the emulator runs with a Python kernel of its own (device.py's _fused_sgd_): their calls
    for name, count in getattr(native, "python_op_calls", {}).items():
        recorded.setdefault(name, {"calls": count, "shapes": 1, "late_shapes": 0, "dtypes": {}})
    return recorded


@atexit.register
def _write() -> None:
    # Every process that imported the stand-in reports, calls or not (helpers only where they called something): one
    # that never put a tensor on the npu is what the summary must tell (a port that still picks "cpu").
    folder = os.environ.get(REPORT_ENV)
    recorded = calls or not_implemented or violations or absent or notes or writes
    helper = _helper()
    allocated = _npu_storage_allocated(helper)
    if not folder or (helper and not recorded and not allocated):
        return
    report = {
        "pid": os.getpid(),
        "calls": dict(calls),
        "not_implemented": dict(not_implemented),
        "contract_violations": dict(violations),
        "absent": dict(absent),
        "notes": dict(notes),
        "writes": dict(writes),
        "torch_internal": dict(torch_internal),
        "npu_allocated": allocated,
        "op_stats": _op_stats(),
        "ppid": os.getppid(),
        "argv": list(sys.argv),
    }
    try:
        path = os.path.join(folder, f"{os.getpid()}.json")
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(report, stream)
    except OSError:
        pass

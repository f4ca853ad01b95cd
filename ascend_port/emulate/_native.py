"""The C++ source of the emulated ``npu`` device (``native.cpp``) and the functions it binds, compiled once per
torch version by ``device.py``.

A real PrivateUse1 backend whose memory is host memory: an allocator (CPU allocator, DataPtrs tagged with the npu
device), a device guard, the PrivateUse1 hooks, native kernels for allocation, copy and ``set_``, and a boxed
fallback for every other operator. The fallback makes zero-copy CPU aliases of the npu tensors (and storages) among
the arguments, turns ``device=npu`` arguments into ``cpu``, calls the operator (which then runs its CPU kernel), and
turns the results back into npu tensors without copying: a result over an argument's memory becomes an npu tensor
over that argument's storage (views), an in-place/out= result is the argument itself, any other result is wrapped.
The C++ is ``native.cpp`` beside this module, read as text (no torch import here).
"""

from __future__ import annotations

from pathlib import Path

# (beside this file: device.py loads this module by its path, in whatever environment the emulated program has)
SOURCE = Path(__file__).with_name("native.cpp").read_text(encoding="utf-8")

FUNCTIONS = [
    "install",
    "device_count",
    "current_device",
    "set_device",
    "cpu_alias",
    "route",
    "memory_stats",
    "reset_peak_memory",
    "threads_seen",
    "op_stats",
    "reset_op_stats",
    "pause_op_stats",
    "enable_op_stats",
]

"""What a process of a verified command did at run time, written as JSON to $ASCEND_PORT_PROBE_OUT/probe-<pid>.json
at exit: the losses (scalars .backward() was called on) and the time between them, the ascend-port TODO lines that
ran, tensors of dtypes the NPU lacks created on the npu, host-device syncs repeated from one line (.item() in a
loop), whether any tensor reached the npu at all, peak device memory. Stdlib and torch only; torch is hooked when
the program imports it (a process that never does pays nothing but this module's import)."""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time
import types
from collections import Counter

OUT_ENV = "ASCEND_PORT_PROBE_OUT"
LOSSES_ENV = "ASCEND_PORT_PROBE_LOSSES"
TODOS_ENV = "ASCEND_PORT_PROBE_TODOS"
SEED_ENV = "ASCEND_PORT_PROBE_SEED"
DTYPES_ENV = "ASCEND_PORT_PROBE_DTYPES"  # "0": do not watch dtypes (the only per-op cost)
DEVICES = ("npu",)
# dtypes the NPU lacks or runs slowly (most NPU operators have no float64 or complex kernels)
SLOW_DTYPES = ("float64", "complex64", "complex128", "complex32")
SYNCS = ("item", "cpu", "tolist", "numpy")
NOT_THE_PROGRAM = ("/torch/", "_ascend_port_probe.py", "<frozen ")
EMULATOR = ("/ascend_port/emulate/", "/torch_npu/")
# torch's own mechanics whose dtypes are no choice of the program's (GradScaler's float64 reciprocal of its scale)
TORCH_MECHANICS = ("/torch/amp/", "/torch/cuda/amp/")
SYNC_REPEATED = 3  # calls from one line that make it "in a loop"
# The ops whose dtype is "the compute dtype" (a float32-only run of code that can use bf16/fp16 is worth a look)
COMPUTE_OPS = (
    ("torch.nn.functional", ("linear", "conv1d", "conv2d", "conv3d", "scaled_dot_product_attention")),
    ("torch", ("matmul", "mm", "bmm", "addmm", "baddbmm", "einsum")),
    ("torch.Tensor", ("matmul", "__matmul__", "mm", "bmm")),
)

_started = time.monotonic()
_state: dict = {
    "losses": [],
    "backward_times": [],
    "todo_lines_hit": {},
    "dtypes_on_npu": Counter(),  # "float64 at file:line" -> count
    "compute_dtypes": Counter(),  # dtype of the matmuls/convolutions/attention computed on the npu -> count
    "syncs": Counter(),  # "item at file:line" -> count
    "npu_tensors": False,
    "torch_imported": False,
    "device_watch": False,  # the dtype mode is on: "npu_tensors" means something
}
_todos: dict[str, set[int]] = {}
_scaled: dict[int, float] = {}  # id of a loss GradScaler.scale returned -> the scale it was multiplied by
_max_losses = 20
_lock = threading.Lock()
# Set while a wrapper runs: the method it calls re-enters it through __torch_function__ (the dtype mode is on the
# stack), and the probe's own .cpu() of a loss is no sync of the program's.
_inside = threading.local()


def start() -> None:
    global _max_losses
    _max_losses = int(os.environ.get(LOSSES_ENV) or 20)
    todos = os.environ.get(TODOS_ENV)
    if todos:
        try:
            with open(todos, encoding="utf-8") as stream:
                _todos.update({os.path.realpath(k): set(v) for k, v in json.load(stream).items()})
        except (OSError, ValueError):
            pass
    if _todos:
        _watch_lines()
    if "torch" in sys.modules:
        _hook_torch()
    else:
        sys.meta_path.insert(0, _TorchImportHook())
    atexit.register(_write)


# -- TODO line coverage: only the lines asked for, in only the files that hold them ------------------------------


def _hit(filename: str, line: int) -> None:
    with _lock:
        hits = _state["todo_lines_hit"].setdefault(filename, [])
        if line not in hits:
            hits.append(line)


def _watch_lines() -> None:
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:  # 3.12+: PY_START on every code object once, LINE only in the files with TODOs
        tool = monitoring.PROFILER_ID if monitoring.get_tool(monitoring.PROFILER_ID) is None else 5
        monitoring.use_tool_id(tool, "ascend-port-probe")
        events = monitoring.events

        def on_start(code, offset):
            if os.path.realpath(code.co_filename) in _todos:
                monitoring.set_local_events(tool, code, events.LINE)
            return monitoring.DISABLE

        def on_line(code, line):
            filename = os.path.realpath(code.co_filename)
            if line in _todos.get(filename, ()):
                _hit(filename, line)
            return monitoring.DISABLE

        monitoring.register_callback(tool, events.PY_START, on_start)
        monitoring.register_callback(tool, events.LINE, on_line)
        monitoring.set_events(tool, events.PY_START)
        return
    real: dict[str, str | None] = {}

    def local(frame, event, arg):
        if event == "line":
            filename = real[frame.f_code.co_filename]
            if filename and frame.f_lineno in _todos[filename]:
                _hit(filename, frame.f_lineno)
        return local

    def tracer(frame, event, arg):  # called on each call only; lines are traced in the TODO files alone
        name = frame.f_code.co_filename
        if name not in real:
            path = os.path.realpath(name)
            real[name] = path if path in _todos else None
        return local if real[name] else None

    sys.settrace(tracer)
    threading.settrace(tracer)


# -- torch: losses, step times, dtypes on the npu, syncs in loops --------------------------------------------------


class _TorchImportHook:
    """Hooks torch once ``import torch`` has finished (the emulator's device is registered by then)."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_hook(module):
            exec_module(module)
            try:
                _hook_torch()
            except Exception as error:
                print(f"ascend-port probe: torch not watched: {error!r}", file=sys.stderr)

        loader.exec_module = exec_and_hook  # type: ignore[method-assign]
        return spec


def _caller(skip: tuple[str, ...] = EMULATOR) -> tuple[str, int] | None:
    """The program's line that made the call: the nearest frame outside torch and this probe; None when the call
    came from ``skip``: the emulator or the torch_npu stand-in (their own .cpu() of an npu tensor is no sync of the
    program's, nor a real NPU's), and for dtypes torch's mechanics too."""
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename.replace(os.sep, "/")
        if any(part in name for part in skip):
            return None
        if not any(part in name for part in NOT_THE_PROGRAM):
            return name, frame.f_lineno
        frame = frame.f_back
    return None


def _on_npu(tensor) -> bool:
    try:
        return tensor.device.type in DEVICES
    except Exception:
        return False


def _hook_torch() -> None:
    import torch

    _state["torch_imported"] = True
    seed = os.environ.get(SEED_ENV)
    if seed:
        import random

        random.seed(int(seed))
        torch.manual_seed(int(seed))
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed(int(seed))
    backward = torch.Tensor.backward

    def watched_backward(self, *args, **kwargs):
        if getattr(_inside, "active", False):
            return backward(self, *args, **kwargs)
        with _lock:
            _state["backward_times"].append(time.monotonic())
            record = len(_state["losses"]) < _max_losses and self.numel() == 1
        _inside.active = True
        try:
            factor = _scaled.pop(id(self), None)
            if record:
                try:
                    _state["losses"].append(float(self.detach().float().cpu()) / (factor or 1.0))
                except Exception:
                    pass
            return backward(self, *args, **kwargs)
        finally:
            _inside.active = False

    torch.Tensor.backward = watched_backward  # type: ignore[method-assign]
    _unscale_losses(torch)
    for name in SYNCS:
        _wrap_sync(torch, name)
    if os.environ.get(DTYPES_ENV) != "0":
        _watch_dtypes(torch)


def _unscale_losses(torch) -> None:
    """`scaler.scale(loss).backward()`: the loss is the scaled one divided by the scale (a GradScaler enabled on one
    side and not on the other, CUDA's on CPU, must not make the losses differ by 65536)."""
    scaler = getattr(getattr(torch, "amp", None), "GradScaler", None)
    if scaler is None:
        return
    scale = scaler.scale

    def watched_scale(self, outputs):
        scaled = scale(self, outputs)
        if scaled is not outputs and isinstance(scaled, torch.Tensor) and scaled.numel() == 1:
            outer, _inside.active = getattr(_inside, "active", False), True  # (get_scale's .item() is the probe's)
            try:
                _scaled[id(scaled)] = float(self.get_scale())
            except Exception:
                pass
            finally:
                _inside.active = outer
        return scaled

    scaler.scale = watched_scale


def _wrap_sync(torch, name: str) -> None:
    method = getattr(torch.Tensor, name)

    def watched(self, *args, **kwargs):
        if getattr(_inside, "active", False):
            return method(self, *args, **kwargs)
        if _on_npu(self):
            where = _caller()
            if where is not None:
                _state["syncs"][f"{name} at {where[0]}:{where[1]}"] += 1
        _inside.active = True
        try:
            return method(self, *args, **kwargs)
        finally:
            _inside.active = False

    watched.__name__ = name
    setattr(torch.Tensor, name, watched)


def _watch_dtypes(torch) -> None:
    """A torch-function mode that looks at each result's device and dtype: the only per-op cost of the probe."""
    from torch.overrides import TorchFunctionMode

    slow = {getattr(torch, name) for name in SLOW_DTYPES if hasattr(torch, name)}
    tensor_type = torch.Tensor
    compute: set[object] = set()
    for owner, names in COMPUTE_OPS:
        module = sys.modules.get(owner) or (torch.Tensor if owner == "torch.Tensor" else None)
        compute.update(getattr(module, name) for name in names if hasattr(module, name))

    class DtypeWatch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            if type(result) is tensor_type or isinstance(result, tensor_type):
                device = result.device.type
                if device in DEVICES:
                    _state["npu_tensors"] = True
                    if func in compute:
                        _state["compute_dtypes"][str(result.dtype).replace("torch.", "")] += 1
                    if result.dtype in slow:
                        where = _caller(EMULATOR + TORCH_MECHANICS)
                        if where is not None:
                            text = f"{str(result.dtype).replace('torch.', '')}"
                            _state["dtypes_on_npu"][f"{text} at {where[0]}:{where[1]}"] += 1
            return result

    DtypeWatch().__enter__()  # for the life of the process (the main thread's mode stack)
    _state["device_watch"] = True


def _max_memory():
    try:
        import torch
    except Exception:
        return None
    for name in ("npu", "cuda"):
        module = getattr(torch, name, None)
        if module is None or not hasattr(module, "max_memory_allocated"):
            continue
        try:
            if name == "cuda" and not module.is_available():
                continue
            return int(module.max_memory_allocated())
        except Exception:
            continue
    return None


def _project_files() -> list[str]:
    """The files of the code this process loaded from the folder it ran in (the project): its modules and script."""
    root = os.path.realpath(os.getcwd()) + os.sep
    # (__main__ has lost its __file__ by exit: the script is argv[0]; torch.ops and torch.classes have made-up ones)
    paths = [getattr(module, "__file__", None) for module in list(sys.modules.values())] + sys.argv[:1]
    files = set()
    for path in paths:
        if isinstance(path, str) and path.endswith(".py") and os.path.isfile(path):
            real = os.path.realpath(path)
            if real.startswith(root) and "site-packages" not in real:
                files.add(real)
    return sorted(files)


def _write() -> None:
    folder = os.environ.get(OUT_ENV)
    if not folder:
        return
    times = _state["backward_times"]
    report = {
        "pid": os.getpid(),
        "argv": list(sys.argv),
        "losses": _state["losses"],
        "todo_lines_hit": {k: sorted(v) for k, v in _state["todo_lines_hit"].items()},
        "dtypes_on_npu": dict(_state["dtypes_on_npu"]),
        "compute_dtypes": dict(_state["compute_dtypes"]),
        "project_files": _project_files(),
        "syncs_in_loops": {k: v for k, v in _state["syncs"].items() if v >= SYNC_REPEATED},
        "torch_imported": _state["torch_imported"],
        "npu_tensors": _state["npu_tensors"],
        "device_watch": _state["device_watch"],
        "wall_s": round(time.monotonic() - _started, 3),
        "step_times_s": [round(b - a, 6) for a, b in zip(times, times[1:])],
        "max_memory_bytes": _max_memory() if _state["torch_imported"] else None,
    }
    try:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"probe-{os.getpid()}.json"), "w", encoding="utf-8") as stream:
            json.dump(report, stream)
    except OSError:
        pass

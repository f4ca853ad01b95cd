"""``torch.npu`` under ascend-port emulate: the device, memory, stream, event, random and amp functions of
torch_npu with CPU behaviour. The target release's other names raise NotImplementedError when called; names it
lacks raise AttributeError."""

from __future__ import annotations

import contextlib
import os
import sys
import time
import types

import torch
from torch_npu import _inventory, _report

EMULATED_NAME = "Ascend NPU (emulated on CPU by ascend-port)"


def _native():
    return torch._ascend_port_emulate_native


def _index(device=None) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "npu":
        raise ValueError(f"expected an npu device, got {device}")
    return current_device() if device.index is None else device.index


# device


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def init() -> None:
    pass


def _lazy_init() -> None:
    pass


def _is_in_bad_fork() -> bool:
    return False


def device_count() -> int:
    return _native().device_count()


def current_device() -> int:
    return _native().current_device()


def set_device(device) -> None:
    _native().set_device(_index(device))


class device:
    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = current_device()
        if self.idx >= 0:
            set_device(self.idx)

    def __exit__(self, *exc):
        set_device(self.prev_idx)
        return False


class device_of(device):
    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_npu else None)


def synchronize(device=None) -> None:
    pass


def get_device_name(device=None) -> str:
    return EMULATED_NAME


def get_device_capability(device=None):
    return None


class _NPUDeviceProperties:
    """torch_npu documents only these five properties (no major/minor/multi_processor_count): a port that reads
    another fails here as it would on an NPU. Core counts and L2 size are those of an Atlas 800T A2 (910B)."""

    __slots__ = ("name", "total_memory", "L2_cache_size", "cube_core_num", "vector_core_num")

    def __init__(self, index: int):
        self.name = EMULATED_NAME
        self.total_memory = _host_memory()
        self.L2_cache_size = 192 * 1024 * 1024
        self.cube_core_num = 24
        self.vector_core_num = 48

    def __repr__(self) -> str:
        return (
            f"_NPUDeviceProperties(name='{self.name}', total_memory={self.total_memory // 2**20}MB, "
            f"cube_core_num={self.cube_core_num}, vector_core_num={self.vector_core_num}, "
            f"L2_cache_size={self.L2_cache_size // 2**20}MB)"
        )


def get_device_properties(device=None):
    return _NPUDeviceProperties(_index(device))


def is_bf16_supported(*args, **kwargs) -> bool:
    return True


def utilization(device=None) -> int:
    return 0


# memory: what the npu tensors hold, counted by the native device (no caching allocator: reserved == allocated)


def _memory(device=None) -> tuple[int, int, int, int]:
    """(bytes allocated, peak, allocations, frees) of an npu device."""
    return tuple(_native().memory_stats(_index(device)))


def _host_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def empty_cache() -> None:
    pass


def memory_allocated(device=None) -> int:
    return _memory(device)[0]


def max_memory_allocated(device=None) -> int:
    return _memory(device)[1]


def memory_reserved(device=None) -> int:
    return _memory(device)[0]


def max_memory_reserved(device=None) -> int:
    return _memory(device)[1]


memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def reset_peak_memory_stats(device=None) -> None:
    _native().reset_peak_memory(_index(device))


reset_max_memory_allocated = reset_max_memory_cached = reset_peak_memory_stats


def reset_accumulated_memory_stats(device=None) -> None:
    pass


def memory_stats(device=None) -> dict:
    """The keys of torch.cuda.memory_stats that scripts read most, with the counted values."""
    allocated, peak, allocations, frees = _memory(device)
    stats = {"num_alloc_retries": 0, "num_ooms": 0, "num_device_alloc": allocations, "num_device_free": frees}
    for kind in ("allocated_bytes", "reserved_bytes", "active_bytes"):
        stats.update({f"{kind}.all.current": allocated, f"{kind}.all.peak": peak})
    stats.update({"allocation.all.allocated": allocations, "allocation.all.freed": frees})
    stats["allocation.all.current"] = allocations - frees
    return dict(sorted(stats.items()))


def memory_summary(device=None, abbreviated=False) -> str:
    allocated, peak, _, _ = _memory(device)
    return f"{EMULATED_NAME}, npu:{_index(device)}: {allocated} bytes allocated, peak {peak} (no caching allocator)"


def mem_get_info(device=None) -> tuple[int, int]:
    total = _host_memory()
    try:
        free = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        free = total
    return free, total


# random: the npu draws from the CPU generator


def manual_seed(seed) -> None:
    torch.default_generator.manual_seed(int(seed))


def manual_seed_all(seed) -> None:
    torch.default_generator.manual_seed(int(seed))


def seed() -> None:
    torch.default_generator.seed()


seed_all = seed


def initial_seed() -> int:
    return torch.default_generator.initial_seed()


def get_rng_state(device="npu"):
    return torch.default_generator.get_state()


def set_rng_state(new_state, device="npu") -> None:
    torch.default_generator.set_state(new_state)


def get_rng_state_all():
    return [get_rng_state() for _ in range(device_count())]


def set_rng_state_all(new_states) -> None:
    for state in new_states:
        set_rng_state(state)


# streams and events: the emulated device is synchronous


class Stream:
    def __init__(self, device=None, priority=0, **kwargs):
        self.device = torch.device("npu", _index(device))
        self.priority = priority

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def wait_event(self, event) -> None:
        pass

    def wait_stream(self, stream) -> None:
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device == self.device

    def __hash__(self):
        return hash(self.device)


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream=None) -> None:
        self._time = time.perf_counter()

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event) -> float:
        if self._time is None or end_event._time is None:
            raise RuntimeError("elapsed_time: both events must be recorded")
        return (end_event._time - self._time) * 1000.0


_current_streams: dict[int, Stream] = {}


def is_current_stream_capturing() -> bool:
    return False  # NPU graphs are not emulated: nothing is ever captured


def current_stream(device=None) -> Stream:
    index = _index(device)
    return _current_streams.get(index) or Stream(index)


def default_stream(device=None) -> Stream:
    return Stream(_index(device))


def set_stream(stream) -> None:
    if stream is not None:
        _current_streams[stream.device.index] = stream


@contextlib.contextmanager
def stream(stream):
    if stream is None:
        yield
        return
    previous = _current_streams.get(stream.device.index)
    _current_streams[stream.device.index] = stream
    try:
        yield
    finally:
        if previous is None:
            _current_streams.pop(stream.device.index, None)
        else:
            _current_streams[stream.device.index] = previous


class StreamContext:
    def __init__(self, stream):
        self._context = globals()["stream"](stream)

    def __enter__(self):
        return self._context.__enter__()

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)


# amp


def get_amp_supported_dtype():
    return [torch.float16, torch.bfloat16]


def is_autocast_enabled() -> bool:
    return torch.is_autocast_enabled("npu")


def set_autocast_enabled(enabled: bool) -> None:
    torch.set_autocast_enabled("npu", enabled)


def get_autocast_dtype():
    return torch.get_autocast_dtype("npu")


def set_autocast_dtype(dtype) -> None:
    torch.set_autocast_dtype("npu", dtype)


# settings objects: reads give the value, writes are stored and reported (a name they lack: reported absent)


class _Settings:
    """torch.npu.matmul / conv / config (torch_npu/npu/npu_config.py): the settings the facts name, with their
    documented defaults (HF32: matmul off, conv on). The emulator computes in float32 whatever they say."""

    def __init__(self, qualname: str, defaults: dict[str, object]):
        object.__setattr__(self, "_qualname", qualname)
        object.__setattr__(self, "_values", dict(defaults))

    def __getattr__(self, name: str):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise _inventory._missing(object.__getattribute__(self, "_qualname"), name)

    def __setattr__(self, name: str, value) -> None:
        qualname = f"{self._qualname}.{name}"
        if name in self._values:
            _report.record_write(qualname)
        else:  # python would take it; the release has no such setting (a typo, or a later release's)
            _report.record_absent(qualname)
        self._values[name] = value

    def __repr__(self) -> str:
        return f"<{self._qualname}: {self._values}>"


matmul = _Settings("torch_npu.npu.matmul", {"allow_hf32": False})
conv = _Settings("torch_npu.npu.conv", {"allow_hf32": True})
config = _Settings("torch_npu.npu.config", {"allow_internal_format": False})


# counting, the inventory, submodules

_NOT_COUNTED = {"_is_in_bad_fork", "is_initialized", "_lazy_init", "current_device", "device_count"}
_module = sys.modules[__name__]
_IMPORTED = {"annotations", "contextlib", "os", "sys", "time", "types", "torch", "EMULATED_NAME"}
_emulated: dict[str, object] = {}
for _name, _value in list(vars(_module).items()):
    if _name.startswith("_") or _name in _IMPORTED:
        continue
    if isinstance(_value, types.FunctionType) and _name not in _NOT_COUNTED:
        _value = _report.counted(f"torch.npu.{_name}", _value)
        setattr(_module, _name, _value)
    _emulated[_name] = _value

from torch_npu.npu import amp  # noqa: E402

_emulated["amp"] = amp
_API = _inventory.inventory()


class _Submodule(types.ModuleType):
    """A torch_npu.npu submodule: a write to one of its names (torch.npu.aclnn.allow_hf32 = True) is reported, one
    to a name the release lacks goes to "absent"; the value is kept either way, as Python would."""

    def __setattr__(self, name: str, value) -> None:
        if not name.startswith("_"):
            known = name in _API["npu_submodules"].get(self.__name__.rpartition(".")[2], ())
            (_report.record_write if known else _report.record_absent)(f"{self.__name__}.{name}")
        super().__setattr__(name, value)


def _submodule(name: str) -> types.ModuleType:
    submodule = _Submodule(f"torch_npu.npu.{name}")
    names = _API["npu_submodules"][name]
    submodule.__getattr__ = _inventory.module_getattr(
        f"torch_npu.npu.{name}", names, {n: _emulated[n] for n in names if n in _emulated}
    )
    sys.modules[submodule.__name__] = submodule
    return submodule


for _name in _API["npu_submodules"]:
    if _name not in ("amp", "mstx"):
        setattr(_module, _name, _submodule(_name))

from torch_npu.npu import mstx as _mstx_module  # noqa: E402

# As in torch_npu (`from .mstx import mstx`), torch.npu.mstx is the class of that module, not the module.
mstx = _emulated["mstx"] = _mstx_module.mstx

# What the target release lacks is absent here too (AttributeError), even where the emulator could do it.
for _name in [n for n in _emulated if n not in _API["npu"] and n not in _API["npu_submodules"]]:
    del _emulated[_name]
    delattr(_module, _name)

__getattr__ = _inventory.module_getattr("torch_npu.npu", _API["npu"], _emulated)

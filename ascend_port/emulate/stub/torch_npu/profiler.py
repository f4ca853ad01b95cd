"""torch_npu.profiler under ascend-port emulate: not emulated (use torch.profiler)."""

from torch_npu import _inventory

__getattr__ = _inventory.module_getattr("torch_npu.profiler", _inventory.inventory()["profiler"])

"""torch_npu.optim under ascend-port emulate: the fused optimizers are not emulated (use torch.optim)."""

from torch_npu import _inventory

__getattr__ = _inventory.module_getattr("torch_npu.optim", _inventory.inventory()["optim"])

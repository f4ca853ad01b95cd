"""torch_npu.distributed under ascend-port emulate: the ``hccl`` backend is gloo; npu tensors reach gloo as CPU
aliases of their memory (the emulated device routes the c10d collectives to their CPU kernels)."""

from __future__ import annotations

from torch_npu import _inventory, _report


def is_hccl_available() -> bool:
    _report.record_call("torch_npu.distributed.is_hccl_available")
    return True


def _create_hccl(store, group_rank, group_size, timeout):
    from torch.distributed import ProcessGroupGloo

    return ProcessGroupGloo(store, group_rank, group_size, timeout)


def _register_hccl() -> None:
    import torch.distributed as dist

    if not dist.is_available():
        return
    if "hccl" not in dist.Backend.backend_list:
        dist.Backend.register_backend("hccl", _create_hccl, devices=["cpu", "npu"])
    dist.is_hccl_available = is_hccl_available


__getattr__ = _inventory.module_getattr(
    "torch_npu.distributed", _inventory.inventory()["distributed"], {"is_hccl_available": is_hccl_available}
)

"""torch_npu.distributed under ascend-port emulate: the ``hccl`` backend is gloo; npu tensors reach gloo as CPU
aliases of their memory (the emulated device routes the c10d collectives to their CPU kernels)."""

from __future__ import annotations

import atexit
import functools
import gc

from torch_npu import _inventory, _report


def is_hccl_available() -> bool:
    _report.record_call("torch_npu.distributed.is_hccl_available")
    return True


def _create_hccl(store, group_rank, group_size, timeout):
    from torch.distributed import ProcessGroupGloo

    _collect_before_finalizing()
    return ProcessGroupGloo(store, group_rank, group_size, timeout)


@functools.cache
def _collect_before_finalizing() -> None:
    """A gloo group kept alive by a reference cycle (DDP's reducer holds it) is freed by the interpreter's last
    collection, when a gloo thread that reaches for the GIL is ended by Python mid-C++ and the process aborts
    ("terminate called without an active exception", one run in three on a loaded machine, torch 2.13 on CPU alone).
    Collecting at exit, while the interpreter still runs, frees it in time."""
    atexit.register(gc.collect)


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

"""ascend-port: port PyTorch projects from NVIDIA CUDA to Huawei Ascend NPUs (torch_npu)."""

from __future__ import annotations

import os

__version__ = "0.1.0"


def activate(project: str | os.PathLike[str] = ".", torch_npu: str | None = None) -> object:
    """`ascend-port run` in this interpreter (a notebook): the project's modules imported from now on are ported in
    memory, as `apply` would port them; no file changes. See ascend_port/onthefly/activate.py."""
    from ascend_port.onthefly.activate import activate as start  # (the CLI's machinery, loaded only when asked for)

    return start(project, torch_npu)

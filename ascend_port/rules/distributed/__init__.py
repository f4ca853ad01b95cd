"""NPU2xx: distributed training. NCCL backends and environment variables, device meshes, FSDP's device_id.

On an Ascend host the collective library is HCCL: torch_npu registers the ``hccl`` process-group backend for the
``npu`` device (and ``torch.distributed.Backend.HCCL`` with it), so every place that names NCCL must name HCCL.

These rules meet on the same nodes (strings, calls, names) and share the marks made top-down, so they run as one
transformer, built in layers, one module each, every layer a subclass of the one below (each hook is defined in one
layer; a layer may use the ones below it):

- ``base.py``: the state and the marks of every layer, and the helpers that read string literals and targets;
- ``env_vars.py``: NPU207, NPU208, NPU209, the NCCL environment variables and their table (which the shell rules
  read too);
- ``backends.py``: NPU200, NPU201, NPU202, ``"nccl"`` as a backend argument, a setting, a comparison (and the strings
  of the rules above);
- ``process_groups.py``: NPU203, NPU204, ``is_nccl_available``, ``ProcessGroupNCCL``, ``Backend.NCCL`` (and the
  marks of calls);
- ``devices.py``: NPU205, NPU206, NPU210, device meshes, FSDP's ``device_id``, integer devices (and the calls of the
  rules above)."""

from __future__ import annotations

import ast

from ascend_port.python.scopes import Trigger, innermost
from ascend_port.rules.distributed.backends import BACKEND_ARGUMENT, BACKEND_COMPARISON, BACKEND_STRING
from ascend_port.rules.distributed.devices import (
    DEVICE_MESH_TYPE,
    FSDP_DEVICE_ID,
    INTEGER_DEVICE,
    DistributedDeviceRules,
)
from ascend_port.rules.distributed.env_vars import NCCL_ENV_VAR, NCCL_ENV_VAR_REVIEW, NCCL_ENV_VAR_UNSUPPORTED
from ascend_port.rules.distributed.process_groups import IS_NCCL_AVAILABLE, PROCESS_GROUP_NCCL


class DistributedTransformer(DistributedDeviceRules):
    """NPU200-NPU209."""

    TRIGGERS = (
        r"nccl|NCCL",
        r"DeviceMesh|init_device_mesh",
        r"device_id\b",
        # NPU210 reads the function around an index computed from the device count.
        Trigger(r"\b(?:device_count|current_device)\(", scope=innermost(ast.FunctionDef, ast.AsyncFunctionDef)),
    )
    RULES = (
        BACKEND_ARGUMENT,
        BACKEND_STRING,
        BACKEND_COMPARISON,
        IS_NCCL_AVAILABLE,
        PROCESS_GROUP_NCCL,
        DEVICE_MESH_TYPE,
        FSDP_DEVICE_ID,
        NCCL_ENV_VAR,
        NCCL_ENV_VAR_REVIEW,
        NCCL_ENV_VAR_UNSUPPORTED,
        INTEGER_DEVICE,
    )

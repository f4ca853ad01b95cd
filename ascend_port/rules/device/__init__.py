"""NPU1xx: the device layer. ``.cuda()``, device strings, ``torch.cuda.*``, TF32 flags, CUDA environment variables.

These rules meet on the same nodes (calls, attributes, strings) and share what the guards keep, so they run as one
transformer, built in layers, one module each, every layer a subclass of the one below (each hook is defined in one
layer; a layer may use the ones below it):

- ``strings.py``: device strings in their shapes (no rule of its own; precision and distributed use them too);
- ``base.py``: the state and the questions of every layer;
- ``guards.py``: NPU108, NPU112, NPU115, the capability probes and what they guard (kept as CUDA code);
- ``torch_cuda.py``: NPU101, NPU102, NPU106, NPU107, NPU109, NPU110, tensors' ``cuda()``/``is_cuda``, ``torch.cuda``
  and its imports;
- ``methods.py``: NPU113, NPU114, a class's own ``cuda()``;
- ``settings.py``: NPU104, NPU105, NPU111, device settings, comparisons, environment variables;
- ``calls.py``: NPU103, device arguments (and the calls of the rules above)."""

from __future__ import annotations

from ascend_port.python.scopes import FUNCTIONS, Trigger, outermost
from ascend_port.rules.device.calls import DEVICE_ARGUMENT, CallRules
from ascend_port.rules.device.guards import ADVISORY_CAPABILITY_CHECK, DEVICE_CAPABILITY, FEATURE_GATE
from ascend_port.rules.device.methods import USER_CUDA_METHOD, USER_NPU_METHOD
from ascend_port.rules.device.settings import CUDA_ENV_VAR, DEVICE_COMPARISON, DEVICE_SETTING
from ascend_port.rules.device.torch_cuda import (
    CONV_TF32,
    CUDA_METHOD,
    IS_CUDA,
    MATMUL_TF32,
    TORCH_CUDA_API,
    TORCH_CUDA_UNSUPPORTED,
)


class DeviceTransformer(CallRules):
    """NPU101-NPU115. One class because these rules meet on the same nodes (calls, attributes, strings)."""

    # Every name these rules rewrite is lower-case `cuda` (`.cuda()`, `torch.cuda`, "cuda:0", `is_cuda`) or one of
    # the upper-case environment variables; "CUDA" in prose and constants is not theirs.
    TRIGGERS = (
        r"cuda",
        r"cudnn",
        r"CUDA_(?:VISIBLE_DEVICES|LAUNCH_BLOCKING|ALLOC_CONF|MEMORY_CACHING)",
        # a probe's guards (its variable's uses, an early exit before it) are in its function (NPU108, NPU112)
        Trigger(r"get_device_(?:capability|properties)", outermost(*FUNCTIONS)),
        # `from torch.cuda import ExternalStream`, then a call of it on a foreign handle (NPU107's TODO)
        Trigger(r"\bExternalStream\(", also=("torch.cuda",)),
    )
    RULES = (
        CUDA_METHOD,
        USER_CUDA_METHOD,
        USER_NPU_METHOD,
        IS_CUDA,
        DEVICE_ARGUMENT,
        DEVICE_SETTING,
        DEVICE_COMPARISON,
        TORCH_CUDA_API,
        TORCH_CUDA_UNSUPPORTED,
        DEVICE_CAPABILITY,
        MATMUL_TF32,
        CONV_TF32,
        CUDA_ENV_VAR,
        FEATURE_GATE,
        ADVISORY_CAPABILITY_CHECK,
    )

"""CPU references of the torch_npu (and MindIE-SD) ops that ascend-port emits. Test code only.

The implementation moved to ascend_port/emulate/ops.py, shared with the NPU emulator's stand-in torch_npu; this
module re-exports it so the tests keep importing ``npu_reference``.
"""

from __future__ import annotations

from ascend_port.emulate.ops import *  # noqa: F403
from ascend_port.emulate.ops import __all__  # noqa: F401 (the same names)

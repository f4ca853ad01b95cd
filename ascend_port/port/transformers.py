"""The Python transforms, one module per migration domain. ``TRANSFORMERS`` is the order they run in."""

from __future__ import annotations

from ascend_port.python.transformer import PortContext, PortTransformer, run_transformers
from ascend_port.rules.attention.attention import AttentionTransformer
from ascend_port.rules.attention.attention_match import EagerAttentionTransformer
from ascend_port.rules.attention.import_guard import ImportGuardTransformer
from ascend_port.rules.attention.norms import ApexNormTransformer, NormTransformer
from ascend_port.rules.attention.padding import PaddingTransformer
from ascend_port.rules.attention.sdpa_fusion import SdpaFusionTransformer
from ascend_port.rules.attention.unused_imports import UnusedImportTransformer
from ascend_port.rules.compile import CompileTransformer
from ascend_port.rules.device import DeviceTransformer
from ascend_port.rules.distributed import DistributedTransformer
from ascend_port.rules.frameworks import FrameworkTransformer
from ascend_port.rules.islands import IslandTransformer
from ascend_port.rules.kernels import KernelTransformer
from ascend_port.rules.kernels.kernel_tests import KernelTestTransformer
from ascend_port.rules.libraries import LibraryTransformer
from ascend_port.rules.multidevice import MultiDeviceTransformer
from ascend_port.rules.optimizers import FusedByDefaultTransformer, FusedOptimizerTransformer
from ascend_port.rules.perf.step_loop import StepLoopTransformer
from ascend_port.rules.precision import PrecisionCallTransformer, PrecisionTransformer
from ascend_port.rules.target_api import TargetApiTransformer
from ascend_port.rules.triton_kernels import TritonKernelTransformer

# The order they leave each node in; what a transformer must follow says its RUNS_AFTER (tests/test_layout.py checks
# this order against them).
TRANSFORMERS: tuple[type[PortTransformer], ...] = (
    StepLoopTransformer,  # (changes nothing: it only reports)
    IslandTransformer,
    DeviceTransformer,
    DistributedTransformer,
    PrecisionCallTransformer,
    PrecisionTransformer,
    LibraryTransformer,
    KernelTestTransformer,
    FrameworkTransformer,
    CompileTransformer,
    FusedOptimizerTransformer,
    FusedByDefaultTransformer,
    AttentionTransformer,
    PaddingTransformer,
    NormTransformer,
    ApexNormTransformer,
    EagerAttentionTransformer,
    SdpaFusionTransformer,
    UnusedImportTransformer,
    ImportGuardTransformer,
    TritonKernelTransformer,
    KernelTransformer,
    MultiDeviceTransformer,
    TargetApiTransformer,
)

__all__ = ["TRANSFORMERS", "PortContext", "PortTransformer", "run_transformers"]

"""The Python transforms, one module per migration domain. ``TRANSFORMERS`` is the order they run in."""

from __future__ import annotations

from ascend_port.transforms.attention import AttentionTransformer
from ascend_port.transforms.base import PortContext, PortTransformer, run_transformers
from ascend_port.transforms.compile import CompileTransformer
from ascend_port.transforms.device import DeviceTransformer
from ascend_port.transforms.distributed import DistributedTransformer
from ascend_port.transforms.kernels import KernelTransformer
from ascend_port.transforms.libraries import LibraryTransformer
from ascend_port.transforms.norms import ApexNormTransformer, NormTransformer
from ascend_port.transforms.precision import PrecisionCallTransformer, PrecisionTransformer
from ascend_port.transforms.unused_imports import UnusedImportTransformer

# KernelTransformer turns some import statements into try statements, which ends the other transformers' handling
# of that node: it goes last.
TRANSFORMERS: tuple[type[PortTransformer], ...] = (DeviceTransformer, DistributedTransformer,
                                                   PrecisionCallTransformer, PrecisionTransformer,
                                                   LibraryTransformer, CompileTransformer, AttentionTransformer,
                                                   NormTransformer, ApexNormTransformer, UnusedImportTransformer,
                                                   KernelTransformer)

__all__ = ["TRANSFORMERS", "PortContext", "PortTransformer", "run_transformers"]

"""The Python transforms, one module per migration domain. ``TRANSFORMERS`` is the order they run in."""

from __future__ import annotations

from ascend_port.transforms.base import PortContext, PortTransformer, run_transformers
from ascend_port.transforms.device import DeviceTransformer

TRANSFORMERS: tuple[type[PortTransformer], ...] = (DeviceTransformer,)

__all__ = ["TRANSFORMERS", "PortContext", "PortTransformer", "run_transformers"]

"""Does the project scale its loss? The project step of optimizer-fused-on-npu (rules/optimizers.py), in a module
of its own: project steps are imported on every run, also one answered from the cache, which must not load LibCST
(the rule's transform does).

torch_npu's GradScaler.step calls ``optimizer.step(grad_scaler=self)`` for an optimizer with a fused step, which
torch's fused optimizers do not take; and a scaler made in one module steps the optimizer another module builds
(MAE's, Swin's and timm's train scripts and utils), so the answer is the whole project's.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Project, ProjectStep

# A loss scaler, or a library that makes one (accelerate's Accelerator, a mixed_precision setting).
SCALER = re.compile(r"(?i)scaler|\bAccelerator\b|mixed_precision")


class LossScaling(ProjectStep):
    """Does the project's Python name a loss scaler (PortOptions.loss_scaling)? A scaler made in one module steps
    the optimizer another module builds (MAE's, Swin's and timm's train scripts and utils)."""

    def facts(self, project: Project, options: PortOptions) -> PortOptions:
        scaler = re.compile(SCALER.pattern.encode())  # (the bytes as read: no decoding of files without one)
        for path in project.files:
            if path.suffix == ".py" and not options.loss_scaling:
                try:
                    if scaler.search(path.read_bytes()):
                        return replace(options, loss_scaling=True)
                except OSError:
                    continue
        return options


PROJECT_STEPS = (LossScaling(),)

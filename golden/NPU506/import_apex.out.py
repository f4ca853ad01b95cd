try:
    import apex
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    apex = None
import torch
import torch_npu


def train(model, optimizer, loss):
    # TODO(ascend-port): NPU506 [low] apex.amp: use torch.autocast("npu", dtype=...) with torch.npu.amp.GradScaler (amp.initialize -> drop it, amp.scale_loss(loss, opt) -> scaler.scale(loss)), or Ascend's apex patch
    with apex.amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    norm = torch.nn.RMSNorm(1024, eps=1e-6)
    return norm

try:
    import apex
except ImportError:  # no NPU build: the code that uses these names fails when it runs
    apex = None
import torch
import torch_npu


class _NpuRMSNorm(torch.nn.RMSNorm):
    """apex's FusedRMSNorm on NPU (written by ascend-port, rule NPU424): torch.nn.RMSNorm with apex's output
    dtype under autocast (the autocast dtype, where torch.nn's norms return float32)."""

    def forward(self, input):
        output = super().forward(input)
        if torch.is_autocast_enabled(input.device.type):
            return output.to(torch.get_autocast_dtype(input.device.type))
        return output


def train(model, optimizer, loss):
    # TODO(ascend-port): NPU506 [low] apex.amp: use torch.autocast("npu", dtype=...) with torch.npu.amp.GradScaler (amp.initialize -> drop it, amp.scale_loss(loss, opt) -> scaler.scale(loss)), or Ascend's apex patch
    with apex.amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    norm = _NpuRMSNorm(1024, eps=1e-6)
    return norm

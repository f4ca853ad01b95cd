import torch_npu
from torch import nn


class _NpuLayerNorm(nn.LayerNorm):
    """apex's FusedLayerNorm on NPU (written by ascend-port, rule NPU424): torch.nn.LayerNorm with apex's output
    dtype under autocast (the autocast dtype, where torch.nn's norms return float32)."""

    def forward(self, input):
        import torch as _torch  # (the module does not import torch)

        output = super().forward(input)
        if _torch.is_autocast_enabled(input.device.type):
            return output.to(_torch.get_autocast_dtype(input.device.type))
        return output


class Head(nn.Module):
    """Only `torch.nn` is imported: the subclass imports torch in its forward, under a private name."""

    def __init__(self, dim):
        super().__init__()
        self.norm = _NpuLayerNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(self.norm(x))

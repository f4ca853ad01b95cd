import torch
import torch_npu


class _NpuLayerNorm(torch.nn.LayerNorm):
    """apex's FusedLayerNorm on NPU (written by ascend-port, rule NPU424): torch.nn.LayerNorm with apex's output
    dtype under autocast (the autocast dtype, where torch.nn's norms return float32)."""

    def forward(self, input):
        output = super().forward(input)
        if torch.is_autocast_enabled(input.device.type):
            return output.to(torch.get_autocast_dtype(input.device.type))
        return output


class _NpuRMSNorm(torch.nn.RMSNorm):
    """apex's FusedRMSNorm on NPU (written by ascend-port, rule NPU424): torch.nn.RMSNorm with apex's output
    dtype under autocast (the autocast dtype, where torch.nn's norms return float32)."""

    def forward(self, input):
        output = super().forward(input)
        if torch.is_autocast_enabled(input.device.type):
            return output.to(torch.get_autocast_dtype(input.device.type))
        return output


def make_norm(dim, rms=False):
    """Several calls, in functions and classes: each subclass is written once, above its first user."""
    if rms:
        return _NpuRMSNorm(dim, eps=1e-6)
    return _NpuLayerNorm(dim)


class Encoder(torch.nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.norms = torch.nn.ModuleList([_NpuLayerNorm(dim) for _ in range(depth)])
        self.final = _NpuRMSNorm(dim, eps=1e-5)

    def forward(self, x):
        for norm in self.norms:
            x = norm(x)
        return self.final(x)

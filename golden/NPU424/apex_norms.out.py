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


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn_norm = _NpuRMSNorm(dim, elementwise_affine=True, eps=1e-5)
        self.mlp_norm = _NpuRMSNorm(dim, eps=1e-6)
        self.final_norm = _NpuLayerNorm(dim, eps=1e-5, elementwise_affine=True)

    def forward(self, x):
        return self.final_norm(self.mlp_norm(self.attn_norm(x)))

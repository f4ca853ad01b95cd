import torch
import torch_npu


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn_norm = torch.nn.RMSNorm(dim, elementwise_affine=True, eps=1e-5)
        self.mlp_norm = torch.nn.RMSNorm(dim, eps=1e-6)
        self.final_norm = torch.nn.LayerNorm(dim, eps=1e-5, elementwise_affine=True)

    def forward(self, x):
        return self.final_norm(self.mlp_norm(self.attn_norm(x)))

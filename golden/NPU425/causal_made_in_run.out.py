"""Llama-style eager attention whose causal mask is made between the steps, of a size the run reads
(`seq = query.shape[-2]`): the mask's code goes into the fused call with the size read from q."""

import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
import torch.nn.functional as F


def attention(query, key, value, scaling):
    if query.device.type == "npu":
        return torch_npu.npu_fusion_attention(
            query, key, value, query.shape[1], "BNSD",
            atten_mask=torch.triu(torch.ones(query.shape[-2], query.shape[-2], dtype=torch.bool, device=query.device), diagonal=1).expand(query.shape[0], 1, query.shape[2], key.shape[2]),
            scale=scaling,
            inner_precise=2,
        )[0]
    else:
        attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
        seq = query.shape[-2]
        causal = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=query.device), diagonal=1)
        attn_weights = attn_weights.masked_fill(causal, float("-inf"))
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
        return torch.matmul(attn_weights, value)


def dropped_mask(query, key, value, scaling):
    # a mask of random draws made in the run: written twice it would draw twice, so the attention is left
    # TODO(ascend-port): NPU429 [low] attention left unfused (torch_npu.npu_fusion_attention): `drop` reads a value of the computation
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    drop = torch.rand(query.shape[-2], key.shape[-2], device=query.device) < 0.1
    attn_weights = attn_weights.masked_fill(drop, float("-inf"))
    attn_weights = F.softmax(attn_weights, dim=-1)
    return torch.matmul(attn_weights, value)

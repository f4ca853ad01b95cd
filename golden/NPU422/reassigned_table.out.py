import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


# transformers 4.33 Llama: the table is re-assigned before use, and 4-D at the use
def apply_rotary_pos_emb(q, k, cos, sin, position_ids):
    # The first two dimensions of cos and sin are always 1, so we can `squeeze` them.
    cos = cos.squeeze(1).squeeze(0)  # [seq_len, dim]
    sin = sin.squeeze(1).squeeze(0)  # [seq_len, dim]
    cos = cos[position_ids].unsqueeze(1)  # [bs, 1, seq_len, dim]
    sin = sin[position_ids].unsqueeze(1)  # [bs, 1, seq_len, dim]
    q_embed = torch_npu.npu_rotary_mul(q, cos, sin) if q.device.type == "npu" else (q * cos) + (rotate_half(q) * sin)
    k_embed = torch_npu.npu_rotary_mul(k, cos, sin) if k.device.type == "npu" else (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed

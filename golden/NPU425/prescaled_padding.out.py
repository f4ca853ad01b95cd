"""q scaled before the product, GQA by repeat_interleave, a (B, 1, 1, S) padding mask filled with the dtype's lowest
value (broadcast to B1SS for the op), the result returned directly."""

import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass


def attend(q, k, v, keep, head_dim: int):
    if q.device.type == "npu":
        return torch_npu.npu_fusion_attention(
            q, k, v, q.shape[1], "BNSD",
            atten_mask=(~keep[:, None, None, :]).expand(q.shape[0], 1, q.shape[2], k.shape[2]),
            scale=head_dim ** (-0.5),
            inner_precise=2,
        )[0]
    else:
        q = q * head_dim**-0.5
        k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
        v = torch.repeat_interleave(v, q.shape[1] // v.shape[1], dim=1)
        scores = torch.matmul(q, k.transpose(2, 3))
        scores = scores.masked_fill(~keep[:, None, None, :], torch.finfo(scores.dtype).min)
        probs = torch.softmax(scores.float(), dim=-1).type_as(q)
        return torch.matmul(probs, v)

import torch_npu


_NPU_ATTENTION_MASKS = {}


def _npu_flash_attn(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                    cu_seqlens_q=None, cu_seqlens_k=None, top_left=False):
    """flash-attn's attention on torch_npu.npu_fusion_attention (written by ascend-port, rules NPU400-NPU405).

    q, k, v: (batch, seq, heads, head_dim), or (tokens, heads, head_dim) with cu_seqlens_q/k (varlen). Fewer
    key/value heads than query heads (GQA) need no repeat. Causal and sliding-window masks align bottom-right, as
    in flash-attn >= 2.1; top_left=True aligns a causal mask top-left (xformers' LowerTriangularMask).
    """
    import torch as _torch  # (the module does not import torch)

    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5  # the op's own default scale is 1.0
    left, right = window_size
    options = {}
    if cu_seqlens_q is None:
        if causal and not top_left and q.shape[1] > k.shape[1]:
            # bottom-right causal with more queries than keys: the first rows see no key and flash-attn writes 0
            # there (the op documents nothing for such rows), so they are left out of the call
            cut = q.shape[1] - k.shape[1]
            out = _npu_flash_attn(q[:, cut:], k, v, dropout_p, softmax_scale, causal, window_size)
            return _torch.cat([out.new_zeros(out.shape[0], cut, *out.shape[2:]), out], dim=1)
        layout, head_num = "BSND", q.shape[2]
        lengths = []
    else:  # the op takes the cumulative sequence ends as host lists, at most 1024 sequences per call
        if len(cu_seqlens_q) > 1025:
            parts = []
            for i in range(0, len(cu_seqlens_q) - 1, 1024):
                cq, ck = cu_seqlens_q[i:i + 1025], cu_seqlens_k[i:i + 1025]
                parts.append(_npu_flash_attn(q[cq[0]:cq[-1]], k[ck[0]:ck[-1]], v[ck[0]:ck[-1]], dropout_p,
                                             softmax_scale, causal, window_size, cq - cq[0], ck - ck[0], top_left))
            return _torch.cat(parts)
        layout, head_num = "TND", q.shape[1]
        ends_q, ends_k = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
        options.update(actual_seq_qlen=ends_q[1:], actual_seq_kvlen=ends_k[1:])
        lengths = [(b - a, d - c) for a, b, c, d in zip(ends_q, ends_q[1:], ends_k, ends_k[1:])]
    if causal or left >= 0 or right >= 0:
        if causal and not top_left and any(sq > sk for sq, sk in lengths):
            # a sequence with more queries than keys: its first rows see no key (flash-attn writes 0 there), and
            # npu_fusion_attention documents nothing for such rows
            raise NotImplementedError("varlen causal attention with more queries than keys (fully masked rows)")
        mask = _NPU_ATTENTION_MASKS.get(q.device)
        if mask is None:  # the compressed 2048x2048 mask of the causal and band modes (True: masked out)
            with _torch.inference_mode(False):  # the op saves it for backward: never an inference tensor
                mask = _torch.triu(_torch.ones(2048, 2048, dtype=_torch.bool, device=q.device), diagonal=1)
            _NPU_ATTENTION_MASKS[q.device] = mask
        options["atten_mask"] = mask
        if left < 0 and right < 0:
            options["sparse_mode"] = 2 if top_left else 3
        else:  # band mode: keys from i - left to i + right around the bottom-right diagonal
            options.update(sparse_mode=4, pre_tockens=left if left >= 0 else 2147483647,
                           next_tockens=0 if causal else right if right >= 0 else 2147483647)
    return torch_npu.npu_fusion_attention(q, k, v, head_num, layout, scale=softmax_scale,
                                          keep_prob=1.0 - dropout_p, **options)[0]


def _npu_memory_efficient_attention(q, k, v, p=0.0, scale=None, causal=False, top_left=False, mask=None):
    """xformers.ops.memory_efficient_attention on NPU (written by ascend-port, rule NPU405): BMHK inputs, or BMK
    inputs as a single head; scale=None means q.shape[-1] ** -0.5, as in xformers. ``mask``: an attn_bias tensor
    that is an attention mask, 0 where a key is attended and a large negative where not (True: masked out)."""
    if q.dim() == 3:
        mask = None if mask is None else mask.unsqueeze(1)  # (B, Mq, Mk): one head
        out = _npu_memory_efficient_attention(q.unsqueeze(2), k.unsqueeze(2), v.unsqueeze(2), p, scale, causal,
                                              top_left, mask)
        return out.squeeze(2)
    if mask is not None:
        return torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND",
                                              atten_mask=(mask < 0).expand(q.shape[0], -1, q.shape[1], k.shape[1]),
                                              scale=q.shape[-1] ** -0.5 if scale is None else scale,
                                              keep_prob=1.0 - p, inner_precise=2)[0]
    return _npu_flash_attn(q, k, v, p, scale, causal, top_left=top_left)


class XFormersAttnProcessor:
    def __init__(self, attention_op=None):
        self.attention_op = attention_op

    def __call__(self, query, key, value, scale=None):
        # (batch * heads, seq, head_dim), as diffusers' head_to_batch_dim makes them
        hidden_states = _npu_memory_efficient_attention(
            query, key, value, scale=scale
        )
        return hidden_states.to(query.dtype)

"""transformers' sdpa_attention_forward (4.4x): HF's additive `causal_mask` (0 / the dtype's lowest value) sliced to
the keys, `is_causal` a name, dropout and scaling given, GQA through `**sdpa_kwargs` (enable_gqa alone)."""

import torch
try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass


def sdpa_attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None):
    sdpa_kwargs = {"enable_gqa": True} if key.shape[1] != query.shape[1] else {}
    causal_mask = attention_mask
    if attention_mask is not None and attention_mask.ndim == 4:
        causal_mask = causal_mask[:, :, :, : key.shape[-2]]
    if is_causal is None:
        is_causal = query.shape[2] > 1 and causal_mask is None and getattr(module, "is_causal", True)
    if (
        query.device.type == "npu"
        and causal_mask is not None
        and causal_mask.is_floating_point()
        and causal_mask.dim() == query.dim() == 4
        and not is_causal
    ):
        attn_output = torch_npu.npu_fusion_attention(
            query, key, value, query.shape[1], "BNSD",
            atten_mask=(causal_mask < 0).expand(query.shape[0], -1, query.shape[2], key.shape[2]),
            scale=scaling if scaling is not None else query.shape[-1] ** -0.5,
            keep_prob=1.0 - dropout,
            inner_precise=2,
        )[0]
    else:
        attn_output = torch.nn.functional.scaled_dot_product_attention(
            query,
            key,
            value,
            attn_mask=causal_mask,
            dropout_p=dropout,
            scale=scaling,
            is_causal=is_causal,
            **sdpa_kwargs,
        )
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, None

"""transformers' sdpa_attention_forward (4.4x): HF's additive `causal_mask` (0 / the dtype's lowest value) sliced to
the keys, `is_causal` a name, dropout and scaling given, GQA through `**sdpa_kwargs` (enable_gqa alone)."""

import torch


def sdpa_attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None):
    sdpa_kwargs = {"enable_gqa": True} if key.shape[1] != query.shape[1] else {}
    causal_mask = attention_mask
    if attention_mask is not None and attention_mask.ndim == 4:
        causal_mask = causal_mask[:, :, :, : key.shape[-2]]
    if is_causal is None:
        is_causal = query.shape[2] > 1 and causal_mask is None and getattr(module, "is_causal", True)
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

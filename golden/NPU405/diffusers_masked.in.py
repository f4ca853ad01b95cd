"""diffusers 0.18's XFormersAttnProcessor with an attention mask: (batch * heads, seq, head_dim) inputs, the additive
mask prepared per head and expanded over the queries (xformers does not broadcast it)."""

import xformers
import xformers.ops


class XFormersAttnProcessor:
    def __init__(self, attention_op=None):
        self.attention_op = attention_op

    def __call__(self, attn, query, key, value, attention_mask=None):
        attention_mask = attn.prepare_attention_mask(attention_mask, key.shape[1], query.shape[0] // attn.heads)
        if attention_mask is not None:
            attention_mask = attention_mask.expand(-1, query.shape[1], -1)
        hidden_states = xformers.ops.memory_efficient_attention(
            query, key, value, attn_bias=attention_mask, op=self.attention_op, scale=attn.scale
        )
        return hidden_states.to(query.dtype)


def biased(q, k, v, attention_mask, rel_pos_bias):
    # a bias added to the mask: left with NPU406's TODO
    attention_mask = attention_mask + rel_pos_bias
    return xformers.ops.memory_efficient_attention(q, k, v, attn_bias=attention_mask)


def dispatched(q, k, v, attn_mask, is_causal):
    # an xformers bias object on one path (LowerTriangularMask for is_causal): left with NPU406's TODO
    if is_causal:
        attn_mask = xformers.ops.LowerTriangularMask()
    elif attn_mask is not None:
        attn_mask = attn_mask.expand(q.shape[0], q.shape[2], q.shape[1], k.shape[1]).type_as(q)
    return xformers.ops.memory_efficient_attention(q, k, v, attn_mask)

import xformers
import xformers.ops


class XFormersAttnProcessor:
    def __init__(self, attention_op=None):
        self.attention_op = attention_op

    def __call__(self, query, key, value, scale=None):
        # (batch * heads, seq, head_dim), as diffusers' head_to_batch_dim makes them
        hidden_states = xformers.ops.memory_efficient_attention(
            query, key, value, attn_bias=None, op=self.attention_op, scale=scale
        )
        return hidden_states.to(query.dtype)

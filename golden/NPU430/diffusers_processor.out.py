"""diffusers' AttnProcessor2_0: the additive mask from `attn.prepare_attention_mask` (0 / -10000 per key, repeated
over the heads), viewed (B, heads, 1 or Sq, Sk); SDPA's default scale, no dropout."""

try:
    import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
except ImportError:
    pass
import torch.nn.functional as F


class AttnProcessor2_0:
    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None):
        batch_size, sequence_length, _ = hidden_states.shape
        if attention_mask is not None:
            attention_mask = attn.prepare_attention_mask(attention_mask, sequence_length, batch_size)
            attention_mask = attention_mask.view(batch_size, attn.heads, -1, attention_mask.shape[-1])
        if encoder_hidden_states is None:
            encoder_hidden_states = hidden_states
        query = attn.to_q(hidden_states)
        key = attn.to_k(encoder_hidden_states)
        value = attn.to_v(encoder_hidden_states)
        head_dim = key.shape[-1] // attn.heads
        query = query.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)

        # the output of sdp = (batch, num_heads, seq_len, head_dim)
        if (
            query.device.type == "npu"
            and attention_mask is not None
            and attention_mask.is_floating_point()
            and attention_mask.dim() == query.dim() == 4
        ):
            hidden_states = torch_npu.npu_fusion_attention(
                query, key, value, query.shape[1], "BNSD",
                atten_mask=(attention_mask < 0).expand(query.shape[0], -1, query.shape[2], key.shape[2]),
                scale=query.shape[-1] ** -0.5,
                inner_precise=2,
            )[0]
        else:
            hidden_states = F.scaled_dot_product_attention(
                query, key, value, attn_mask=attention_mask, dropout_p=0.0, is_causal=False
            )
        hidden_states = hidden_states.transpose(1, 2).reshape(batch_size, -1, attn.heads * head_dim)
        return attn.to_out[0](hidden_states)

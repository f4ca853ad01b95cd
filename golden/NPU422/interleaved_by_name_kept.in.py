from transformers.models.cohere.modeling_cohere import rotate_half as cohere_rotate_half
from transformers.models.glm.modeling_glm import rotate_half


# Cohere's and GLM's rotate_half rotate interleaved pairs (x[..., ::2], x[..., 1::2]): not the op's half mode
def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (cohere_rotate_half(k) * sin)
    return q_embed, k_embed

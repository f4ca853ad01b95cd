import torch
from flash_attn import __version__ as flash_attn_version
from flash_attn.bert_padding import pad_input, unpad_input

try:
    from flash_attn.flash_attn_interface import flash_attn_varlen_func

    has_flash_attn = True
except ImportError:
    has_flash_attn = False


def forward(q, k, v, mask, past=None):
    if past is not None:
        assert flash_attn_version >= "2.1.0", "past_key_value support requires flash-attn >= 2.1.0"
    b, s = q.shape[:2]
    q, indices, cu_q, max_q = unpad_input(q, mask)
    k, _, cu_k, max_k = unpad_input(k, mask)
    v, *_ = unpad_input(v, mask)
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=True)
    return pad_input(out, indices, b, s)

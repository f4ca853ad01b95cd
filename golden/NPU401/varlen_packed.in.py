from flash_attn.flash_attn_interface import flash_attn_varlen_kvpacked_func, flash_attn_varlen_qkvpacked_func


def self_attention(qkv, cu_seqlens, max_seqlen):
    return flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, causal=True)


def cross_attention(q, kv, cu_q, cu_k, max_q, max_k):
    return flash_attn_varlen_kvpacked_func(q, kv, cu_q, cu_k, max_q, max_k, softmax_scale=0.2)

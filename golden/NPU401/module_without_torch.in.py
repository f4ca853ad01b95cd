from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func


def self_attention(qkv, cu_seqlens, max_seqlen):
    return flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, causal=True)


def synchronize(torch):
    # `torch` is a parameter here, not the module (nothing imports torch): the attention helper's own import of
    # torch must not make it one, or a second run would port this line
    torch.cuda.synchronize()

from flash_attn import flash_attn_func


def softcapped(q, k, v):
    return flash_attn_func(q, k, v, causal=True, softcap=30.0)


def alibi(q, k, v, slopes):
    return flash_attn_func(q, k, v, 0.0, None, True, (-1, -1), 0.0, slopes)


def with_probs(q, k, v, **kwargs):
    return flash_attn_func(q, k, v, return_attn_probs=True, **kwargs)


def defaults_are_fine(q, k, v):
    return flash_attn_func(q, k, v, softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False)

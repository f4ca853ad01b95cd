import torch


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    """Meta Llama 2/3: the pairs of the head dim as complex numbers, rotated by freqs_cis = cos + i sin."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def rotate_unflattened(rotated, rotary_emb):
    # diffusers' SANA-WM: the pairs made with unflatten, the conjugate for the inverse rotation
    rotated_complex = torch.view_as_complex(rotated.to(torch.float32).unflatten(-1, (-1, 2)))
    return torch.view_as_real(rotated_complex * rotary_emb).flatten(-2, -1).type_as(rotated)

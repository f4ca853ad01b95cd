import torch


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    """Meta Llama 2/3: the pairs of the head dim as complex numbers, rotated by freqs_cis = cos + i sin."""
    # TODO(ascend-port): NPU427 [low] RoPE in complex numbers: torch.view_as_complex and view_as_real are slow or unsupported on the NPU; in real numbers the rotation of xq (and of each tensor viewed so here) is torch_npu.npu_rotary_mul(xq, cos, sin, rotary_mode="interleave") with cos and sin the real and imaginary parts of the complex factor repeated pairwise (freqs_cis.real and .imag, .repeat_interleave(2, -1)); not rewritten: the op takes a 4-D x (head_dim even, below 896) and tables broadcast as 11SD (BNSD) or 1S1D (BSND), shapes not known here, and the original computes in float32
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def rotate_unflattened(rotated, rotary_emb):
    # diffusers' SANA-WM: the pairs made with unflatten, the conjugate for the inverse rotation
    # TODO(ascend-port): NPU427 [low] RoPE in complex numbers: torch.view_as_complex and view_as_real are slow or unsupported on the NPU; in real numbers the rotation of rotated (and of each tensor viewed so here) is torch_npu.npu_rotary_mul(rotated, cos, sin, rotary_mode="interleave") with cos and sin the real and imaginary parts of the complex factor repeated pairwise (freqs_cis.real and .imag, .repeat_interleave(2, -1)); not rewritten: the op takes a 4-D x (head_dim even, below 896) and tables broadcast as 11SD (BNSD) or 1S1D (BSND), shapes not known here, and the original computes in float32
    rotated_complex = torch.view_as_complex(rotated.to(torch.float32).unflatten(-1, (-1, 2)))
    return torch.view_as_real(rotated_complex * rotary_emb).flatten(-2, -1).type_as(rotated)

import torch
from torch.backends.cuda import sdp_kernel


def attend(q, k, v):
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.backends.cuda.enable_flash_sdp(False)
    with sdp_kernel(enable_math=True):
        pass
    return out

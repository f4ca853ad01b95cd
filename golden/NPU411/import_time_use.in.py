import torch
from flash_attn.modules.mha import MHA
from flash_attn.ops.triton.layer_norm import RMSNorm as FlashRMSNorm


class Attention(MHA):
    # a base class is evaluated at import: the guard would not help, the import is left with its TODO
    pass


def norm(dim):
    return FlashRMSNorm(dim)


NORM = norm

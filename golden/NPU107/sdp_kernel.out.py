import torch
# TODO(ascend-port): NPU107 [low] torch.backends.cuda.sdp_kernel has no effect on NPU (torch_npu does not support it): drop its uses
from torch.backends.cuda import sdp_kernel


def attend(q, k, v):
    # TODO(ascend-port): NPU107 [low] torch.backends.cuda.sdp_kernel has no effect on NPU (torch_npu does not support it): drop it, or select the math kernel with torch.nn.attention.sdpa_kernel and torch_npu.npu.use_compatible_impl(True)
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    # TODO(ascend-port): NPU107 [low] torch.backends.cuda.enable_flash_sdp has no effect on NPU (torch_npu does not support it): drop it, or select the math kernel with torch.nn.attention.sdpa_kernel and torch_npu.npu.use_compatible_impl(True)
    torch.backends.cuda.enable_flash_sdp(False)
    with sdp_kernel(enable_math=True):
        pass
    return out

# A device test that chooses a CUDA-only kernel (TileLang; Triton, as NPU105 reads it) keeps `is_cuda`: ported to
# `is_npu`, it would send NPU tensors into the CUDA kernel; kept, the NPU takes the torch fallback. A test that
# chooses nothing CUDA-only is ported.
import torch
import torch_npu

try:
    import tilelang  # noqa: F401

    HAS_TILELANG = True
except ImportError:
    HAS_TILELANG = False


def tilelang_rms_norm(x):
    return x


def triton_rms_norm(x):
    return x


def torch_rms_norm(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def rms_norm(x):
    if x.is_cuda and HAS_TILELANG:
        return tilelang_rms_norm(x)
    else:
        return torch_rms_norm(x)


def rms_norm_triton(x, use_triton=True):
    use_kernel = use_triton and x.is_cuda
    if use_kernel:
        return triton_rms_norm(x)
    return torch_rms_norm(x)


def triton_norm_checked(x):
    # a guard with no fallback is ported: kept, it would fail on the NPU, where Triton-Ascend runs the kernel
    assert x.is_npu, "Triton kernel requires CUDA tensors"
    if not x.is_npu:
        raise RuntimeError("the Triton RMSNorm needs a GPU tensor")
    return triton_rms_norm(x)


def to_device(x):
    if not x.is_npu:  # no CUDA-only kernel here: ported
        x = x.npu()
    return x

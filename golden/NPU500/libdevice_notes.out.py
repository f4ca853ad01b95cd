import triton
import triton.language as tl
from triton.language.extra.cuda.libdevice import fast_expf
try:
    from triton.language.extra.cann import libdevice
except ImportError:
    try:
        from triton.language.extra.ascend import libdevice
    except ImportError:
        from triton.language.extra.cuda import libdevice


# TODO(ascend-port): NPU500 [low] Triton kernel gelu_kernel: run it on Triton-Ascend (triton-ascend replaces triton; grid <= 65535 programs, best one per AI core looping over the work); torch.nn.functional.gelu may already do this; else an Ascend C operator. Check: libdevice.fast_dividef/fast_expf missing on Ascend; tl.extra.cuda.libdevice is absent: import libdevice from triton.language.extra.cann
@triton.jit
def gelu_kernel(x_ptr, y_ptr):
    x = tl.load(x_ptr)
    y = 0.5 * x * (1 + libdevice.tanh(0.79788456 * (x + 0.044715 * x * x * x)))
    z = fast_expf(y) + libdevice.fast_dividef(y, 2.0) + tl.extra.cuda.libdevice.pow(y, 2.0)
    tl.store(y_ptr, z)

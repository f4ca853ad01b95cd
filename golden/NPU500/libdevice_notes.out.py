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

try:
    from triton.language.extra.cann import libdevice as _ap_libdevice
except ImportError:
    try:
        from triton.language.extra.ascend import libdevice as _ap_libdevice
    except ImportError:
        from triton.language.extra.cuda import libdevice as _ap_libdevice


# TODO(ascend-port): NPU500 [low] Triton kernel gelu_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; torch.nn.functional.gelu may already do this; else an Ascend C operator
@triton.jit
def gelu_kernel(x_ptr, y_ptr):
    x = tl.load(x_ptr)
    y = 0.5 * x * (1 + libdevice.tanh(0.79788456 * (x + 0.044715 * x * x * x)))
    # TODO(ascend-port): NPU500 [low] libdevice.fast_expf is not in Triton-Ascend's libdevice: use the tl/tl.math function or tl ops
    # TODO(ascend-port): NPU500 [low] libdevice.fast_dividef is not in Triton-Ascend's libdevice: use the tl/tl.math function or tl ops
    z = fast_expf(y) + libdevice.fast_dividef(y, 2.0) + _ap_libdevice.pow(y, 2.0)
    tl.store(y_ptr, z)

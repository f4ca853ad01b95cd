"""A kernel that reaches CUDA's libdevice through the attribute chain (fla's fused_bitlinear spelling)."""

import triton
import triton.language as tl

try:
    from triton.language.extra.cann import libdevice as _ap_libdevice
except ImportError:
    try:
        from triton.language.extra.ascend import libdevice as _ap_libdevice
    except ImportError:
        from triton.language.extra.cuda import libdevice as _ap_libdevice


# TODO(ascend-port): NPU500 [low] Triton kernel round_tanh_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def round_tanh_kernel(X, Y, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    y = _ap_libdevice.round(x) + _ap_libdevice.tanh(x)
    tl.store(Y + i, y)

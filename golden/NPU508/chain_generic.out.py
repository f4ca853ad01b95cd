import triton
import triton.language as tl
try:
    from triton.language.extra.cann import libdevice
except ImportError:
    try:
        from triton.language.extra.ascend import libdevice
    except ImportError:
        from triton.language.extra import libdevice  # noqa: F401  (NPU501 reroutes this import; the chains go through ours)

try:
    from triton.language.extra.cann import libdevice as _ap_libdevice
except ImportError:
    try:
        from triton.language.extra.ascend import libdevice as _ap_libdevice
    except ImportError:
        from triton.language.extra import libdevice as _ap_libdevice


# TODO(ascend-port): NPU500 [low] Triton kernel rsqrt_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def rsqrt_kernel(X, Y, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    tl.store(Y + i, _ap_libdevice.rsqrt(x) * _ap_libdevice.exp(x))

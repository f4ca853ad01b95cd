import triton
import triton.language as tl
from triton.language.extra import libdevice  # noqa: F401  (NPU501 reroutes this import; the chains go through ours)


@triton.jit
def rsqrt_kernel(X, Y, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    tl.store(Y + i, triton.language.extra.libdevice.rsqrt(x) * tl.extra.libdevice.exp(x))

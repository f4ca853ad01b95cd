import triton
import triton.language as tl

# Outside a kernel: plain Python, never rewritten.
HOST_TANH = tl.extra.cuda.libdevice.tanh


@triton.jit
def fast_exp_kernel(X, Y, N: tl.constexpr):
    i = tl.arange(0, N)
    # fast_expf is not in Triton-Ascend's libdevice: left for the kernel's TODO.
    tl.store(Y + i, tl.extra.cuda.libdevice.fast_expf(tl.load(X + i)))


def helper(x):
    return tl.extra.cuda.libdevice.round(x)

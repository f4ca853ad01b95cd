import triton
import triton.language as tl

# Outside a kernel: plain Python, never rewritten.
HOST_TANH = tl.extra.cuda.libdevice.tanh


# TODO(ascend-port): NPU500 [low] Triton kernel fast_exp_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def fast_exp_kernel(X, Y, N: tl.constexpr):
    i = tl.arange(0, N)
    # fast_expf is not in Triton-Ascend's libdevice: left for the kernel's TODO.
    # TODO(ascend-port): NPU500 [low] libdevice.fast_expf is not in Triton-Ascend's libdevice: use the tl/tl.math function or tl ops
    tl.store(Y + i, tl.extra.cuda.libdevice.fast_expf(tl.load(X + i)))


def helper(x):
    return tl.extra.cuda.libdevice.round(x)

import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel initial_state_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def initial_state_kernel(H, H0, n, USE_H0: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    h = tl.zeros([N], dtype=tl.float32)
    if USE_H0:
        if n > 0:
            h = tl.load(H0 + i)
        else:
            h = h - 1.0
    else:
        h = h - 1.0
    tl.store(H + i, h)

import torch
import triton
import triton.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel kept_casts_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (N) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def kept_casts_kernel(X, Y, scale, N: tl.constexpr):
    i = tl.arange(0, N)
    # TODO(ascend-port): NPU500 [low] int64 vector math: Triton-Ascend runs int64 vector add/compare as scalar code (correct, slow): keep this tensor int32 where it cannot overflow
    x = tl.load(X + i).to(tl.int64)  # a load's result is a tensor
    s = scale.to(tl.float32)  # not an integer dtype
    n = N.to(tl.int64) if False else N  # a constexpr parameter
    tl.store(Y + i, (x + n).to(tl.float32) * s)


def host(t: torch.Tensor, stride):
    return t.to(torch.int64), stride.to(tl.int64)

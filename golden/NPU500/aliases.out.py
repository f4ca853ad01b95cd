"""Triton under other names: `import triton.language as language`, `from triton import language as tlang`,
`from triton import jit as triton_jit`."""
import triton.language as language
from triton import jit as triton_jit
from triton import language as tlang


# TODO(ascend-port): NPU500 [low] Triton kernel relu_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton_jit
def relu_kernel(x, y, n, BLOCK: language.constexpr):
    offs = language.program_id(0) * BLOCK + language.arange(0, BLOCK)
    # TODO(ascend-port): NPU500 [low] tl.float64: Ascend A2/A3 have no fp64 vector or cube math: compute in fp32 where the precision allows, else keep this step on the host
    v = language.load(x + offs, mask=offs < n).to(tlang.float64)
    language.store(y + offs, language.maximum(v, 0.0), mask=offs < n)


def relu(x, y):
    relu_kernel[(x.numel() // 256,)](x, y, x.numel(), BLOCK=256)

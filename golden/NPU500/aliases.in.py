"""Triton under other names: `import triton.language as language`, `from triton import language as tlang`,
`from triton import jit as triton_jit`."""
import triton.language as language
from triton import jit as triton_jit
from triton import language as tlang


@triton_jit
def relu_kernel(x, y, n, BLOCK: language.constexpr):
    offs = language.program_id(0) * BLOCK + language.arange(0, BLOCK)
    v = language.load(x + offs, mask=offs < n).to(tlang.float64)
    language.store(y + offs, language.maximum(v, 0.0), mask=offs < n)


def relu(x, y):
    relu_kernel[(x.numel() // 256,)](x, y, x.numel(), BLOCK=256)

"""Must not change: the project's own Ascend port of a kernel (it imports Triton-Ascend-only APIs)."""
import triton
import triton.language as tl

try:
    from triton.language.extra.cann.extension import extract_slice, insert_slice
except ImportError:
    extract_slice, insert_slice = tl.extract_slice, tl.insert_slice


@triton.jit
def chunk_fwd_kernel_npu(x, y, n, BT: tl.constexpr):
    for i in tl.range(tl.program_id(0), n, tl.num_programs(0)):
        b = tl.load(x + i * BT + tl.arange(0, BT)).to(tl.float64)
        tl.store(y + i * BT + tl.arange(0, BT), b.to(tl.float32))


def launch(x, y, n):
    chunk_fwd_kernel_npu[(40,)](x, y, n, BT=64)

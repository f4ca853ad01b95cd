"""What a kernel's lines need on Triton-Ascend: a TODO on each line that needs a change, none on what is valid
there (allow_tf32=False, the default atomics, int64 on a scalar program id)."""
import triton
import triton.language as tl

from .utils import make_tensor_descriptor


@triton.jit
def chunk_kernel(q, k, v, o, dq, T, DOT_PRECISION: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    i_t = tl.program_id(0).to(tl.int64)  # a scalar: no note
    o_t = i_t * BT + tl.arange(0, BT)
    offs = o_t.to(tl.int64) * BK
    b_q = tl.load(q + offs[:, None] + tl.arange(0, BK)[None, :])
    b_k = tl.load(k + offs[:, None] + tl.arange(0, BK)[None, :])
    b_s = tl.dot(b_q, tl.trans(b_k), allow_tf32=False)
    b_v = tl.dot(b_q, tl.trans(b_k), input_precision=DOT_PRECISION)
    if BT > 32:
        b_w = tl.dot(b_k, tl.trans(b_q))
    else:
        b_w = tl.dot(b_k, tl.trans(b_v))  # (the other branch: no reuse)
    tl.store(o + offs[:, None], b_s + b_v + b_w)
    tl.atomic_add(dq + offs, tl.sum(b_s, 1), mask=o_t < T, sem="relaxed")
    tl.atomic_add(dq + offs, tl.sum(b_v, 1), mask=o_t < T)
    tl.atomic_max(dq + offs, tl.sum(b_v, 1), sem="acq_rel", scope="sys")
    tl.store(o, tl.sum(tl.sum(b_s, 1).to(tl.float64), 0).to(tl.float32))


@triton.jit
def tma_kernel(a, out, T, BT: tl.constexpr):
    desc = tl.make_tensor_descriptor(a, [T, BT], [BT, 1], [16, 16])
    other = make_tensor_descriptor(out, [T, BT], [BT, 1], [16, 16])
    other.store([0, 0], desc.load([0, 0]) + tl.load(a))


@triton.jit
def softplus_kernel(x, y):
    b = tl.load(x)
    r = tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [b], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y, r)


def launch(q, k, v, o, dq, T):
    chunk_kernel[(T // 64,)](q, k, v, o, dq, T, DOT_PRECISION="ieee", BT=64, BK=64)
    tma_kernel[(1,)](q, o, T, BT=64)
    softplus_kernel[(1,)](q, o)

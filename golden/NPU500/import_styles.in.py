"""Triton kernels in every import style: each gets one TODO above its decorators, the kernels stay byte-identical."""
import torch
import triton
import triton.language as tl
from triton import autotune, heuristics, jit
import triton as tr


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK": 2048}, num_warps=8),
    ],
    key=["n"],
)
@triton.jit
def _rms_norm_fwd_kernel(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    # one program per row
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0).to(tl.float32)
    var = tl.sum(x * x, axis=0) / n
    y = x * tl.rsqrt(var + eps) * tl.load(w_ptr + offs, mask=offs < n)
    tl.store(y_ptr + row * n + offs, y, mask=offs < n)


@heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(a_ptr + offs) + tl.load(b_ptr + offs))


@tr.jit(do_not_specialize=["n"])
def _fwd_attn_kernel(q, k, v, o, n, BLOCK: tl.constexpr):
    acc = tl.dot(tl.load(q), tl.load(k), allow_tf32=True)
    tl.store(o, acc.to(tl.float64))


@autotune(configs=[triton.Config({"B": 64})], key=[])
@triton.jit
def weird_kernel(x, y):
    tl.store(y, tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [tl.load(x)], dtype=tl.int32,
                                          is_pure=True, pack=1))


class Ops:
    @staticmethod
    @triton.jit
    def _swiglu_kernel(x, y):
        tl.store(y, tl.load(x))


def add(a, b):
    out = torch.empty_like(a, device="cuda")
    grid = lambda meta: (triton.cdiv(a.numel(), meta["BLOCK"]),)
    add_kernel[grid](a, b, out, a.numel(), BLOCK=1024)
    return out

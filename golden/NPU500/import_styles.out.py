"""Triton kernels in every import style: each gets one TODO above its decorators, the kernels stay byte-identical."""
import torch
import torch_npu
import triton
import triton.language as tl
from triton import autotune, heuristics, jit
import triton as tr


# TODO(ascend-port): NPU500 [low] Triton kernel _rms_norm_fwd_kernel: run it on Triton-Ascend (triton-ascend replaces triton; grid <= 65535 programs, best one per AI core looping over the work); torch_npu.npu_rms_norm may already do this; else an Ascend C operator. Check: num_warps/num_stages are ignored
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


# TODO(ascend-port): NPU500 [low] Triton kernel add_kernel: run it on Triton-Ascend (triton-ascend replaces triton; grid <= 65535 programs, best one per AI core looping over the work); else an Ascend C operator
@heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(a_ptr + offs) + tl.load(b_ptr + offs))


# TODO(ascend-port): NPU500 [low] Triton kernel _fwd_attn_kernel: run it on Triton-Ascend (triton-ascend replaces triton; grid <= 65535 programs, best one per AI core looping over the work); torch_npu.npu_fusion_attention may already do this; else an Ascend C operator. Check: no fp64 on NPU (tl.float64); tl.dot: no tf32, use input_precision='hf32' (fp32 inputs) or 'ieee'
@tr.jit(do_not_specialize=["n"])
def _fwd_attn_kernel(q, k, v, o, n, BLOCK: tl.constexpr):
    acc = tl.dot(tl.load(q), tl.load(k), allow_tf32=True)
    tl.store(o, acc.to(tl.float64))


# TODO(ascend-port): NPU500 [low] Triton kernel weird_kernel: run it on Triton-Ascend (triton-ascend replaces triton; grid <= 65535 programs, best one per AI core looping over the work); else an Ascend C operator. Check: inline PTX (tl.inline_asm_elementwise) must be rewritten with tl ops
@autotune(configs=[triton.Config({"B": 64})], key=[])
@triton.jit
def weird_kernel(x, y):
    tl.store(y, tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [tl.load(x)], dtype=tl.int32,
                                          is_pure=True, pack=1))


class Ops:
    # TODO(ascend-port): NPU500 [low] Triton kernel _swiglu_kernel: run it on Triton-Ascend (triton-ascend replaces triton; grid <= 65535 programs, best one per AI core looping over the work); torch_npu.npu_swiglu may already do this; else an Ascend C operator
    @staticmethod
    @triton.jit
    def _swiglu_kernel(x, y):
        tl.store(y, tl.load(x))


def add(a, b):
    out = torch.empty_like(a, device="npu")
    grid = lambda meta: (triton.cdiv(a.numel(), meta["BLOCK"]),)
    add_kernel[grid](a, b, out, a.numel(), BLOCK=1024)
    return out

"""Triton kernels in every import style: each gets one TODO above its decorators, the kernels stay byte-identical."""
import torch
import torch_npu
import triton
import triton.language as tl
from triton import autotune, heuristics, jit
import triton as tr


# TODO(ascend-port): NPU500 [low] Triton kernel _rms_norm_fwd_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); torch_npu.npu_rms_norm may already do this; else an Ascend C operator. Check: num_warps/num_stages are ignored
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


# TODO(ascend-port): NPU500 [low] Triton kernel add_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; fit its tiles (BLOCK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(a_ptr + offs) + tl.load(b_ptr + offs))


# TODO(ascend-port): NPU500 [low] Triton kernel _fwd_attn_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per AI core (num_aicore: it uses tl.dot) looping over the work; torch_npu.npu_fusion_attention may already do this; else an Ascend C operator
@tr.jit(do_not_specialize=["n"])
def _fwd_attn_kernel(q, k, v, o, n, BLOCK: tl.constexpr):
    acc = tl.dot(tl.load(q), tl.load(k))
    # TODO(ascend-port): NPU500 [low] tl.float64: Ascend A2/A3 have no fp64 vector or cube math: compute in fp32 where the precision allows, else keep this step on the host
    tl.store(o, acc.to(tl.float64))


# TODO(ascend-port): NPU500 [low] Triton kernel weird_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; else an Ascend C operator
@autotune(configs=[triton.Config({"B": 64})], key=[])
@triton.jit
def weird_kernel(x, y):
    # TODO(ascend-port): NPU500 [low] tl.inline_asm_elementwise: PTX cannot run on Ascend (its asm must be the NPU's, registers int64/fp32, 1-D inputs): write it with tl ops
    tl.store(y, tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [tl.load(x)], dtype=tl.int32,
                                          is_pure=True, pack=1))


class Ops:
    # TODO(ascend-port): NPU500 [low] Triton kernel _swiglu_kernel, launched outside this module (not here): for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; torch_npu.npu_swiglu may already do this; else an Ascend C operator
    @staticmethod
    @triton.jit
    def _swiglu_kernel(x, y):
        tl.store(y, tl.load(x))


def add(a, b):
    out = torch.empty_like(a, device="npu")
    grid = lambda meta: (triton.cdiv(a.numel(), meta["BLOCK"]),)
    add_kernel[grid](a, b, out, a.numel(), BLOCK=1024)
    return out

"""What a kernel's lines need on Triton-Ascend: a TODO on each line that needs a change, none on what is valid
there (allow_tf32=False, the default atomics, int64 on a scalar program id)."""
import triton
import triton.language as tl

from .utils import make_tensor_descriptor


# TODO(ascend-port): NPU500 [low] Triton kernel chunk_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per AI core (num_aicore: it uses tl.dot) looping over the work; fit its tiles (BT, BK) in the 192 KB on-chip buffer (UB; half with double buffering); else an Ascend C operator
@triton.jit
def chunk_kernel(q, k, v, o, dq, T, DOT_PRECISION: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    i_t = tl.program_id(0).to(tl.int64)  # a scalar: no note
    o_t = i_t * BT + tl.arange(0, BT)
    # TODO(ascend-port): NPU500 [low] int64 vector math: Triton-Ascend runs int64 vector add/compare as scalar code (correct, slow): keep this tensor int32 where it cannot overflow
    offs = o_t.to(tl.int64) * BK
    b_q = tl.load(q + offs[:, None] + tl.arange(0, BK)[None, :])
    b_k = tl.load(k + offs[:, None] + tl.arange(0, BK)[None, :])
    b_s = tl.dot(b_q, tl.trans(b_k), allow_tf32=False)
    # TODO(ascend-port): NPU500 [low] tl.dot input_precision=DOT_PRECISION is chosen at run time: on Ascend it must be 'ieee' (or 'hf32' for fp32 inputs), never 'tf32'/'tf32x3'
    # TODO(ascend-port): NPU500 [low] b_q is the left operand of an earlier tl.dot too: Triton-Ascend may clobber a tl.dot's left operand, and a copy (b_q + 0.0) is merged away by 3.2.0's CSE: check this result on the NPU; if it differs, reload b_q from memory
    b_v = tl.dot(b_q, tl.trans(b_k), input_precision=DOT_PRECISION)
    if BT > 32:
        b_w = tl.dot(b_k, tl.trans(b_q))
    else:
        b_w = tl.dot(b_k, tl.trans(b_v))  # (the other branch: no reuse)
    tl.store(o + offs[:, None], b_s + b_v + b_w)
    # TODO(ascend-port): NPU500 [low] tl.atomic_add sem='relaxed': Triton-Ascend documents only sem='acq_rel' and scope='gpu' (others compile; their lowering is unverified): check it on the NPU
    tl.atomic_add(dq + offs, tl.sum(b_s, 1), mask=o_t < T, sem="relaxed")
    tl.atomic_add(dq + offs, tl.sum(b_v, 1), mask=o_t < T)
    # TODO(ascend-port): NPU500 [low] tl.atomic_max sem='acq_rel', scope='sys': Triton-Ascend documents only sem='acq_rel' and scope='gpu' (others compile; their lowering is unverified): check it on the NPU
    tl.atomic_max(dq + offs, tl.sum(b_v, 1), sem="acq_rel", scope="sys")
    # TODO(ascend-port): NPU500 [low] tl.float64: Ascend A2/A3 have no fp64 vector or cube math: compute in fp32 where the precision allows, else keep this step on the host
    tl.store(o, tl.sum(tl.sum(b_s, 1).to(tl.float64), 0).to(tl.float32))


# TODO(ascend-port): NPU500 [low] Triton kernel tma_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; else an Ascend C operator
@triton.jit
def tma_kernel(a, out, T, BT: tl.constexpr):
    # TODO(ascend-port): NPU500 [low] tensor descriptor (TMA): Triton-Ascend cannot mix tensor descriptors with tl.load/tl.store in one kernel: use tl.make_block_ptr or pointers here, or descriptors for every access
    desc = tl.make_tensor_descriptor(a, [T, BT], [BT, 1], [16, 16])
    other = make_tensor_descriptor(out, [T, BT], [BT, 1], [16, 16])
    other.store([0, 0], desc.load([0, 0]) + tl.load(a))


# TODO(ascend-port): NPU500 [low] Triton kernel softplus_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; else an Ascend C operator
@triton.jit
def softplus_kernel(x, y):
    b = tl.load(x)
    # TODO(ascend-port): NPU500 [low] tl.inline_asm_elementwise: PTX cannot run on Ascend (its asm must be the NPU's, registers int64/fp32, 1-D inputs): write it with tl ops
    r = tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [b], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y, r)


def launch(q, k, v, o, dq, T):
    chunk_kernel[(T // 64,)](q, k, v, o, dq, T, DOT_PRECISION="ieee", BT=64, BK=64)
    tma_kernel[(1,)](q, o, T, BT=64)
    softplus_kernel[(1,)](q, o)

import triton_pre_mlir as triton
import triton_pre_mlir.language as tl


# TODO(ascend-port): NPU500 [low] Triton kernel _fwd_kernel: for Triton-Ascend (it replaces triton) launch it with at most 65535 programs, best one per vector core (num_vectorcore) looping over the work; else an Ascend C operator. Check: written for triton_pre_mlir, an old Triton fork: port it to current Triton first
@triton.heuristics({"EVEN_M": lambda args: args["seqlen_q"] % args["BLOCK_M"] == 0})
@triton.jit
def _fwd_kernel(Q, K, V, Out, seqlen_q, BLOCK_M: tl.constexpr):
    start_m = tl.program_id(0)
    tl.store(Out + start_m, tl.load(Q + start_m))


# Must not change: not a kernel.
def launch(q, k, v, out):
    _fwd_kernel[(1,)](q, k, v, out, q.shape[0], BLOCK_M=128)

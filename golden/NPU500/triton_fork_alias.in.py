import triton_pre_mlir as triton
import triton_pre_mlir.language as tl


@triton.heuristics({"EVEN_M": lambda args: args["seqlen_q"] % args["BLOCK_M"] == 0})
@triton.jit
def _fwd_kernel(Q, K, V, Out, seqlen_q, BLOCK_M: tl.constexpr):
    start_m = tl.program_id(0)
    tl.store(Out + start_m, tl.load(Q + start_m))


# Must not change: not a kernel.
def launch(q, k, v, out):
    _fwd_kernel[(1,)](q, k, v, out, q.shape[0], BLOCK_M=128)

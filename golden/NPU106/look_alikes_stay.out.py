# TODO(ascend-port): NPU504 [low] numba.cuda kernels run only on NVIDIA GPUs: rewrite them as torch ops on npu, a Triton-Ascend kernel or an Ascend C operator (numba's CPU @jit is fine)
import numba.cuda
from mylib import cuda

cuda.synchronize()
# TODO(ascend-port): NPU504 [low] numba.cuda kernels run only on NVIDIA GPUs: rewrite them as torch ops on npu, a Triton-Ascend kernel or an Ascend C operator (numba's CPU @jit is fine)
numba.cuda.jit

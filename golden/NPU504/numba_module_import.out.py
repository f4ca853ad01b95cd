import numba


# TODO(ascend-port): NPU504 [low] numba.cuda kernels run only on NVIDIA GPUs: rewrite them as torch ops on npu, a Triton-Ascend kernel or an Ascend C operator (numba's CPU @jit is fine)
@numba.cuda.jit
def add_kernel(a, b, out):
    # TODO(ascend-port): NPU504 [low] numba.cuda kernels run only on NVIDIA GPUs: rewrite them as torch ops on npu, a Triton-Ascend kernel or an Ascend C operator (numba's CPU @jit is fine)
    i = numba.cuda.grid(1)
    out[i] = a[i] + b[i]


@numba.njit
def cpu_only(x):
    return x + 1

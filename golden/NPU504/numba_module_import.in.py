import numba


@numba.cuda.jit
def add_kernel(a, b, out):
    i = numba.cuda.grid(1)
    out[i] = a[i] + b[i]


@numba.njit
def cpu_only(x):
    return x + 1

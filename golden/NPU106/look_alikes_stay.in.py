import numba.cuda
from mylib import cuda

cuda.synchronize()
numba.cuda.jit

import triton
import triton.language as tl
from triton.language.extra.cuda.libdevice import fast_expf
from triton.language.extra.cuda import libdevice


@triton.jit
def gelu_kernel(x_ptr, y_ptr):
    x = tl.load(x_ptr)
    y = 0.5 * x * (1 + libdevice.tanh(0.79788456 * (x + 0.044715 * x * x * x)))
    z = fast_expf(y) + libdevice.fast_dividef(y, 2.0) + tl.extra.cuda.libdevice.pow(y, 2.0)
    tl.store(y_ptr, z)

import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice
import triton.language.extra.cuda.libdevice as ld
from triton.language.extra.cuda.libdevice import exp, tanh


def load_generic():
    from triton.language.extra import libdevice as generic  # the generic stubs are not remapped on Ascend
    return generic

# fast_expf is not in Triton-Ascend's libdevice: the import stays as it is.
from triton.language.extra.cuda.libdevice import fast_expf
# Already ported by hand: nothing to do.
try:
    from triton.language.extra.cann import libdevice
except ImportError:
    from triton.language.extra.cuda import libdevice
import triton.language.extra.cuda.libdevice
from triton.language import math

"""A JIT build of a CUDA extension, as stylegan2-pytorch's op/ folder does it."""

import os

from torch.utils.cpp_extension import load

module_path = os.path.dirname(__file__)
upfirdn_ext = load(
    "upfirdn_ext",
    sources=[os.path.join(module_path, "upfirdn.cpp"), os.path.join(module_path, "upfirdn_kernel.cu")],
)


def upfirdn2d(input, kernel, up=1, down=1):
    return upfirdn_ext.upfirdn(input, kernel, up, down)

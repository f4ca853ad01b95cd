import os

import torch
from torch.utils import cpp_extension
from torch.utils.cpp_extension import load, load_inline

here = os.path.dirname(__file__)
ops = load(name="ops", sources=[os.path.join(here, "ops.cpp"), os.path.join(here, "ops_kernel.cu")])
inline = load_inline(name="inline_ops", cpp_sources=[CPP], cuda_sources=[CUDA], functions=["scale"])
built = cpp_extension.load("built", [os.path.join(here, "a.cpp")], extra_cuda_cflags=["-O3"])

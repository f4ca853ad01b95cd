import os

import torch
from torch.utils import cpp_extension
from torch.utils.cpp_extension import load, load_inline

here = os.path.dirname(__file__)
# TODO(ascend-port): NPU502 [low] JIT CUDA extension ops: no nvcc on NPU: port the CUDA kernels to Ascend C operators (msOpGen scaffold, registered with TORCH_LIBRARY) or replace them with torch/torch_npu ops; build the host C++ with torch_npu.utils.cpp_extension.NpuExtension (torch_npu.utils.cpp_extension.load for the host C++)
ops = load(name="ops", sources=[os.path.join(here, "ops.cpp"), os.path.join(here, "ops_kernel.cu")])
# TODO(ascend-port): NPU502 [low] JIT CUDA extension inline_ops: no nvcc on NPU: port the CUDA kernels to Ascend C operators (msOpGen scaffold, registered with TORCH_LIBRARY) or replace them with torch/torch_npu ops; build the host C++ with torch_npu.utils.cpp_extension.NpuExtension (torch_npu.utils.cpp_extension.load for the host C++)
inline = load_inline(name="inline_ops", cpp_sources=[CPP], cuda_sources=[CUDA], functions=["scale"])
# TODO(ascend-port): NPU502 [low] JIT CUDA extension built: no nvcc on NPU: port the CUDA kernels to Ascend C operators (msOpGen scaffold, registered with TORCH_LIBRARY) or replace them with torch/torch_npu ops; build the host C++ with torch_npu.utils.cpp_extension.NpuExtension (torch_npu.utils.cpp_extension.load for the host C++)
built = cpp_extension.load("built", [os.path.join(here, "a.cpp")], extra_cuda_cflags=["-O3"])

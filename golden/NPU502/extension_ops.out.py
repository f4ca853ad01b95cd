import os

import selective_scan_cuda
import torch
from torch.utils.cpp_extension import load

here = os.path.dirname(__file__)
# TODO(ascend-port): NPU502 [low] JIT CUDA extension ops: no nvcc on NPU: port the CUDA kernels to Ascend C operators (msOpGen scaffold, registered with TORCH_LIBRARY) or replace them with torch/torch_npu ops; build the host C++ with torch_npu.utils.cpp_extension.NpuExtension (torch_npu.utils.cpp_extension.load for the host C++)
ops = load(name="ops", sources=[os.path.join(here, "ops.cpp"), os.path.join(here, "ops_kernel.cu")])


def scan(u, delta, A, B, C):
    # TODO(ascend-port): NPU502 [low] selective_scan_cuda.fwd() is an op of the CUDA extension selective_scan_cuda: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    out, x, *rest = selective_scan_cuda.fwd(u, delta, A, B, C, None, None, None, False)
    return out


def scale(x):
    # TODO(ascend-port): NPU502 [low] ops.scale() is an op of the CUDA extension ops: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    y = ops.scale(x, 2.0)
    # TODO(ascend-port): NPU502 [low] torch.ops.my_kernels.fused_gelu is a custom operator (TORCH_LIBRARY in the project's C++/CUDA sources): give it an NPU kernel (an Ascend C operator registered for PrivateUse1) or replace it with torch/torch_npu ops
    return torch.ops.my_kernels.fused_gelu(y)


# Must not change: torch's own operators, other objects' methods.
def builtin(x):
    return torch.ops.aten.relu(x), os.path.join("a", "b"), x.sum()


@torch.library.custom_op("mylib::double_it", mutates_args=())
def double_it(x: torch.Tensor) -> torch.Tensor:
    return x * 2


def python_op(x):
    return torch.ops.mylib.double_it(x), torch.ops.hpu.fp8_gemm(x)

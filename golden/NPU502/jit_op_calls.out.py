import torch
from torch.utils.cpp_extension import load as jit_load

# TODO(ascend-port): NPU502 [low] JIT CUDA extension fused: no nvcc on NPU: port the CUDA kernels to Ascend C operators (msOpGen scaffold, registered with TORCH_LIBRARY) or replace them with torch/torch_npu ops; build the host C++ with torch_npu.utils.cpp_extension.NpuExtension (torch_npu.utils.cpp_extension.load for the host C++)
fused = jit_load("fused", ["fused.cpp"], with_cuda=True)
host = jit_load("host", ["host.cpp"])
# TODO(ascend-port): NPU502 [low] JIT CUDA extension gather: no nvcc on NPU: port the CUDA kernels to Ascend C operators (msOpGen scaffold, registered with TORCH_LIBRARY) or replace them with torch/torch_npu ops; build the host C++ with torch_npu.utils.cpp_extension.NpuExtension (torch_npu.utils.cpp_extension.load for the host C++)
gathered = (
    jit_load("gather", sources=["gather.cpp", "gather_kernel.cu"])
)


def forward(model, x, path):
    model.load_state_dict(torch.load(path))
    # TODO(ascend-port): NPU502 [low] fused.scale() is an op of the CUDA extension fused: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    y = fused.scale(x, 2.0)
    z = host.round(y)
    # TODO(ascend-port): NPU502 [low] gathered.gather() is an op of the CUDA extension gathered: it has no NPU build; port its kernel to an Ascend C operator or replace the call with torch/torch_npu ops
    return gathered.gather(z, model.index.clone())

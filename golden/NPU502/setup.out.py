from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# TODO(ascend-port): NPU502 [low] CUDA extension fused_ops_cuda (2 .cu sources): no nvcc on NPU: port the CUDA kernels to Ascend C operators (msOpGen scaffold, registered with TORCH_LIBRARY) or replace them with torch/torch_npu ops; build the host C++ with torch_npu.utils.cpp_extension.NpuExtension
# TODO(ascend-port): NPU502 [low] BuildExtension compiles .cu sources with nvcc: on NPU build host C++ as torch_npu.utils.cpp_extension.NpuExtension (BuildExtension still works for it) and the CUDA kernels as Ascend C operators
setup(
    name="fused_ops",
    ext_modules=[
        CUDAExtension(
            name="fused_ops_cuda",
            sources=["csrc/fused_ops.cpp", "csrc/fused_ops_kernel.cu", "csrc/softmax.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3"]},
        ),
    ],
    cmdclass={"build_ext": BuildExtension},
)

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="fused",
    packages=["fused"],
    ext_modules=[
        CUDAExtension("fused_ops_cuda", ["csrc/fused_ops.cpp", "csrc/fused_ops_kernel.cu", "csrc/row_norm.cu"])
    ],
    cmdclass={"build_ext": BuildExtension},
)

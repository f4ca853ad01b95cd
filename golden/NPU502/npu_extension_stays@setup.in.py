# An NPU build of host C++ (torch_npu's NpuExtension, as `ascend-port scaffold` writes it): BuildExtension stays.
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension
from torch_npu.utils.cpp_extension import NpuExtension

setup(
    name="scale_bias_npu",
    ext_modules=[NpuExtension("scale_bias_npu._C", ["torch_binding/scale_bias_npu.cpp"])],
    cmdclass={"build_ext": BuildExtension},
)

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, load, load_inline

ops = load(name="host_ops", sources=["host_ops.cpp"])
inline = load_inline(name="inline_ops", cpp_sources=[CPP], cuda_sources=None, functions=["scale"])

setup(
    name="host_ops",
    ext_modules=[CppExtension("host_ops", ["host_ops.cpp"])],
    cmdclass={"build_ext": BuildExtension},
)

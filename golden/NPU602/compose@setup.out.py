"""Build the package; the CUDA check below is ported like any Python module."""
import torch
import torch_npu
from setuptools import setup

setup(
    name="tiny-gpt",
    install_requires=("torch==2.3.1", "numpy"),
    extras_require={"gpu": ["pynvml"]} if torch.npu.is_available() else {},
)

from setuptools import find_packages, setup

REQUIREMENTS = [
    "numpy>=1.26",
    # "flash-attn>=2.6",  # fused attention  # removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it
    "pyyaml",
]

setup(
    name="tiny-gpt",
    packages=find_packages(),
    install_requires=REQUIREMENTS,
    extras_require={
        "monitor": ["pynvml", "rich"],
        "xformers": ["xformers==0.0.28.post3"],
    },
)

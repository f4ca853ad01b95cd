from setuptools import find_packages, setup

REQUIREMENTS = [
    "numpy>=1.26",
    # "flash-attn>=2.6",  # fused attention  # removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it
    "pyyaml",
]

# "pynvml" removed by ascend-port NPU600: NVML bindings for NVIDIA drivers; query NPUs with npu-smi or torch.npu
# "xformers==0.0.28.post3" removed by ascend-port NPU600: CUDA-only (no NPU build); use F.scaled_dot_product_attention or torch_npu.npu_fusion_attention
setup(
    name="tiny-gpt",
    packages=find_packages(),
    install_requires=REQUIREMENTS,
    extras_require={
        "monitor": ["rich"],
        "xformers": [],
    },
)

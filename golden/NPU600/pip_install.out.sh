#!/bin/bash
set -e
# A CUDA-only package among others is cut out of the command; alone, the step gets a TODO.
# TODO(ascend-port): NPU617 [low] flash-attn: CUDA-only; torch_npu.npu_fusion_attention replaces it; drop it from this install step
pip install flash-attn --no-build-isolation
# flash-attn==2.5.8 removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it
# xformers removed by ascend-port NPU600: CUDA-only (no NPU build); use F.scaled_dot_product_attention or torch_npu.npu_fusion_attention
python -m pip install -U transformers accelerate
if [ -n "$WITH_EXTRAS" ]; then
    # flash_attn removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it
    pip install \
        einops \
        peft
fi
# pynvml removed by ascend-port NPU600: NVML bindings for NVIDIA drivers; query NPUs with npu-smi or torch.npu
pip3 install "$EXTRA"
# TODO(ascend-port): NPU617 [low] flash-attn: CUDA-only; torch_npu.npu_fusion_attention replaces it; drop it from this install step
pip install git+https://github.com/Dao-AILab/flash-attention.git
# TODO(ascend-port): NPU617 [low] clones flash-attn (CUDA-only; torch_npu.npu_fusion_attention replaces it): drop this build step
git clone https://github.com/Dao-AILab/flash-attention.git && cd flash-attention && python setup.py install

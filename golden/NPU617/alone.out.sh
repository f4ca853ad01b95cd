#!/bin/bash
# Steps that install only CUDA-only code: a TODO each, the command kept (the if-block would be empty otherwise).
if [ "$USE_FLASH" = 1 ]; then
    # TODO(ascend-port): NPU617 [low] flash-attn: CUDA-only; torch_npu.npu_fusion_attention replaces it; drop it from this install step
    pip install flash-attn --no-build-isolation
fi
# TODO(ascend-port): NPU617 [low] xformers: CUDA-only (no NPU build); use F.scaled_dot_product_attention or torch_npu.npu_fusion_attention; drop it from this install step
pip install -U xformers
# TODO(ascend-port): NPU617 [low] flash-attn: CUDA-only; torch_npu.npu_fusion_attention replaces it; drop it from this install step
MAX_JOBS=4 pip install git+https://github.com/Dao-AILab/flash-attention.git@v2.6.3
# TODO(ascend-port): NPU617 [low] clones xformers (CUDA-only (no NPU build); use F.scaled_dot_product_attention or torch_npu.npu_fusion_attention): drop this build step
git clone --depth 1 https://github.com/facebookresearch/xformers.git

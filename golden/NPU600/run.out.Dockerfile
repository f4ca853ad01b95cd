FROM ascendai/cann:8.5.0-910b-ubuntu22.04-py3.11
# TODO(ascend-port): NPU617 [low] flash-attn: CUDA-only; torch_npu.npu_fusion_attention replaces it; drop it from this install step
RUN pip install --no-cache-dir torch==2.5.1 && \
    pip install flash-attn --no-build-isolation
# flash-attn==2.5.8 removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it
RUN pip install transformers \
    accelerate
# xformers removed by ascend-port NPU600: CUDA-only (no NPU build); use F.scaled_dot_product_attention or torch_npu.npu_fusion_attention
RUN ["pip", "install", "einops"]
# TODO(ascend-port): NPU617 [low] NVIDIA apex with its CUDA extensions (--cuda_ext) does not build for Ascend: use Ascend's apex (gitcode.com/Ascend/apex, built for torch_npu), or torch.autocast('npu') and torch.optim instead
RUN git clone https://github.com/NVIDIA/apex && cd apex && \
    pip install -v --no-build-isolation --global-option="--cuda_ext" ./

install:
# flash-attn removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it
	pip install -e .
# TODO(ascend-port): NPU617 [low] flash-attn: CUDA-only; torch_npu.npu_fusion_attention replaces it; drop it from this install step
	pip install flash-attn --no-build-isolation

gpu: install
	python train.py --device npu

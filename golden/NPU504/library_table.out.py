# TODO(ascend-port): NPU504 [low] FlashInfer's kernels are CUDA-only: use torch_npu.npu_fused_infer_attention_score (paged KV via block_table) or npu_incre_flash_attention for decoding, npu_fusion_attention for prefill
import flashinfer
# TODO(ascend-port): NPU504 [low] cuda-python (cudart/cuda.bindings) calls the CUDA runtime: use torch.npu streams, events and memory APIs, or CANN's pyACL (import acl) for runtime calls
from cuda import cudart
# TODO(ascend-port): NPU504 [low] Liger-Kernel's Triton kernels target CUDA/ROCm: drop apply_liger_kernel_to_* and keep the model's torch code (the port puts an RMSNorm module's forward on torch_npu.npu_rms_norm: NPU420), or use torch_npu's fused ops for its modules (npu_rms_norm for LigerRMSNorm/LigerRMSNormFunction, npu_swiglu, npu_rotary_mul, npu_cross_entropy_loss)
from liger_kernel.transformers import apply_liger_kernel_to_llama
# TODO(ascend-port): NPU504 [low] lmdeploy's TurboMind engine is CUDA-only: use lmdeploy's PyTorch engine on Ascend (PytorchEngineConfig(device_type="ascend") instead of TurbomindEngineConfig)
from lmdeploy import pipeline, TurbomindEngineConfig
# TODO(ascend-port): NPU504 [low] nvFuser generates CUDA kernels: drop it; with Lightning Thunder use its torch/torch.compile executors (executors=["torchcompile", "torch"]) or torch.compile on NPU directly
from thunder.executors.nvfuserex import nvfuserex
# TODO(ascend-port): NPU504 [low] xDiT (xfuser) long-context attention runs flash_attn kernels: use MindIE-SD's parallel attention on Ascend, or write its Ulysses/ring attention by hand over torch_npu.npu_fusion_attention (all-to-all and send/recv over HCCL)
from xfuser.core.long_ctx_attention import xFuserLongContextAttention
# TODO(ascend-port): NPU504 [low] yunchang's ring/Ulysses attention runs flash_attn kernels: on Ascend write the all-to-all (Ulysses) around torch_npu.npu_fusion_attention, or use MindSpeed's context parallelism
from yunchang import LongContextAttention
# TODO(ascend-port): NPU504 [low] Polygraphy drives TensorRT: on Ascend export ONNX and convert with ATC (CANN) to an .om model, or use torch.compile(backend="npugraph_ex") / TorchAir
from polygraphy.backend.trt import engine_from_network

import torch

model = torch.nn.Linear(4, 4)
# TODO(ascend-port): NPU703 [low] torch.compile mode="max-autotune" tunes inductor's CUDA templates and CUDA graphs: on NPU start from the default mode (or backend="npugraphs" for static-shape inference)
tuned = torch.compile(model, mode="max-autotune")
# TODO(ascend-port): NPU703 [low] torch.compile backend="tensorrt" is NVIDIA-only: on NPU use the default inductor, backend="npugraph_ex" or TorchAir (torchair.get_npu_backend()) for inference
trt = torch.compile(model, backend="tensorrt")
# TODO(ascend-port): NPU703 [low] torch.compile options triton.cudagraphs configure inductor's CUDA code generation: review them for the NPU inductor
opts = torch.compile(model, options={"triton.cudagraphs": True, "epilogue_fusion": True})
fine = torch.compile(model, mode="reduce-overhead")
fine2 = torch.compile(model, options={"epilogue_fusion": True})

import torch

model = torch.nn.Linear(4, 4)
tuned = torch.compile(model, mode="max-autotune")
trt = torch.compile(model, backend="tensorrt")
opts = torch.compile(model, options={"triton.cudagraphs": True, "epilogue_fusion": True})
fine = torch.compile(model, mode="reduce-overhead")
fine2 = torch.compile(model, options={"epilogue_fusion": True})

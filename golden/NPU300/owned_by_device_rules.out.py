import torch
import torch_npu
from torch.npu.amp import GradScaler, autocast


class MyFn(torch.autograd.Function):
    @staticmethod
    @torch.npu.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        return x

    @staticmethod
    @torch.amp.custom_bwd(device_type="npu")
    def backward(ctx, grad):
        return grad


def step(model, x):
    scaler = GradScaler()
    legacy = torch.npu.amp.GradScaler()
    with autocast(dtype=torch.float16), torch.autocast(device_type="npu"):
        return model(x), scaler, legacy

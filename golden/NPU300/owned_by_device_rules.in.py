import torch
from torch.cuda.amp import GradScaler, autocast


class MyFn(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        return x

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad):
        return grad


def step(model, x):
    scaler = GradScaler()
    legacy = torch.cuda.amp.GradScaler()
    with autocast(dtype=torch.float16), torch.autocast(device_type="cuda"):
        return model(x), scaler, legacy

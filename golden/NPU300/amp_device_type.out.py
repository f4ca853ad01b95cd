import torch
import torch_npu
from torch.amp import GradScaler, autocast


def train_step(model, batch, optimizer, use_bf16):
    scaler = torch.amp.GradScaler("npu", enabled=not use_bf16)
    other = GradScaler("npu")
    with torch.autocast("npu", dtype=torch.bfloat16 if use_bf16 else torch.float16):
        loss = model(batch)
    with autocast("npu"):
        pass
    if torch.is_autocast_enabled("npu"):
        print(torch.get_autocast_dtype("npu"))
    torch.set_autocast_enabled("npu", True)
    scaler.scale(loss).backward()
    return other


@torch.autocast("npu", enabled=False)
def fp32_head(x):
    return x

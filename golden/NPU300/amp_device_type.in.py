import torch
from torch.amp import GradScaler, autocast


def train_step(model, batch, optimizer, use_bf16):
    scaler = torch.amp.GradScaler("cuda", enabled=not use_bf16)
    other = GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16 if use_bf16 else torch.float16):
        loss = model(batch)
    with autocast("cuda"):
        pass
    if torch.is_autocast_enabled("cuda"):
        print(torch.get_autocast_dtype("cuda"))
    torch.set_autocast_enabled("cuda", True)
    scaler.scale(loss).backward()
    return other


@torch.autocast("cuda", enabled=False)
def fp32_head(x):
    return x

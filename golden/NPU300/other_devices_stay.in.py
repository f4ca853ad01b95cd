import torch


def step(model, x, device_type):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = model(x)
    with torch.autocast(device_type):
        z = model(x)
    return y, z, torch.amp.GradScaler("xpu")

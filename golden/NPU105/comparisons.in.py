import torch

def where(x, device):
    if x.device.type == "cuda":
        return 1
    if "cuda" in str(device):
        return 2
    if device in ("cuda", "cpu"):
        return 3
    if device != "cuda:0":
        return 4
    return str(device).startswith("cuda")

import torch

DTYPE_SIZES = {torch.float64: 8, torch.float32: 4}


def stats(values, device):
    x = torch.tensor(values, dtype=torch.float64)
    y = torch.zeros(3, dtype=torch.float64, device="cpu")
    z = x.double().sum().item()
    half = torch.ones(3).to(device, dtype=torch.float16)
    back = x.to(torch.float64)
    return x, y, z, half, back

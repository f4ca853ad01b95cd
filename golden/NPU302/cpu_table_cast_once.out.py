import torch
import torch_npu


def rope_cos_sin(dim, end, base=10000.0):
    # built on the CPU in double precision: the intermediates stay, the finished tables are cast once
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    angles = torch.outer(torch.arange(end, dtype=torch.float64), inv_freq)
    return angles.cos().to(torch.float32), angles.sin().float()


def rope_init(dim, base=10000.0):
    # also hands out a number: no single cast finishes every value, so every float64 is lowered
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    return inv_freq, 1.0


def rope_on_device(dim, positions):
    # a parameter made double precision: an input, on the device
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=positions.device).float() / dim))
    return torch.outer(positions.to(torch.float32), inv_freq).to(torch.float32)

import torch


def state(device_type):
    return torch.is_autocast_enabled(device_type), torch.get_autocast_dtype(device_type), torch.is_autocast_cpu_enabled()

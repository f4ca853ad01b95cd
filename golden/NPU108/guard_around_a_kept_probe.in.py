import torch


def device_properties():
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return ("cuda", major, minor)
    return None


def capability_string():
    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        compute_capability = torch.cuda.get_device_capability(0)
        return f"{compute_capability[0]}.{compute_capability[1]}"
    return None


def synchronize_all():
    if torch.cuda.is_available():
        torch.cuda.synchronize()

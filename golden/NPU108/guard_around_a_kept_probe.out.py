import torch
import torch_npu


def device_properties():
    if torch.cuda.is_available():
        # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: test the feature instead, e.g. torch.npu.is_bf16_supported()
        major, minor = torch.cuda.get_device_capability()
        return ("cuda", major, minor)
    return None


def capability_string():
    if torch.cuda.is_available() and torch.npu.device_count() > 0:
        # TODO(ascend-port): NPU108 [low] get_device_capability() returns None on NPU, so the call stays on torch.cuda: test the feature instead, e.g. torch.npu.is_bf16_supported()
        compute_capability = torch.cuda.get_device_capability(0)
        return f"{compute_capability[0]}.{compute_capability[1]}"
    return None


def synchronize_all():
    if torch.npu.is_available():
        torch.npu.synchronize()

import torch
import torch_npu
import triton


class Hardware:
    multi_processor_count = 8


def from_config(hw: Hardware) -> int:
    return hw.multi_processor_count  # not torch's device properties


def reassigned(device: int) -> int:
    props = torch.npu.get_device_properties(device)
    props = Hardware()
    return props.multi_processor_count

import torch
import torch_npu

def where(x, device):
    if x.device.type == "npu":
        return 1
    if "npu" in str(device):
        return 2
    if device in ("npu", "cpu"):
        return 3
    if device != "npu:0":
        return 4
    return str(device).startswith("npu")

# A statement right below a device-keyed table is no branch of a multi-device chain (no NPU121 TODO there).
import torch
import torch_npu


def norm(x):
    dp_factory = {"cuda": 1, "npu": 1, "cpu": 2}
    assert x.type == "npu"
    return x

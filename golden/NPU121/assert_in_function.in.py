# A statement right below a device-keyed table is no branch of a multi-device chain (no NPU121 TODO there).
import torch


def norm(x):
    dp_factory = {"cuda": 1, "cpu": 2}
    assert x.type == "cuda"
    return x

import torch
import torch_npu

def check(x):
    assert x.is_npu, "expected a GPU tensor"
    return [t for t in (x,) if t.is_npu]

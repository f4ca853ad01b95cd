import torch

def check(x):
    assert x.is_cuda, "expected a GPU tensor"
    return [t for t in (x,) if t.is_cuda]

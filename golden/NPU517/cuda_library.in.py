import cupy
import pytest
import torch


def test_cupy_roundtrip():
    x = torch.arange(4, device="cuda")
    y = cupy.asarray(x)
    assert int(y.sum()) == 6

# The devices a test runs on move with the guard that skips them: a parametrized device and a loop over devices.
import pytest
import torch


@pytest.mark.parametrize("device", ["cpu", "cuda", "auto"])
def test_predict(device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("CUDA not available")
    assert torch.zeros(1, device=device if device != "auto" else "cpu").numel() == 1


def test_save_load(model):
    for device in ["auto", "cpu", "cuda"]:
        if device == "cuda" and not torch.cuda.is_available():
            continue
        model.load(device=device)


@pytest.mark.parametrize("backend", ["cuda", "triton"])
def test_kernel_backend(backend):
    assert backend in ("cuda", "triton")

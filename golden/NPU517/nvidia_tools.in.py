# Tests whose subject is NVIDIA's tools (a project's nvidia-smi count, pynvml) keep their CUDA code and guards: on an
# NPU host a CUDA guard skips them, and `skipif(torch.cuda.device_count() > 0)` runs the mocked case there. No guard
# is added (the CPU case of a parametrized test runs anywhere). A test that names no NVIDIA tool is ported.
from unittest.mock import patch

import pytest
import torch

from mypkg.connector import Connector, count_with_nvidia_smi


@pytest.mark.skipif(torch.cuda.device_count() == 0, reason="Only tested on Nvidia GPU")
def test_count_with_nvidia_smi():
    assert count_with_nvidia_smi() == torch.cuda.device_count()


@pytest.mark.skipif(torch.cuda.device_count() > 0, reason="Non Nvidia GPU only")
@patch("mypkg.connector.subprocess.check_output", return_value=b"GPU 0: NVIDIA H100 (UUID: GPU-0)")
def test_count_with_nvidia_smi_mocked(mock_subprocess):
    count_with_nvidia_smi.cache_clear()
    assert count_with_nvidia_smi() == 1


@pytest.mark.parametrize(
    ("accelerator", "expected"),
    [
        ("cpu", "cpu"),
        pytest.param("cuda", "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")),
    ],
)
def test_connector(accelerator, expected):
    count_with_nvidia_smi.cache_clear()
    assert Connector(accelerator).accelerator == expected


def test_model_on_gpu():
    assert torch.ones(2).cuda().sum().item() == 2

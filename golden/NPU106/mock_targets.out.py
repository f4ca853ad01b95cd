# The targets of mocks follow the code they patch, which the port moves to torch.npu: a dotted target string
# ending in torch.cuda.<name> (mock.patch, mocker.patch, monkeypatch.setattr) names torch.npu.<name>; a name torch_npu
# lacks, and other targets, stay.
from unittest import mock

import pytest
import torch
import torch_npu


@pytest.fixture
def cuda_true(monkeypatch):
    monkeypatch.setattr(torch.npu, "is_available", lambda: True)
    monkeypatch.setattr(torch.npu, "get_device_properties", lambda i: None)


def test_count():
    with mock.patch("mypkg.utils.torch.npu.device_count", return_value=2):
        assert parse_devices("auto") == 2
    with mock.patch("torch.npu.is_available", return_value=True):
        pass
    with mock.patch.object(torch.npu, "device_count", return_value=4):
        pass


def test_more(mocker, monkeypatch):
    mocker.patch("torch.npu.device_count", return_value=2)
    monkeypatch.setattr("torch.npu.is_available", lambda: True)
    mock.patch("torch.cuda.not_a_real_api")
    mock.patch("os.environ", {})

# The targets of mocks follow the code they patch, which the port moves to torch.npu: a dotted target string
# ending in torch.cuda.<name> (mock.patch, mocker.patch, monkeypatch.setattr) names torch.npu.<name>; a name torch_npu
# lacks, and other targets, stay.
from unittest import mock

import pytest
import torch


@pytest.fixture
def cuda_true(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: None)


def test_count():
    with mock.patch("mypkg.utils.torch.cuda.device_count", return_value=2):
        assert parse_devices("auto") == 2
    with mock.patch("torch.cuda.is_available", return_value=True):
        pass
    with mock.patch.object(torch.cuda, "device_count", return_value=4):
        pass


def test_more(mocker, monkeypatch):
    mocker.patch("torch.cuda.device_count", return_value=2)
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    mock.patch("torch.cuda.not_a_real_api")
    mock.patch("os.environ", {})

"""NPU706-NPU708: torch.compile's reduce-overhead mode and torch.optim's fused=True in code ported to the NPU. The
golden cases show the default mode; here: `--other-devices drop`, every torch-npu target, and the ported code run on
CPU torch (the original values) and under the emulated npu device (the NPU's)."""

from __future__ import annotations

import pytest

from ascend_port.core import npu_api
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.python import port_source
from ascend_port.rules.optimizers import WITHOUT_FUSED_ADAM_SGD

TRAINING = """\
import torch

model = torch.nn.Linear(4, 4).cuda()
fast = torch.compile(model, mode="reduce-overhead")
opt = torch.optim.Adam(model.parameters(), lr=1e-2, fused=True)
loss = fast(torch.ones(2, 4).cuda()).sum()
loss.backward()
opt.step()
"""


def _port(text: str, **options) -> str:
    ported = port_source(text, Selection(), PortOptions(**options))
    return ported.new_text if ported.new_text is not None else text


def test_drop_removes_the_mode_and_fused_arguments() -> None:
    ported = _port(TRAINING, other_devices="drop", target="2.8.0.post5")
    assert "fast = torch.compile(model)\n" in ported
    assert "opt = torch.optim.Adam(model.parameters(), lr=1e-2)\n" in ported
    # (an argument before others: the rest keep their commas)
    middle = TRAINING.replace('mode="reduce-overhead")', 'mode="reduce-overhead", fullgraph=True)')
    assert "torch.compile(model, fullgraph=True)\n" in _port(middle, other_devices="drop")


def test_inference_keeps_reduce_overhead() -> None:
    inference = TRAINING.replace("loss.backward()\n", "")
    assert 'mode="reduce-overhead")' in _port(inference)
    assert "NPU707" not in _port(inference)


@pytest.mark.parametrize("release", [r.version for r in npu_api.releases()])
def test_fused_follows_the_target(release: str) -> None:
    ported = _port(TRAINING, target=release)
    rewritten = 'fused=None if hasattr(torch, "npu") and torch.npu.is_available() else True)' in ported
    assert rewritten == (release in WITHOUT_FUSED_ADAM_SGD)
    adamw = _port(TRAINING.replace("optim.Adam(", "optim.AdamW("), target=release)
    assert "fused=True)" in adamw  # _fused_adamw_ is in every release


def test_the_releases_without_the_kernels_are_covered_releases() -> None:
    """A release named there that the tool does not cover would never be a target: the rule would be dead for it."""
    assert WITHOUT_FUSED_ADAM_SGD <= {r.version for r in npu_api.releases()}
    assert npu_api.newest_release() not in WITHOUT_FUSED_ADAM_SGD


def test_the_choices_keep_the_original_values_without_an_npu() -> None:
    """On CPU torch (no torch.npu) the chosen values are the original ones: the CUDA path is unchanged."""
    ported = _port(TRAINING, target="2.8.0.post5")
    import torch

    assert not hasattr(torch, "npu")
    mode = ported.split("mode=", 1)[1].split(")\n", 1)[0]
    fused = ported.split("fused=", 1)[1].split(")\n", 1)[0]
    assert eval(mode, {"torch": torch}) == "reduce-overhead"
    assert eval(fused, {"torch": torch}) is True

"""NPU710: an inference module's torch.compile gets TorchAir's "npu" backend on the NPU. The golden cases show the
default mode; here: `--other-devices drop`, the chooser's value without an NPU (CPU torch: inductor, as before), and
the ported module run under the emulated npu device, every covered release registering the backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.python import port_source

INFERENCE = """\
import torch

model = torch.nn.Linear(4, 2).cuda()
fast = torch.compile(model)
with torch.no_grad():
    print(torch.equal(fast(torch.ones(3, 4).cuda()), model(torch.ones(3, 4).cuda())))
"""


def _port(text: str, **options) -> str:
    ported = port_source(text, Selection(), PortOptions(**options))
    return ported.new_text if ported.new_text is not None else text


def test_drop_writes_the_npu_backend_alone() -> None:
    assert 'fast = torch.compile(model, backend="npu")\n' in _port(INFERENCE, other_devices="drop")


def test_training_modules_are_left_to_npu707() -> None:
    training = INFERENCE + "fast(torch.ones(3, 4).cuda()).sum().backward()\n"
    ported = _port(training)
    assert 'backend="npu"' not in ported and "NPU707" in ported


def test_without_an_npu_the_choice_is_inductor_as_before() -> None:
    """CPU torch has no torch.npu: the value the port chose is the original backend."""
    ported = _port(INFERENCE)
    [line] = [line for line in ported.splitlines() if "torch.compile" in line]
    choice = line.split("backend=", 1)[1].rsplit(")", 1)[0]
    assert eval(choice, {"torch": torch}) == "inductor"


@pytest.mark.slow
@pytest.mark.parametrize("release", ["2.1.0.post17", None])
def test_the_ported_module_runs_on_the_emulated_npu(tmp_path: Path, release: str | None) -> None:
    """torch_npu registers the "npu" dynamo backend (TorchAir, lazily) in every covered release: under the
    emulator it runs eagerly and says so."""
    from emulation import CLI, check, needs_compiler, run

    needs_compiler()
    script = tmp_path / "infer.py"
    script.write_text(_port(INFERENCE), "utf-8")
    report = tmp_path / "report.json"
    options = ["--torch-npu", release] if release else []
    out = run([*CLI, "emulate", *options, "--report", str(report), "--", "python", str(script)], cwd=tmp_path)
    assert check(out).strip() == "True"
    notes = json.loads(report.read_text("utf-8"))["notes"]
    assert any("backend='npu'" in note and "TorchAir" in note for note in notes), notes

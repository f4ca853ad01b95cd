"""NPU426 (GEGLU -> npu_geglu): what the golden cases do not show: the target release decides, the NPU-only fork
writes the op alone, and other devices' tensors keep the original computation bit for bit."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_port.core import npu_api
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.python import port_source

torch = pytest.importorskip("torch")

from fake_modules import installed  # noqa: E402

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
SOURCE = (GOLDEN / "NPU426/geglu.in.py").read_text("utf-8")


def test_every_covered_release_has_npu_geglu_with_its_sides():
    for release in npu_api.releases():
        assert "npu_geglu" in npu_api.load_release(release.version).ops, release.version
        assert "bool activate_left=False" in (npu_api.op_schema("npu_geglu", release.version) or ""), release.version


def test_a_target_whose_geglu_has_no_activate_left_keeps_the_code(monkeypatch):
    """An npu_geglu that does not say which half it activates (the docs' older prototype) is not written."""
    ported = port_source(SOURCE, Selection(), PortOptions(target="2.2.0.post2")).new_text
    assert ported is not None and ported.count("torch_npu.npu_geglu(") == 3
    old = "npu_geglu(Tensor self, int dim=-1, int approximate=1) -> (Tensor, Tensor)"
    monkeypatch.setattr(npu_api, "op_schema", lambda op, version: old if op == "npu_geglu" else None)
    assert port_source(SOURCE, Selection(), PortOptions(target="2.2.0.post2")).new_text in (None, SOURCE)


def test_the_npu_only_fork_writes_the_op_alone():
    ported = port_source(SOURCE, Selection(), PortOptions(other_devices="drop")).new_text
    assert ported is not None and ".device.type" not in ported and ".chunk(" not in ported
    assert "return torch_npu.npu_geglu(self.proj(hidden_states), dim=-1, approximate=0, activate_left=False)[0]" in (
        ported
    )


def test_other_devices_keep_the_original_computation():
    """CPU tensors (the project's own tests) take the original code, bit for bit, with torch_npu not installed."""
    calls: list[str] = []
    results = []
    for name in ("in", "out"):
        namespace: dict = {"__name__": f"geglu_{name}"}
        with installed("gpu", calls):
            exec(compile((GOLDEN / f"NPU426/geglu.{name}.py").read_text("utf-8"), name, "exec"), namespace)
        torch.manual_seed(0)
        layer = namespace["GEGLU"](8, 4)
        x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(1))
        results.append([layer(x), namespace["geglu_first"](x), namespace["geglu_channels"](x[:, :2, None])])
    for original, ported in zip(*results, strict=True):
        assert torch.equal(original, ported)
    assert not [c for c in calls if c.startswith("npu_")]

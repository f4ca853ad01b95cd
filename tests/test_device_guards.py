"""Guards stay guards (NPU108, NPU112) and "cuda" strings that are not devices stay (NPU104, NPU105, NPU106).

What the golden cases (golden/NPU105, NPU106, NPU108, NPU112) cannot show: that a later scan of the ported file
still reports every capability check left for a human, that a guard is never renamed whatever rules are selected,
and where the evidence for a device (or against one) is read from: the whole module, its scopes, Triton's target.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_port.core.catalogue import Confidence
from ascend_port.core.findings import TODO_PATTERN
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.port.python import port_source
from ascend_port.run.engine import RunConfig, run
from ascend_port.run.todos import todos_in

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
# A CUDA-only module with a capability check of every shape the port leaves to a human (re-typed from PaLM,
# x-transformers, transformers and diffusers).
GUARDS = (GOLDEN / "NPU108" / "guards_stay_guards.in.py").read_text("utf-8")
# The same without the two functions that also hold code the port moves to the NPU (see the test below).
CUDA_ONLY_GUARDS = GUARDS.replace('        self.device = torch.device("cuda")\n', "").replace(
    '    return torch.zeros(2, device="cuda")\n', "    return None\n"
)


def port(text: str, selection: Selection | None = None) -> str:
    outcome = port_source(text, selection or Selection())
    return outcome.new_text if outcome.new_text is not None else text


def findings(text: str, rule: str, selection: Selection | None = None) -> list[tuple[int, str]]:
    return sorted(
        (f.line, f.message) for f in port_source(text, selection or Selection()).findings if f.rule.id == rule
    )


# --- a later scan keeps reporting the sites ------------------------------------------------------------------------


def _todo_above(text: str, line: int) -> str | None:
    """The message of the nearest ascend-port TODO comment above line ``line`` of ``text`` (the TODO of the
    statement the line belongs to, in these modules)."""
    for previous in reversed(text.splitlines()[: line - 1]):
        if match := TODO_PATTERN.search(previous):
            return match["text"]
    return None


def test_a_scan_of_the_ported_file_still_reports_every_capability_check() -> None:
    assert CUDA_ONLY_GUARDS != GUARDS
    before = findings(CUDA_ONLY_GUARDS, "NPU108")
    assert len(before) >= 10
    ported = port(CUDA_ONLY_GUARDS)
    after = findings(ported, "NPU108")
    assert sorted(m for _, m in after) == sorted(m for _, m in before)
    for line, message in after:
        assert _todo_above(ported, line) == message, (line, message)
    # and the port of the port changes nothing
    assert port_source(ported, Selection()).new_text is None


def test_scan_and_todos_list_the_sites_after_the_port(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text(port(CUDA_ONLY_GUARDS), "utf-8")
    result = run([path], RunConfig(jobs=1, cache=False))
    scanned = [f for file in result.files for f in file.findings if f.rule.id == "NPU108"]
    listed = [t for t in todos_in(path, path.read_bytes()) if t.rule == "NPU108"]
    assert len(scanned) == len(listed) == len(findings(CUDA_ONLY_GUARDS, "NPU108"))
    text = path.read_text("utf-8")
    assert sorted(_todo_above(text, f.line) or "" for f in scanned) == sorted(t.text for t in listed)


def test_a_guard_beside_ported_code_is_reported_again() -> None:
    source = (
        "import torch\n\n"
        "def load_quantized():\n"
        "    device_capability = torch.cuda.get_device_capability()\n"
        "    if device_capability[0] == 7:\n"
        "        raise ValueError('not supported on Volta')\n"
        "    return torch.zeros(2, device='cuda')\n"
    )
    ported = port(source)
    assert "torch.zeros(2, device='npu')" in ported and "torch.cuda.get_device_capability()" in ported
    assert [m for _, m in findings(ported, "NPU108")] == [m for _, m in findings(source, "NPU108")]


def test_the_properties_probe_read_through_a_variable_is_reported_again() -> None:
    """PaLM's shape: the properties are stored, then `.major`/`.minor` read. Before, NPU106 renamed the call and
    NPU108 only saw `.major` read right off it, so the port raised AttributeError and a later scan lost the site."""
    source = (
        "import torch\n\n"
        "def configure(flash):\n"
        "    if not torch.cuda.is_available() or not flash:\n"
        "        return None\n"
        "    device_properties = torch.cuda.get_device_properties(torch.device('cuda'))\n"
        "    if device_properties.major == 8 and device_properties.minor == 0:\n"
        "        return (True, False, False)\n"
        "    return (False, True, True)\n"
    )
    ported = port(source)
    assert "torch.cuda.get_device_properties(torch.device('cuda'))" in ported
    assert "if not torch.cuda.is_available() or not flash:" in ported  # the early exit stays a CUDA test
    assert "torch.npu" not in ported
    again = findings(ported, "NPU108")
    assert len(again) == 1 and ".major/.minor" in again[0][1]


# --- a guard is never renamed, whatever the selection ---------------------------------------------------------------


@pytest.mark.parametrize(
    "selection",
    [
        Selection(),
        Selection(ignore=("NPU108",)),
        Selection(ignore=("NPU112", "NPU304")),
        Selection(min_confidence=Confidence.HIGH),
    ],
    ids=["default", "no-NPU108", "no-NPU112-NPU304", "high-only"],
)
def test_no_guard_is_ever_renamed_to_torch_npu(selection: Selection) -> None:
    ported = port(GUARDS, selection)
    for probe in ("get_device_capability(device)", "get_device_capability(query.device)"):
        assert f"torch.npu.{probe}" not in ported and f"torch.cuda.{probe}" in ported
    assert "self.props = torch.cuda.get_device_properties(0)" in ported
    assert "torch.cuda.get_device_properties(torch.cuda.current_device()).major < 8" in ported
    assert "torch.npu.get_device_capability()[0]" not in ported
    # what is not a guard is still ported: the total memory exists on NPU
    assert "torch.npu.get_device_properties(0).total_memory" in ported


def test_a_printed_capability_is_renamed_and_keeps_its_todo() -> None:
    source = "import torch\n\nprint(torch.cuda.get_device_capability())\n"
    ported = port(source)
    assert "print(torch.npu.get_device_capability())" in ported
    assert [m for _, m in findings(ported, "NPU108")] == [m for _, m in findings(source, "NPU108")]


def test_sm_gates_turn_off_only_cuda_only_features() -> None:
    gate = "import torch\n\ndef {name}():\n    return torch.cuda.get_device_capability()[0] >= 9\n"
    assert "return False" in port(gate.format(name="supports_tma"))
    assert "return False" in port(gate.format(name="use_fp8_kernels"))
    assert "return False" not in port(gate.format(name="use_fast_path"))
    # NPU304 owns bf16 checks, even where a CUDA-only feature is named too
    bf16 = "import torch\n\ndef use_bf16_flash_attn():\n    return torch.cuda.get_device_capability()[0] >= 8\n"
    assert "return torch.npu.is_bf16_supported()" in port(bf16)
    # a disabled NPU112 leaves the gate to NPU108: kept, with its TODO
    off = port(gate.format(name="supports_tma"), Selection(ignore=("NPU112",)))
    assert "return torch.cuda.get_device_capability()[0] >= 9" in off and "NPU108 [low]" in off


def test_a_block_where_npu304_removes_a_probe_keeps_the_other_probes() -> None:
    """NPU304 and NPU112 both remove probe assignments; two removals in one block would drop the wrong statement."""
    source = (
        "import torch\n\n"
        "def setup():\n"
        "    major, minor = torch.cuda.get_device_capability()\n"
        "    use_bf16 = major >= 8\n"
        "    cap = torch.cuda.get_device_capability()\n"
        "    use_fp8 = cap >= (8, 9)\n"
        "    return use_bf16, use_fp8\n"
    )
    ported = port(source)
    assert "use_bf16 = torch.npu.is_bf16_supported()" in ported and "major" not in ported
    assert "    cap = torch.cuda.get_device_capability()\n    use_fp8 = cap >= (8, 9)\n" in ported
    assert "return use_bf16, use_fp8" in ported


def test_the_availability_test_of_a_kept_guard_stays_cuda_and_others_are_ported() -> None:
    source = (
        "import torch\n\n"
        "ok = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    )
    ported = port(source)
    assert "ok = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)" in ported
    assert "device = 'npu' if torch.npu.is_available() else 'cpu'" in ported


# --- functions named for CUDA answer for CUDA ------------------------------------------------------------------------


def test_a_function_named_for_cuda_keeps_answering_for_cuda() -> None:
    source = (
        "import torch\n\n"
        "def is_cuda_available():\n    return torch.cuda.is_available()\n\n"
        "def has_cuda():\n    return torch.cuda.device_count() > 0\n\n"
        "def is_cuda_tensor(x):\n    return x.is_cuda\n\n"
        "def get_device():\n    return torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    )
    ported = port(source)
    assert "def is_cuda_available():\n    return torch.cuda.is_available()" in ported
    assert "def has_cuda():\n    return torch.cuda.device_count() > 0" in ported
    assert "return x.is_npu" in ported  # about the tensor's device, not about CUDA: ported
    assert "torch.device('npu' if torch.npu.is_available() else 'cpu')" in ported


# --- "cuda" strings: device context required, Triton's target refused -------------------------------------------------


def test_comparisons_need_a_device_on_the_other_side() -> None:
    source = (
        "import torch\n\n"
        "def f(x, backend, kind, dev):\n"
        "    a = x.device.type == 'cuda'\n"
        "    b = backend == 'cuda'\n"
        "    c = kind in ('cuda', 'cpu')\n"
        "    d = dev == 'cuda'\n"
        "    e = str(x.device).startswith('cuda')\n"
        "    g = kind.startswith('cuda')\n"
        "    return a, b, c, d, e, g\n"
    )
    ported = port(source)
    assert "a = x.device.type == 'npu'" in ported and "d = dev == 'npu'" in ported
    assert "e = str(x.device).startswith('npu')" in ported
    assert "b = backend == 'cuda'" in ported and "c = kind in ('cuda', 'cpu')" in ported
    assert "g = kind.startswith('cuda')" in ported


def test_triton_target_names_are_refused_by_scope() -> None:
    source = (
        "import triton\n\n"
        "def get_available_device():\n"
        "    return triton.runtime.driver.active.get_current_target().backend\n\n"
        "device = get_available_device()\n"
        "IS_NVIDIA = device == 'cuda'\n\n"
        "def uses_the_module_name():\n"
        "    return device == 'cuda'\n\n"
        "def shadows_it(device):\n"
        "    return device == 'cuda'\n\n"
        "def local_target():\n"
        "    device = triton.runtime.driver.active.get_current_target().backend\n"
        "    return device == 'cuda'\n"
    )
    ported = port(source)
    assert ported.count("device == 'cuda'") == 3 and ported.count("device == 'npu'") == 1
    assert "def shadows_it(device):\n    return device == 'npu'" in ported


def test_argparse_defaults_are_ported_only_for_device_options() -> None:
    source = (
        "import argparse\n\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--device', default='cuda', choices=['cuda', 'cpu'])\n"
        "parser.add_argument('--backend', default='cuda', choices=['cuda', 'triton'])\n"
        "parser.add_argument('-d', dest='device_type', default='cuda')\n"
    )
    ported = port(source)
    assert "'--device', default='npu', choices=['npu', 'cpu']" in ported
    assert "'--backend', default='cuda', choices=['cuda', 'triton']" in ported
    assert "dest='device_type', default='npu'" in ported


def test_the_whole_module_path_agrees_with_the_chunked_one() -> None:
    """LibCST's codemod runner ports the module in one piece: the module facts must read the same there."""
    import libcst as cst

    from ascend_port.port.python import port_module

    for name in ("NPU108/guards_stay_guards", "NPU112/sm_gates", "NPU105/device_context"):
        text = (GOLDEN / f"{name}.in.py").read_text("utf-8")
        assert port_module(cst.parse_module(text), Selection())[0].code == port(text), name


def test_handler_ports_the_guards_like_port_source() -> None:
    ported = handler_for(Path("model.py")).port(GUARDS.encode(), Selection(), PortOptions())
    assert ported.new_text == port(GUARDS)

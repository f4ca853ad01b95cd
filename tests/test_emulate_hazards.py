"""ascend-port emulate's run hazards: CPU fallbacks, float64 / complex tensors on the npu and ops seen with many
input shapes, each named in the report (JSON and stderr summary) with its advice; a clean program gets none."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from emulation import CLI, check, needs_compiler, run

from ascend_port.emulate import hazards

HAZARDS = tuple(hazards.SECTIONS)


def emulate(tmp_path: Path, code: str, *options: str) -> tuple[str, dict]:
    """The stderr summary and the JSON report of ``code`` run under the emulator."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code), "utf-8")
    report = tmp_path / "report.json"
    argv = [*CLI, "emulate", "--report", str(report), *options, "--", sys.executable, str(script)]
    result = run(argv, timeout=300, cwd=tmp_path)
    check(result)
    return result.stderr, json.loads(report.read_text("utf-8"))


@pytest.fixture(scope="module", autouse=True)
def built_device(tmp_path_factory):
    """The native device is compiled once (cached under ~/.cache/ascend-port): the first run pays."""
    needs_compiler()
    check(run([*CLI, "emulate", "--", sys.executable, "-c", "import torch_npu"], timeout=600))


# aten::logit has no NPU kernel in 2.2.0.post2 to 2.4.0.post4 (torch_npu_kernels.json) and has one from 2.5.1.post1;
# aten::digamma has none in any covered release.
FALLBACKS = """
    import torch, torch_npu
    x = torch.rand(8, device="npu").clamp(0.1, 0.9)
    for _ in range(3):
        y = torch.logit(x)
        z = torch.digamma(x + 1)
    assert y.device.type == "npu" and z.device.type == "npu"
"""


def test_an_op_without_npu_kernel_is_a_cpu_fallback_with_the_release_that_has_it(tmp_path):
    stderr, report = emulate(tmp_path, FALLBACKS, "--torch-npu", "2.4.0")
    fallbacks = report["cpu_fallbacks"]
    assert fallbacks["aten::logit"]["calls"] == 3
    assert "torch_npu 2.5.1.post1 and newer have an NPU kernel" in fallbacks["aten::logit"]["advice"]
    assert fallbacks["aten::digamma"]["advice"] == hazards.ON_HOST
    assert "ops with no NPU kernel in torch_npu 2.4.0.post4" in stderr
    assert "aten::digamma: 3 call(s): runs on the host: move it off the hot path or replace it" in stderr
    # ops the release has a kernel for (add, clamp, rand's uniform_) are no fallback
    assert set(fallbacks) == {"aten::logit", "aten::digamma"}


def test_the_same_op_on_a_release_with_its_kernel_is_no_fallback(tmp_path):
    _, report = emulate(tmp_path, FALLBACKS, "--torch-npu", "2.5.1.post1")
    assert set(report["cpu_fallbacks"]) == {"aten::digamma"}


def test_float64_and_complex_tensors_on_the_npu(tmp_path):
    stderr, report = emulate(
        tmp_path,
        """
        import torch, torch_npu
        a = torch.ones(4, dtype=torch.float64, device="npu")
        b = torch.arange(4.0, dtype=torch.float64).to("npu")
        c = (a * b).sum()
        freqs = torch.polar(torch.ones(2, 4), torch.zeros(2, 4)).npu()
        rotated = freqs * freqs
        """,
    )
    dtypes = report["dtype_substitutions"]
    assert dtypes["aten::mul.Tensor float64"]["calls"] == 1
    assert dtypes["aten::mul.Tensor float64"]["advice"] == hazards.FLOAT64_ADVICE
    assert dtypes["aten::empty_strided float64 (created on / moved to the npu)"]["calls"] >= 1
    assert dtypes["aten::mul.Tensor complex64"]["advice"] == hazards.COMPLEX_ADVICE
    assert "explain complex-rope" in hazards.COMPLEX_ADVICE and "use float32" in hazards.FLOAT64_ADVICE
    assert "float64 / complex tensors on the npu:" in stderr
    assert "aten::mul.Tensor complex64: 1 call(s): complex tensors are mostly unsupported" in stderr


def test_variable_sequence_lengths_are_dynamic_shapes(tmp_path):
    stderr, report = emulate(
        tmp_path,
        """
        import torch, torch_npu
        for _ in range(20):  # one shape, many steps: not dynamic
            torch.ones(3, 3, device="npu").exp()
        for _ in range(3):  # 12 fixed shapes, all seen in the first step: not dynamic either
            for width in range(4, 16):
                torch.ones(width, 3, device="npu").sigmoid()
        layer = torch.nn.Linear(16, 16).npu()
        for length in range(4, 24):  # 20 sequence lengths, new ones to the end
            out = layer(torch.ones(2, length, 16, device="npu")).softmax(-1)
        """,
    )
    shapes = report["dynamic_shapes"]
    assert shapes["aten::_softmax"]["shapes"] == 20
    assert shapes["aten::_softmax"]["message"] == "CANN compiles a kernel per new shape: 20 shapes"
    assert "bucket" in shapes["aten::_softmax"]["advice"]
    assert "set_compile_mode(jit_compile=False)" in shapes["aten::_softmax"]["advice"]
    assert "aten::exp" not in shapes and "aten::sigmoid" not in shapes
    assert not any(op.startswith("aten::view") for op in shapes)
    assert "aten::_softmax: CANN compiles a kernel per new shape: 20 shapes: pad or bucket" in stderr


def test_a_clean_program_has_no_hazard_section(tmp_path):
    stderr, report = emulate(
        tmp_path,
        """
        import torch, torch_npu
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 2)).npu()
        opt = torch.optim.AdamW(model.parameters())
        x = torch.randn(4, 8, device="npu")
        for _ in range(3):
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
        """,
    )
    assert all(report[section] == {} for section in HAZARDS), {s: report[s] for s in HAZARDS}
    for title in hazards.SECTIONS.values():
        assert title.split(" {")[0].split(" (")[0] not in stderr


def test_a_fused_op_s_reference_is_not_the_program_s_ops(tmp_path):
    """The emulator computes npu_rms_norm from aten ops (float32 upcasts, ...): a real one is one kernel."""
    _, report = emulate(
        tmp_path,
        """
        import torch, torch_npu
        gamma = torch.ones(8, device="npu")
        for length in range(4, 24):  # (moved, not made, on the npu: a move runs no op of the fallback)
            torch_npu.npu_rms_norm(torch.ones(length, 8).npu(), gamma)
        """,
    )
    assert report["calls"]["torch_npu.npu_rms_norm"] == 20
    assert report["dynamic_shapes"] == {}


# torch.optim's fused SGD: aten::_fused_sgd_ has an NPU kernel in 2.7.1 and 2.10.0 and newer, none in 2.8.0 (the
# emulator runs it with a Python kernel of its own, emulate/device.py, which the hazards count all the same).
FUSED_SGD = """
    import torch, torch_npu
    p = torch.zeros(8, device="npu", requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9, fused=True)
    for _ in range(2):
        p.grad = torch.ones(8, device="npu")
        opt.step()
"""


def test_fused_sgd_is_a_cpu_fallback_where_the_release_lacks_its_kernel(tmp_path):
    _, report = emulate(tmp_path, FUSED_SGD, "--torch-npu", "2.8.0")
    assert report["cpu_fallbacks"]["aten::_fused_sgd_"]["calls"] == 2
    _, report = emulate(tmp_path, FUSED_SGD, "--torch-npu", "2.10.0")
    assert "aten::_fused_sgd_" not in report["cpu_fallbacks"]

"""Issue 16, section 3 (values and renames) on real code: DeepSpeed 0.16.5's sources, as an NPU-only fork would port
them (`--other-devices drop`: DeepSpeed also runs elsewhere, so by default its CUDA code is only reported).

- `"nccl_version"` (a key of DeepSpeed's build-info dict, in setup.py and git_version_info_installed.py) is an
  identifier, not an environment variable: no NCCL-variable rule may fire on it (the rules are case-sensitive).
- `apex.optimizers.FusedAdam` is used as a class, not called (ZeRO's list of supported optimizers, engine.py's
  `isinstance` tuple): it must stay apex's, never become torch_npu's NpuFusedAdamW (other defaults).

And mmdet 2.28.2 (the wheel tests/test_real_libraries.py pins):

- `KnowledgeDistillationSingleStageDetector.cuda()` is the class's own method: it gets NPU113's `npu = cuda` (the
  calls renamed to `.npu()` would skip the teacher model). `GeneralData` has an `npu()` of its own besides its
  `cuda()`: NPU114's TODO, and no alias.
- `device = torch.cuda.current_device()` or `"cpu"`, then `torch.tensor(..., device=device)` (the samplers): an
  integer device on one path, so NPU210 leaves a TODO and rewrites nothing.

The distributions are downloaded once into the git-ignored .cache/corpora (benchmarks/corpora.py), never built.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

NAME, VERSION = corpora.DEEPSPEED_MULTI_DEVICE
NPU_ONLY = PortOptions(other_devices="drop")
MMDET = ("mmdet", "2.28.2")


def deepspeed_tree() -> Path:
    try:
        root = corpora.fetch(NAME, VERSION, sdist=True)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download {NAME} {VERSION}: {error}")
    return root / f"{NAME}-{VERSION}"


def mmdet_tree() -> Path:
    try:
        root = corpora.fetch(*MMDET)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download mmdet: {error}")
    return root


def port(path: Path) -> tuple[str, str, list[str]]:
    """(original, ported, finding lines) of one file."""
    handler = handler_for(path)
    assert handler is not None
    data = path.read_bytes()
    result = handler.port(data, Selection(), NPU_ONLY)
    text = result.source.text
    new = result.new_text if result.new_text is not None else text
    return text, new, [f"{f.line} {f.rule.id} {f.message}" for f in result.findings]


@pytest.mark.parametrize("path", ["setup.py", "deepspeed/git_version_info_installed.py"])
def test_lower_case_nccl_keys_are_not_variables(path: str) -> None:
    original, ported, findings = port(deepspeed_tree() / path)
    assert "nccl_version" in original.lower()
    assert ported.count("nccl_version") == original.count("nccl_version")
    assert not [f for f in findings if "NCCL_VERSION" in f.upper() or " NPU20" in f and "nccl" in f.lower()]


@pytest.mark.parametrize("path", ["deepspeed/runtime/zero/utils.py", "deepspeed/runtime/engine.py"])
def test_apex_fused_adam_used_as_a_class_stays_apex(path: str) -> None:
    original, ported, findings = port(deepspeed_tree() / path)
    assert "apex.optimizers.FusedAdam" in original
    assert ported.count("apex.optimizers.FusedAdam") == original.count("apex.optimizers.FusedAdam")
    code = [line for line in ported.splitlines() if not line.lstrip().startswith("#")]  # (TODOs may name it)
    assert not [line for line in code if "NpuFusedAdam" in line]
    assert not [f for f in findings if " NPU505 " in f]


def test_own_cuda_method_gets_an_npu_alias() -> None:
    cls = "KnowledgeDistillationSingleStageDetector"
    original, ported, findings = port(mmdet_tree() / "mmdet/models/detectors/kd_one_stage.py")
    assert [f for f in findings if " NPU113 " in f and f"{cls}.cuda()" in f]
    assert ported.count("def cuda(self") == original.count("def cuda(self")
    (node,) = [n for n in ast.walk(ast.parse(ported)) if isinstance(n, ast.ClassDef) and n.name == cls]
    names = [getattr(item, "name", None) or ast.unparse(item) for item in node.body]
    assert names[names.index("cuda") + 1] == "npu = cuda"


def test_own_cuda_method_beside_an_own_npu_method_gets_a_todo() -> None:
    original, ported, findings = port(mmdet_tree() / "mmdet/core/data_structures/general_data.py")
    assert [f for f in findings if " NPU114 " in f and "GeneralData.cuda()" in f]
    assert "npu = cuda" not in ported and ported.count("def npu(self") == original.count("def npu(self") == 1


@pytest.mark.parametrize(
    "path", ["mmdet/core/bbox/samplers/random_sampler.py", "mmdet/core/bbox/samplers/score_hlr_sampler.py"]
)
def test_integer_device_on_one_path_gets_a_todo(path: str) -> None:
    original, ported, findings = port(mmdet_tree() / path)
    assert len([f for f in findings if " NPU210 " in f]) == 1
    code = "\n".join(line for line in ported.splitlines() if not line.lstrip().startswith("#"))
    assert "device=device)" in code and 'torch.device("npu"' not in code

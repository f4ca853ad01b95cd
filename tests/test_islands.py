"""NPU122 (rules/islands.py): the CUDA islands of a project that supports the NPU already, beyond its golden cases:
a project that does not keeps today's NPU rewrites, and a target whose torch lacks torch.accelerator keeps the
report; the scan counts what is left of such a project, not its CUDA paths."""

from __future__ import annotations

from pathlib import Path

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.reports import effort
from ascend_port.rules.island_routes import device_helpers, shared_predicates
from ascend_port.run.engine import RunConfig, run

ISLAND = "import torch\n\ntorch.cuda.synchronize()\nn = torch.cuda.current_device()\n"


def _port(text: str, options: PortOptions):
    handler = handler_for(Path("m.py"))
    assert handler is not None
    return handler.port(text.encode(), Selection(), options)


def test_a_project_that_does_not_support_the_npu_gets_the_npu_rewrites(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(ISLAND, "utf-8")
    result = run([tmp_path], RunConfig(cache=False))
    [train] = result.files
    assert [(f.rule.id, f.applied) for f in train.findings if f.rule.id != "NPU100"] == [
        ("NPU106", True),
        ("NPU106", True),
    ]
    assert b"torch.npu.synchronize()" in (train.new_bytes or b"")
    assert not [n for n in result.notes if "supports the NPU already" in n] and not result.npu_support


def test_the_target_torch_decides_what_torch_accelerator_may_be_used() -> None:
    # torch 2.5: no torch.accelerator, the islands stay reported
    old = _port(ISLAND, PortOptions(npu_aware=True, target="2.5.1.post1"))
    assert old.new_text is None
    assert [(f.rule.id, f.applied) for f in old.findings] == [("NPU106", False), ("NPU106", False)]
    # torch 2.6: synchronize, but current_device_idx, not yet current_device_index (2.7)
    six = _port(ISLAND, PortOptions(npu_aware=True, target="2.6.0.post5"))
    assert six.new_text == ISLAND.replace("torch.cuda.synchronize", "torch.accelerator.synchronize")
    assert [(f.rule.id, f.applied) for f in six.findings] == [("NPU122", True), ("NPU106", False)]


def test_an_npu_only_fork_ports_the_islands_to_the_npu() -> None:
    """--other-devices drop: the project is not read as NPU-aware, and NPU106 ports to torch.npu."""
    ported = _port(ISLAND, PortOptions(other_devices="drop"))
    assert ported.new_text is not None and "torch.npu.synchronize()" in ported.new_text
    assert "NPU122" not in {f.rule.id for f in ported.findings}


def test_the_effort_of_a_project_that_runs_on_the_npu_is_what_is_left() -> None:
    counts = {"island": 4, "kernel-kept": 258, "dependency-kept": 1, "fused-op": 300}
    lines = effort.effort(counts)
    # (the kernels and dependencies serve CUDA, the fused ops would speed up what runs: no hours)
    assert sum(line.hours for line in lines) == 1.0
    verdict, reasons = effort.feasibility(counts, lines)
    assert verdict == effort.ADAPT and reasons == [
        "4 CUDA calls outside the project's device dispatch to route by hand"
    ]
    assert effort.feasibility({"kernel-kept": 3}, effort.effort({"kernel-kept": 3}))[0] == effort.READY


def test_a_library_whose_users_run_an_older_torch_keeps_torch_cuda(tmp_path: Path) -> None:
    """torch.accelerator's names only where every torch the project's requirements allow has them: transformers
    (torch>=2.2 in its setup.py) keeps `torch.cuda.empty_cache()`, which torch.accelerator has from 2.9 only."""
    (tmp_path / "setup.py").write_text('install_requires = ["torch>=2.2", "numpy"]\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "npu.py").write_text("import torch_npu\n\ndevice = 'npu'\n")
    (tmp_path / "pkg" / "train.py").write_text("import torch\n\n\ndef step():\n    torch.cuda.empty_cache()\n")
    result = run([tmp_path], RunConfig(cache=False, jobs=1))
    assert not [f for f in result.files if f.path.endswith("train.py") and f.changed]
    (tmp_path / "setup.py").write_text('install_requires = ["torch>=2.9", "numpy"]\n')
    result = run([tmp_path], RunConfig(cache=False, jobs=1))
    (train,) = [f for f in result.files if f.path.endswith("train.py")]
    assert train.new_bytes is not None and b"torch.accelerator.empty_cache()" in train.new_bytes


def _project(tmp_path: Path, modules: dict[str, str]) -> dict[str, str]:
    """``modules`` (path -> text) written as a package, ported; each file's new text (its old one when unchanged)."""
    for name, text in {"setup.py": "", **modules}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    result = run([tmp_path], RunConfig(cache=False, jobs=1))
    new = {Path(f.path).as_posix(): (f.new_bytes or b"").decode() for f in result.files}
    return {name: next(text for path, text in new.items() if path.endswith(name)) for name in modules}


def test_an_island_goes_through_the_device_helper_its_module_imports(tmp_path: Path) -> None:
    helper = (
        "import torch\n\n\ndef get_device():\n    if torch.cuda.is_available():\n        return torch.device('cuda')\n"
        "    if torch.npu.is_available():\n        return torch.device('npu')\n    return torch.device('cpu')\n"
    )
    ported = _project(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/npu.py": "import torch_npu\n",  # (the project supports the NPU)
            "pkg/utils.py": helper,
            "pkg/train.py": "from pkg.utils import get_device\n\n\ndef step(model):\n    return model.cuda()\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/eval.py": "from ..utils import get_device as dev\n\n\ndef step(model):\n    return model.cuda()\n",
            # (no import of the helper: torch.accelerator)
            "pkg/other.py": "import torch\n\n\ndef step(model):\n    return model.cuda()\n",
        },
    )
    assert "return model.to(get_device())" in ported["pkg/train.py"]
    assert "return model.to(dev())" in ported["pkg/sub/eval.py"]
    assert "return model.to(torch.accelerator.current_accelerator())" in ported["pkg/other.py"]
    assert not ported["pkg/utils.py"]  # (the helper, a dispatch, unchanged)


def test_a_cuda_predicate_another_module_imports_is_ported_on_both_sides(tmp_path: Path) -> None:
    """`HAS_CUDA = torch.cuda.is_available()` tested in its module by multi-device chains alone would keep its
    meaning and gain NPU branches (golden/NPU120/cuda_predicate_name), but the module that imports it ports its
    users to the NPU: the binding moves with them, and so do the chains that test it, in both modules."""
    env = (
        "import torch\n\nHAS_CUDA = torch.cuda.is_available()\nHAS_MPS = torch.backends.mps.is_available()\n\n\n"
        "def preferred():\n    if HAS_CUDA:\n        return torch.device('cuda')\n    if HAS_MPS:\n"
        "        return torch.device('mps')\n    return torch.device('cpu')\n"
    )
    use = "from pkg.env import HAS_CUDA\n\nDEVICE = 'cuda' if HAS_CUDA else 'cpu'\n"
    ported = _project(tmp_path, {"pkg/__init__.py": "", "pkg/env.py": env, "pkg/use.py": use})
    assert "HAS_CUDA = torch.npu.is_available()" in ported["pkg/env.py"]
    assert "return torch.device('npu')" in ported["pkg/env.py"] and "elif" not in ported["pkg/env.py"]
    assert "DEVICE = 'npu' if HAS_CUDA else 'cpu'" in ported["pkg/use.py"]
    # Imported by no other module: the name keeps its meaning, its chain gains an NPU branch (as before).
    alone = _project(tmp_path / "alone", {"pkg/__init__.py": "", "pkg/env.py": env})
    assert "HAS_CUDA = torch.cuda.is_available()" in alone["pkg/env.py"] and "elif" in alone["pkg/env.py"]


def test_a_shared_cuda_predicate_is_imported_from_its_own_module() -> None:
    """`from pkg.env import HAS_CUDA`, `from .env import (HAS_CUDA as cuda_ok,)` share env.py's name; torch's
    TEST_CUDA imported beside a TEST_CUDA of the project's utils.py does not."""
    binding = b"import torch\n\nHAS_CUDA = torch.cuda.is_available()\nTEST_CUDA = torch.cuda.is_available()\n"
    texts = [
        (Path("pkg/env.py"), binding),
        (Path("pkg/a.py"), b"from pkg.env import HAS_CUDA\n"),
        (Path("pkg/utils.py"), b"import torch\n\nTEST_CUDA = torch.cuda.is_available()  # (its own)\n"),
        (Path("pkg/b.py"), b"from torch.testing._internal.common_utils import TEST_CUDA\n"),
    ]
    assert shared_predicates(texts) == ("HAS_CUDA",)
    relative = [(Path("pkg/env.py"), binding), (Path("pkg/c.py"), b"from .env import (\n    HAS_CUDA as cuda_ok,\n)\n")]
    assert shared_predicates(relative) == ("HAS_CUDA",)
    assert shared_predicates([(Path("pkg/env.py"), binding)]) == ()


def test_a_device_helper_is_known_by_the_packages_that_pass_it_on(tmp_path: Path) -> None:
    """peft's `infer_device`, defined in peft/utils/other.py, imported as `from peft.utils import infer_device`."""
    helper = b"def infer_device():\n    if cuda():\n        return 'cuda'\n    elif npu():\n        return 'npu'\n    return 'cpu'\n"
    files = {
        "peft/__init__.py": b"",
        "peft/utils/__init__.py": b"from .other import (\n    infer_device,\n)\n",
        "peft/utils/other.py": helper,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(text)
    found = device_helpers((tmp_path / name, text) for name, text in files.items())
    assert found == ("peft.utils.infer_device", "peft.utils.other.infer_device")

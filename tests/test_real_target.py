"""Issue 17 on real code: projects that already run on the NPU (DeepSpeed 0.16.5's NPU_Accelerator and fused ops,
accelerate 1.15.0, diffusers 0.42.1, transformers 5.23.0) call torch_npu by hand; ``check-api`` must find those names
and pass them for every release they can run on, so that a CI job built on it fails only for a real gap. (Measured
while writing it: ``torch.npu.default_generators``, in no ``__all__``, and ``torch_npu.npu_apply_adam_w``, used by
DeepSpeed long before its docs listed it in 2.7.1, were flagged until listings were read as what they are.)
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_port.python.api_names import api_names, missing_names
from ascend_port.run.api_check import MAY_USE_NPU, check_api

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

PROJECTS = {
    name: (name, version, sdist) for name, version, sdist in (*corpora.MULTI_DEVICE, (*corpora.TRANSFORMERS, False))
}
# How many torch_npu / torch.npu uses each project has at least (counted on the pinned releases): the check saw them.
USES = {"deepspeed": 100, "accelerate": 20, "transformers": 15, "diffusers": 5}


def _tree(project: str) -> Path:
    name, version, sdist = PROJECTS[project]
    try:
        root = corpora.fetch(name, version, sdist=sdist)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download {name} {version}: {error}")
    return (root / f"{name}-{version}" if sdist else root).resolve()


@pytest.mark.parametrize("project", sorted(PROJECTS))
def test_hand_written_npu_code_passes_the_check(project: str) -> None:
    tree = _tree(project)
    modules = []
    for path in corpora.python_files(tree):
        text = path.read_text("utf-8", errors="replace")
        if MAY_USE_NPU.search(text):
            try:
                modules.append((path, ast.parse(text)))
            except SyntaxError:
                continue
    assert sum(len(api_names(module)) for _, module in modules) >= USES[project]  # (the check sees them)
    for version in ("2.1.0.post17", "2.5.1.post1", "2.14.0"):
        missing = [(path, found) for path, module in modules for found in missing_names(module, version)]
        assert missing == [], (version, missing[:5])
    assert check_api([tree], "2.1.0.post17").missing == []  # the command's own walk finds the same

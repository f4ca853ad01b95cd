"""Issue 16 (project files) on real code: LLaMA-Factory 0.9.5's sdist ships Dockerfiles and compose files for CUDA,
for Ascend NPUs and for ROCm side by side. The CUDA ones get the TODOs and edits of NPU600-NPU631 and nothing
else changes in them (the port adds comment lines only); the NPU ones, what the port aims at, are left alone.
The sdist is downloaded once into .cache/corpora (benchmarks/corpora.py), never built or installed.
"""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from ascend_port.core.findings import Finding
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora


@cache
def tree() -> Path:
    name, version, sdist = corpora.LLAMAFACTORY
    try:
        root = corpora.fetch(name, version, sdist=sdist)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download {name} {version}: {error}")
    return root / f"{name}-{version}"


def port(path: str) -> tuple[str, str, list[Finding]]:
    """(original, ported, findings) of one file of the tree, through the handler its name picks."""
    file = tree() / path
    handler = handler_for(file)
    assert handler is not None, path
    ported = handler.port(file.read_bytes(), Selection(), PortOptions())
    original = file.read_text("utf-8")
    return original, ported.new_text if ported.new_text is not None else original, ported.findings


def without_todos(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if "# TODO(ascend-port): NPU" not in line)


@pytest.mark.parametrize(
    "path", ["docker/docker-npu/Dockerfile", "docker/docker-npu/docker-compose.yml", "docker/docker-cuda/README.md"]
)
def test_the_npu_files_are_left_alone(path: str) -> None:
    file = tree() / path
    handler = handler_for(file)
    if handler is None:
        return  # not a project file at all
    ported = handler.port(file.read_bytes(), Selection(), PortOptions())
    assert ported.new_text is None
    assert [f for f in ported.findings if f.applied] == []


def test_compose_gpu_reservation_gets_the_ascend_todo_and_nothing_else_changes() -> None:
    original, ported, findings = port("docker/docker-cuda/docker-compose.yml")
    assert [(f.rule.id, f.line) for f in findings] == [("NPU631", 20)]
    assert without_todos(ported) == original
    lines = ported.splitlines()
    todo = next(i for i, line in enumerate(lines) if "NPU631" in line)
    assert lines[todo + 1].strip() == "devices:" and "/dev/davinci_manager" in lines[todo]
    yaml = YAML(typ="safe")
    assert yaml.load(ported) == yaml.load(original)


def test_dockerfile_flash_attn_build_step_gets_a_todo() -> None:
    original, ported, findings = port("docker/docker-cuda/Dockerfile")
    assert [f.rule.id for f in findings] == ["NPU617"]
    assert "flash-attn" in findings[0].message
    assert without_todos(ported) == original


def test_dockerfile_cuda_wheels_index_apex_and_transformer_engine() -> None:
    original, ported, findings = port("docker/docker-cuda/Dockerfile.megatron")
    assert without_todos(ported) == original
    by_rule = sorted((f.rule.id, f.message.split(":")[0]) for f in findings)
    assert by_rule == [
        ("NPU603", "CUDA wheel index"),  # pip install torch==2.8.0 ... --index-url .../whl/cu129
        ("NPU617", "NVIDIA apex with its CUDA extensions (--cuda_ext) does not build for Ascend"),
        ("NPU617", "transformer_engine[pytorch]"),
        ("NPU630", "CUDA base image nvcr.io/nvidia/pytorch"),
    ]
    # `pip uninstall -y ... flash_attn transformer-engine ...` removes them: nothing to say about it.
    assert all(f.line != 14 for f in findings)


def test_dockerfile_prebuilt_cuda_wheels_are_named_by_their_file() -> None:
    original, ported, findings = port("docker/docker-cuda/Dockerfile.base")
    assert without_todos(ported) == original
    todos = sorted(f.message.split("-")[0] for f in findings if f.rule.id == "NPU617")
    assert todos == ["flash_attn", "flashinfer_python"]

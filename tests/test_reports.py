"""The reports of ``scan --format md|json|csv|github``: what they say about a small CUDA project whose every finding,
edit, dependency and kernel is known, the JSON against its own schema, and the assessment of the example project."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.reports import ASSESSMENT_FILES, render, write_assessment
from ascend_port.reports.json_report import SCHEMA_VERSION, schema
from ascend_port.reports.model import build
from ascend_port.run.config import resolve
from ascend_port.run.engine import RunConfig, run

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent

TRAIN = """\
import os
import torch
import numpy as np
import flash_attn
from model import Net
from helpers.io import load

x = torch.ones(2).cuda()
used = torch.cuda.memory_usage()
"""
KERNEL = """\
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(y_ptr + pid, tl.load(x_ptr + pid))
"""
CUDA = """\
// two kernels and a helper
__device__ float twice(float v) { return 2 * v; }
__global__ void scale(float* x, int n) { x[0] = twice(x[0]); }
__global__ void shift(float* x, int n) { x[0] += 1; }
"""
REQUIREMENTS = "torch==2.5.1\nflash-attn==2.6.3\nnumpy>=1.26\nsome-private-lib==1.0\n"
SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension

setup(name="demo", ext_modules=[CUDAExtension("ops", ["csrc/ops.cu"])])
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "model.py").write_text("import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n")
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "io.py").write_text("def load():\n    return 1\n")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "add.py").write_text(KERNEL)
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "ops.cu").write_text(CUDA)
    (tmp_path / "requirements.txt").write_text(REQUIREMENTS)
    (tmp_path / "setup.py").write_text(SETUP)
    return tmp_path


def scan(*args: str) -> str:
    result = runner.invoke(app, ["scan", ".", "--jobs", "1", *args], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    return result.stdout


def report_json(*args: str) -> dict:
    return json.loads(scan("--format", "json", *args))


def test_json_validates_against_its_schema_and_has_a_version(project: Path) -> None:
    document = report_json()
    jsonschema.validate(document, schema())
    assert document["schema_version"] == SCHEMA_VERSION
    # The schema is strict: an unknown top-level field is refused, so it cannot silently fall behind the output.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "extra": 1}, schema())


def test_findings_are_placed_on_lines_of_the_scanned_file(project: Path) -> None:
    findings = {(f["path"], f["rule"]): f for f in report_json()["findings"]}
    assert findings[("train.py", "NPU100")]["line"] == 2  # after `import torch`, not the new file's line 3
    assert findings[("train.py", "NPU101")]["line"] == 8
    todo = findings[("train.py", "NPU107")]
    assert (todo["line"], todo["kind"], todo["confidence"]) == (9, "todo", "low")


def test_edits_rebuild_the_ported_files_exactly(project: Path) -> None:
    document = report_json()
    # (as the command runs it: the target is the release for the project's torch pin, torch==2.5.1)
    result = run([Path(".")], resolve([Path(".")]).run_config(jobs=1))
    assert document["tool"]["torch_npu"] == result.target == "2.5.1.post1"
    assert result.changed
    for file in result.changed:
        old = Path(file.path).read_text().splitlines(keepends=True)
        new = list(old)
        for edit in sorted(
            (e for e in document["edits"] if e["path"] == file.path), key=lambda e: e["start_line"], reverse=True
        ):
            start = edit["start_line"] - 1
            end = start if edit["operation"] == "INSERT" else edit["end_line"]
            assert "".join(old[start:end]) == edit["old_text"]
            new[start:end] = [edit["new_text"]]
        assert "".join(new).encode() == file.new_bytes
    by_id = {e["id"]: e for e in document["edits"]}
    todo = next(f for f in document["findings"] if f["rule"] == "NPU107")
    assert by_id[todo["edit"]]["operation"] == "INSERT" and "NPU107" in by_id[todo["edit"]]["new_text"]


def test_dependency_matrix(project: Path) -> None:
    deps = {d["package"]: d for d in report_json()["dependencies"]}
    assert deps["flash-attn"]["status"] == "replace"
    assert deps["flash-attn"]["sources"] == ["requirements.txt:2", "train.py"]
    assert deps["torch"]["status"] == "compatible"
    assert deps["triton"]["status"] == "replace" and deps["triton"]["sources"] == ["kernels/add.py"]
    assert deps["numpy"]["status"] == "n.a." and deps["numpy"]["known"]
    assert deps["some-private-lib"] == {
        "package": "some-private-lib",
        "status": "n.a.",
        "replacement": "",
        "note": deps["some-private-lib"]["note"],
        "known": False,
        "sources": ["requirements.txt:4"],
    }
    # The standard library and the project's own modules are not dependencies.
    assert not {"os", "model", "helpers", "kernels"} & set(deps)


def test_kernels_with_sizes_and_the_effort_they_weigh(project: Path) -> None:
    document = report_json()
    assert sorted(k["kind"] for k in document["kernels"]) == ["cuda", "triton"]  # not the NPU502 build TODO
    kernels = {k["kind"]: k for k in document["kernels"]}
    assert kernels["cuda"]["path"] == "csrc/ops.cu"
    assert (kernels["cuda"]["kernels"], kernels["cuda"]["lines"], kernels["cuda"]["name"]) == (2, 4, "scale, shift")
    triton = kernels["triton"]
    assert (triton["name"], triton["lines"], triton["kernels"]) == ("_add_kernel", 4, 1)
    summary = document["summary"]
    assert summary["feasibility"] == "hard"  # CUDA C++ kernels become Ascend C operators
    basis = {line["item"]: line for line in summary["effort_basis"]}
    assert basis["cuda-kernel"]["count"] == 2 and basis["triton-kernel"]["count"] == 1
    assert basis["todo"]["count"] == 2  # NPU107 in train.py, NPU502 in setup.py
    assert basis["dependency-replace"]["count"] == 2  # flash-attn and triton are imported; torch is compatible
    assert summary["effort_hours"] == pytest.approx(sum(line["hours"] for line in summary["effort_basis"]), abs=0.05)


def test_statistics_count_converted_and_manual_references(project: Path) -> None:
    statistics = report_json()["statistics"]
    files = {s["path"]: s for s in statistics["files"]}
    train = files["train.py"]
    assert (train["converted"], train["unconverted"], train["conversion_percent"]) == (2, 1, 66.7)
    assert train["lines_total"] == 9 and train["lines_changed"] == 3  # import added, .cuda() line, TODO added
    total = statistics["total"]
    assert total["converted"] == sum(s["converted"] for s in files.values())
    assert total["unconverted"] == sum(s["unconverted"] for s in files.values())
    assert total["lines_total"] == sum(
        len(p.read_text().splitlines())
        for p in project.rglob("*")
        if p.is_file() and p.suffix in (".py", ".cu", ".txt")
    )


@pytest.mark.parametrize(
    "files, expected",
    [
        ({"a.py": "import torch\nx = torch.ones(1).cuda()\n"}, "ready"),
        ({"a.py": "import torch\ny = torch.cuda.memory_usage()\n"}, "needs adaptation"),
        ({"a.py": "x = 1\n"}, "ready"),
    ],
)
def test_feasibility(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict, expected: str) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    report = build(run([Path(".")], RunConfig(jobs=1)))
    assert report.feasibility == expected


def test_csv_is_a_superset_of_change_list_csv(project: Path) -> None:
    rows = list(csv.reader(io.StringIO(scan("--format", "csv"))))
    assert rows[0] == ["File", "Start Line", "End Line", "Operation Type", "Message", "Rule", "Confidence"]
    by_rule = {row[5]: row for row in rows[1:]}
    assert by_rule["NPU101"] == ["train.py", "8", "8", "MODIFY", ".cuda() -> .npu()", "NPU101", "high"]
    assert by_rule["NPU100"][1:4] == ["2", "2", "INSERT"]  # the line the import goes after, as every format says
    assert by_rule["NPU107"][3] == "INSERT" and by_rule["NPU107"][6] == "low"
    assert by_rule["NPU503"][:4] == ["csrc/ops.cu", "3", "3", "REPORT"]  # nothing is changed in .cu files
    assert len(rows) - 1 == len(report_json()["findings"])


def test_github_annotations(project: Path) -> None:
    lines = scan("--format", "github").splitlines()
    assert (
        "::notice file=train.py,line=8,title=ascend-port NPU101 cuda-method (high)::NPU101 .cuda() -> .npu()" in lines
    )
    todo = next(line for line in lines if "NPU107" in line)
    assert todo.startswith("::warning file=train.py,line=9,")  # manual work
    # GitHub shows 10 annotations of a kind per step: the manual work comes first, in a kind no rewrite uses.
    kinds = [line.split(" ", 1)[0] for line in lines]
    assert kinds == sorted(kinds, key=["::warning", "::notice", "::error"].index)
    assert "::warning" in kinds and "::notice" in kinds


def test_github_annotation_values_are_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a,b:c%.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    out = runner.invoke(app, ["scan", ".", "--format", "github"]).stdout
    assert "file=a%2Cb%3Ac%25.py," in out


def test_markdown_assessment_sections(project: Path) -> None:
    md = scan("--format", "md")
    for heading in (
        "# Migration assessment",
        "## Executive summary",
        "## Dependencies",
        "## Findings per domain",
        "### device layer (NPU1xx)",
        "## Statistics",
        "## Kernels",
        "## Risk matrix",
    ):
        assert heading in md
    assert "**Feasibility: hard.**" in md and "**Estimated effort:" in md
    assert "| flash-attn | replace | torch_npu.npu_fusion_attention |" in md
    assert "| csrc/ops.cu:3 | cuda | `scale, shift` | 4 | 2 | NPU503 |" in md
    # The risk matrix shows the project's own first occurrence, not the rule documentation's example.
    assert "| NPU101 cuda-method | train.py:8 | `x = torch.ones(2).cuda()` | `x = torch.ones(2).npu()` |" in md
    assert "| NPU100 import-torch-npu | train.py:2 | `import torch` | `add: import torch_npu` | high | low |" in md
    assert "| NPU107 torch-cuda-unsupported | train.py:9 | `used = torch.cuda.memory_usage()` | manual (TODO) |" in md
    assert "model.cuda(local_rank)" not in md
    assert "| **total** |" in md


def test_output_file_and_assessment_folder(project: Path) -> None:
    result = runner.invoke(app, ["scan", ".", "--format", "md", "--output", "report.md"], catch_exceptions=False)
    assert result.exit_code == 1 and result.stdout == ""
    assert (project / "report.md").read_text().startswith("# Migration assessment")
    written = write_assessment(run([Path(".")], RunConfig(jobs=1)), project / "out")
    assert sorted(p.name for p in written) == sorted(ASSESSMENT_FILES.values())
    jsonschema.validate(json.loads((project / "out" / "assessment.json").read_text()), schema())


def test_already_written_port_needs_the_old_bytes(project: Path) -> None:
    """The git workflow writes the port before the report: without the old bytes the edits are left out."""
    result = run([Path("train.py")], RunConfig(jobs=1))
    old = {"train.py": Path("train.py").read_bytes()}
    Path("train.py").write_bytes(result.changed[0].new_bytes)
    assert build(result).edits == []
    with_old = build(result, old)
    assert with_old.edits and {p.line for p in with_old.placed if p.rule.id == "NPU100"} == {2}


def test_example_project_assessment() -> None:
    md = render(run([ROOT / "examples" / "cuda_trainer"], RunConfig(jobs=1)), "md")
    assert "**Feasibility: needs adaptation.**" in md
    assert "| flash-attn | replace |" in md and "| triton | replace | triton-ascend |" in md
    assert "| triton | `_fused_add_relu_kernel` | 9 | 1 | NPU500 |" in md


def test_information_findings_are_not_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "attn.py").write_text(
        "import torch.nn.functional as F\n\n\ndef f(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n"
    )
    result = runner.invoke(app, ["scan", ".", "--format", "json"], catch_exceptions=False)
    document = json.loads(result.stdout)
    assert [(f["rule"], f["role"]) for f in document["findings"]] == [("NPU407", "info")]  # SDPA runs natively
    summary = document["summary"]
    assert (summary["feasibility"], summary["effort_hours"], summary["manual"], summary["info"]) == ("ready", 0, 0, 1)
    assert document["statistics"]["total"]["unconverted"] == 0
    github = runner.invoke(app, ["scan", ".", "--format", "github"]).stdout
    assert github.startswith("::notice file=attn.py,line=5,")


def test_the_package_matrix_names_the_triton_kernel_rule() -> None:
    """The matrix's row for triton points at the rule that brings kernels up (an ID spelled in reports/)."""
    from ascend_port.reports.packages import TRITON_KERNEL_RULE
    from ascend_port.rules.kernels.kernel_todos import TRITON_KERNEL

    assert TRITON_KERNEL_RULE == TRITON_KERNEL.id

"""Custom kernels, extensions and CUDA-only libraries (NPU5xx), and compile/graphs/profiling (NPU7xx): what the
golden cases cannot say on their own."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from golden_cases import GOLDEN

from ascend_port.core import npu_api
from ascend_port.core.findings import TODO_PATTERN
from ascend_port.core.selection import Selection, parse_patterns
from ascend_port.port.handlers import handler_for
from ascend_port.python.names import ImportIndex
from ascend_port.python.transformer import PortContext, PortTransformer, run_transformers
from ascend_port.rules.cuda_sources import global_kernels, strip_code
from ascend_port.rules.kernels import KERNEL_EQUIVALENTS, kernel_equivalent
from ascend_port.rules.libraries import LibraryTransformer
from ascend_port.run.engine import RunConfig, run

TRITON_DECORATOR_NAMES = {"jit", "autotune", "heuristics"}


def triton_kernels(source: str) -> dict[str, str]:
    """name -> source text of each Triton kernel, decorators included, found with Python's ast (independently
    of the tool): a function whose decorator's last name is jit/autotune/heuristics and mentions triton, or is
    imported from triton."""
    tree = ast.parse(source)
    from_triton = {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "triton"
        for a in n.names
    }
    triton_aliases = {
        a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name == "triton"
    }
    lines = source.splitlines(keepends=True)
    kernels = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            text = ast.unparse(target)
            head, _, last = text.rpartition(".")
            if (last in TRITON_DECORATOR_NAMES and head.split(".")[0] in triton_aliases) or (
                not head and last in from_triton and last in TRITON_DECORATOR_NAMES
            ):
                first = node.decorator_list[0].lineno
                kernels[node.name] = "".join(lines[first - 1 : node.end_lineno])
                break
    return kernels


def todo_counts_above(source: str, rule: str) -> dict[str, int]:
    """Kernel name -> number of `rule` TODO comments in the comment block right above its first decorator."""
    tree = ast.parse(source)
    lines = source.splitlines()
    counts = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
            i = node.decorator_list[0].lineno - 2
            n = 0
            while i >= 0 and lines[i].lstrip().startswith("#"):
                match = TODO_PATTERN.search(lines[i])
                n += bool(match and match["rule"] == rule)
                i -= 1
            counts[node.name] = n
    return counts


KERNEL_CASES = sorted(p for p in GOLDEN.glob("NPU50*/*.in.py") if triton_kernels(p.read_text("utf-8")))


@pytest.mark.parametrize("case", KERNEL_CASES, ids=[f"{p.parent.name}/{p.name}" for p in KERNEL_CASES])
def test_kernels_are_byte_identical_and_tagged_once(case: Path) -> None:
    before = case.read_text("utf-8")
    out = case.with_name(case.name.replace(".in.", ".out."))
    after = out.read_text("utf-8")
    kernels_before, kernels_after = triton_kernels(before), triton_kernels(after)
    assert kernels_before and kernels_before == kernels_after  # decorators and body, byte for byte
    counts = todo_counts_above(after, "NPU500")
    assert {name: counts[name] for name in kernels_before} == {name: 1 for name in kernels_before}


def test_kernel_todo_names_the_kernel_and_the_way() -> None:
    after = (GOLDEN / "NPU500" / "import_styles.out.py").read_text("utf-8")
    todos = [m for line in after.splitlines() if (m := TODO_PATTERN.search(line)) and m["rule"] == "NPU500"]
    assert len(todos) == 5
    for todo in todos:
        assert "Triton-Ascend" in todo["text"] and "Ascend C operator" in todo["text"]
    by_kernel = {t["text"].split(":")[0].removeprefix("Triton kernel "): t["text"] for t in todos}
    assert "torch_npu.npu_rms_norm" in by_kernel["_rms_norm_fwd_kernel"]
    assert "num_warps/num_stages are ignored" in by_kernel["_rms_norm_fwd_kernel"]
    assert "torch_npu.npu_fusion_attention" in by_kernel["_fwd_attn_kernel"]
    assert "tf32" in by_kernel["_fwd_attn_kernel"] and "fp64" in by_kernel["_fwd_attn_kernel"]
    assert "inline PTX" in by_kernel["weird_kernel"]
    assert "may already do this" not in by_kernel["add_kernel"]


def test_named_torch_npu_equivalents_exist_in_the_shipped_api() -> None:
    ops = npu_api.load().ops
    for _, op in KERNEL_EQUIVALENTS:
        if op.startswith("torch_npu."):
            assert op.removeprefix("torch_npu.") in ops, op
    assert kernel_equivalent("_layer_norm_fwd_fused") == "torch.nn.functional.layer_norm"
    assert kernel_equivalent("fused_add_rms_norm_kernel") == "torch_npu.npu_rms_norm"
    assert kernel_equivalent("_seeded_dropout") is None


def test_a_kernel_todo_is_written_once_when_rules_are_selected_by_prefix() -> None:
    source = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n"
    ported = handler_for(Path("k.py")).port(source.encode(), Selection(select=parse_patterns(["NPU5"])), {})
    assert ported.new_text is not None and ported.new_text.count("NPU500") == 1
    ignored = handler_for(Path("k.py")).port(source.encode(), Selection(ignore=("NPU500",)), {})
    assert ignored.new_text is None and not ignored.findings


# --- CUDA sources (.cu/.cuh) ------------------------------------------------------------------------------------


def test_global_kernels_skip_comments_strings_macros_and_declarations() -> None:
    text = (GOLDEN / "NPU503" / "kernels.in.cu").read_text("utf-8")
    assert global_kernels(text) == [("softmax_kernel", 11), ("bias_gelu_kernel", 16), ("decl_only", 24)]
    assert global_kernels("__global__ void k() {}\n// __global__ void c() {}\n") == [("k", 1)]
    assert global_kernels('auto s = R"x(__global__ void raw() {})x";\n__global__ void real(int n) {}') == [("real", 2)]


def test_strip_code_keeps_lines_and_offsets() -> None:
    text = 'a /* x\ny */ b "s" // c\n#define M \\\n  1\nd\n'
    stripped = strip_code(text)
    assert len(stripped) == len(text) and stripped.count("\n") == text.count("\n")
    assert stripped.split() == ["a", "b", "d"]


def test_cuda_source_handler_reports_and_never_changes(tmp_path: Path) -> None:
    handler = handler_for(Path("ops.cu"))
    assert handler is not None and handler is handler_for(Path("ops.cuh"))
    latin1 = "// auteur: Jos\xe9\n__global__ void k(float* x) { }\n".encode("latin-1")
    ported = handler.port(latin1, Selection(), {})
    assert ported.new_text is None
    [finding] = ported.findings
    assert finding.rule.id == "NPU503" and finding.line == 2 and "1 kernel (__global__): k" in finding.message
    assert handler.port(latin1, Selection(ignore=("NPU503",)), {}).findings == []
    many = "".join(f"__global__ void k{i}(int n) {{ }}\n" for i in range(15))
    assert "and 3 more" in handler.port(many.encode(), Selection(), {}).findings[0].message

    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "ops.cu").write_bytes(latin1)
    (tmp_path / "csrc" / "helpers.cuh").write_text("__device__ float h(float x) { return x; }\n")
    result = run([tmp_path], RunConfig(jobs=1))
    assert not result.errors and not result.changed
    messages = {Path(f.path).name: f.findings[0].message for f in result.files}
    assert "no __global__ kernels" in messages["helpers.cuh"] and "1 kernel" in messages["ops.cu"]


# --- apex norms: a TODO only when no other rule rewrote the construct ----------------------------------------


class _NormRewriter(PortTransformer):
    """Stands in for the NPU4xx norms work: rewrites `FusedRMSNorm(...)` to `torch.nn.RMSNorm(...)`."""

    TRIGGERS = (r"FusedRMSNorm",)

    @classmethod
    def active(cls, selection: Selection) -> bool:
        return True

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.imports.resolve(original.func) == "apex.normalization.FusedRMSNorm":
            return updated.with_changes(func=cst.parse_expression("torch.nn.RMSNorm"))
        return updated


@pytest.mark.parametrize("order", ["rewriter-first", "rewriter-last"])
def test_apex_norm_todo_only_if_nobody_rewrote_it(order: str) -> None:
    source = "import apex\n\nnorm = apex.normalization.FusedRMSNorm(1024)\nln = apex.normalization.FusedLayerNorm(8)\n"
    module = cst.parse_module(source)
    ctx = PortContext(imports=ImportIndex.from_ast(ast.parse(source)))
    classes = [_NormRewriter, LibraryTransformer] if order == "rewriter-first" else [LibraryTransformer, _NormRewriter]
    new = run_transformers(module, ctx, classes).code
    assert "norm = torch.nn.RMSNorm(1024)" in new
    assert "FusedRMSNorm" not in new  # no TODO about a construct that is gone
    assert "apex FusedLayerNorm: use torch.nn.LayerNorm" in new  # the one nobody rewrote keeps its TODO


# --- device.py leaves NVTX and CUDA graphs to NPU700/NPU701 ------------------------------------------------------


def test_graph_and_nvtx_names_are_not_flagged_or_renamed_by_the_device_rules() -> None:
    source = (
        "import torch\nfrom torch.cuda import CUDAGraph, nvtx\ng = torch.cuda.CUDAGraph()\n"
        "torch.cuda.nvtx.range_push('x')\nwith torch.cuda.graph(g):\n    pass\n"
    )
    device_only = handler_for(Path("m.py")).port(source.encode(), Selection(select=("NPU1",)), {})
    assert device_only.new_text is None  # not renamed at high confidence, no NPU107 "unsupported" TODO
    ported = handler_for(Path("m.py")).port(source.encode(), Selection(), {})
    assert {f.rule.id for f in ported.findings} >= {"NPU700", "NPU701"}
    assert "NPU107" not in {f.rule.id for f in ported.findings}
    assert "from torch.npu import NPUGraph, mstx as nvtx" in ported.new_text


# --- NPU502 across files: the ops the project's C++/CUDA sources bind, called from Python ------------------------

BIND_CPP = """\
#include <torch/extension.h>
// m.def("in_a_comment", &f);  (a comment binds nothing)
torch::Tensor fused_add(torch::Tensor a, torch::Tensor b);
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("fused_add", &fused_add, "a + b on the GPU");
}
"""
LIBRARY_CPP = 'TORCH_LIBRARY(myops, m) {\n    m.def("scale(Tensor x, float s) -> Tensor");\n}\n'
LIBRARY_CU = 'TORCH_LIBRARY_IMPL(myops, CUDA, m) {\n    m.impl("scale", &scale_cuda);\n}\n'
SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="mypkg",
    ext_modules=[CUDAExtension("mypkg._C", sources=["csrc/bind.cpp", "csrc/kernels.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
"""
MODEL = """\
import torch
import mypkg._C as ext
from mypkg import _C
from mypkg._C import fused_add


def forward(x):
    a = ext.fused_add(x, x)
    b = _C.fused_add(x, x)
    c = fused_add(x, x)
    d = torch.ops.myops.scale(x, 2.0)
    return a, b, c, d, torch._C._get_tracing_state(), x.fused_add(x)
"""


def _extension_project(root: Path) -> Path:
    (root / "csrc").mkdir(parents=True)
    (root / "mypkg").mkdir()
    (root / "setup.py").write_text(SETUP)
    (root / "csrc" / "bind.cpp").write_text(BIND_CPP)
    (root / "csrc" / "library.cpp").write_text(LIBRARY_CPP)
    (root / "csrc" / "library_cuda.cu").write_text(LIBRARY_CU)
    (root / "mypkg" / "__init__.py").write_text("")
    (root / "mypkg" / "model.py").write_text(MODEL)
    return root


def _model_todos(root: Path, config: RunConfig) -> dict[int, str]:
    result = run([root], config)
    assert not result.errors
    [model] = [f for f in result.files if f.path.endswith("model.py")]
    return {f.line: f.message for f in model.findings if f.rule.id == "NPU502"}


def test_extension_ops_are_read_from_the_projects_cpp_and_setup(tmp_path: Path) -> None:
    from ascend_port.run.project_facts import facts

    root = _extension_project(tmp_path / "proj")
    assert facts([root / "mypkg"]).extension_ops == {
        "mypkg._C": {"fused_add": "csrc/bind.cpp"},
        "torch.ops.myops": {"scale": "csrc/library.cpp, csrc/library_cuda.cu"},
    }


def test_python_call_sites_of_the_projects_extension_ops_name_the_cpp_file(tmp_path: Path) -> None:
    root = _extension_project(tmp_path / "proj")
    todos = _model_todos(root, RunConfig(jobs=1))
    # (line 12: torch's own `_C` and a method of a tensor named like the op are not the extension's)
    assert sorted(todos) == [8, 9, 10, 11]
    assert todos[8].startswith("ext.fused_add() is an op of the CUDA extension mypkg._C (bound in csrc/bind.cpp)")
    assert todos[9].startswith("_C.fused_add() is an op of the CUDA extension mypkg._C (bound in csrc/bind.cpp)")
    assert todos[10].startswith("fused_add() is an op of the CUDA extension mypkg._C (bound in csrc/bind.cpp)")
    assert "TORCH_LIBRARY in csrc/library.cpp, csrc/library_cuda.cu" in todos[11]
    # The facts are a port option, part of the cache key: a new op in the C++ ports the Python file afresh.
    (root / "csrc" / "bind.cpp").write_text(BIND_CPP.replace("fused_add", "fused_mul"))
    todos = _model_todos(root, RunConfig(jobs=1))
    assert "(bound in" not in todos[8] and sorted(todos) == [8, 9, 10, 11]
    # Scanned alone (no project around it), the module names no extension: only the custom operator is flagged.
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "model.py").write_text(MODEL)
    assert sorted(_model_todos(alone, RunConfig(jobs=1))) == [11]

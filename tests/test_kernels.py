"""Custom kernels, extensions and CUDA-only libraries (NPU5xx), and compile/graphs/profiling (NPU7xx): what the
golden cases cannot say on their own."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from golden_cases import GOLDEN
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core import npu_api
from ascend_port.core.findings import TODO_PATTERN
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection, parse_patterns
from ascend_port.formats.cpp_source import global_kernels, strip_code
from ascend_port.port.handlers import handler_for
from ascend_port.python.names import ImportIndex
from ascend_port.python.transformer import PortContext, PortTransformer, run_transformers
from ascend_port.rules.kernels.kernel_todos import KERNEL_EQUIVALENTS, kernel_equivalent
from ascend_port.rules.libraries import LibraryTransformer
from ascend_port.rules.registry import all_rules
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


def todo_counts_above(source: str, rule: str, prefix: str = "") -> dict[str, int]:
    """Kernel name -> number of `rule` TODO comments (whose text starts with ``prefix``) in the comment block right
    above its first decorator."""
    tree = ast.parse(source)
    lines = source.splitlines()
    counts = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
            i = node.decorator_list[0].lineno - 2
            n = 0
            while i >= 0 and lines[i].lstrip().startswith("#"):
                match = TODO_PATTERN.search(lines[i])
                n += bool(match and match["rule"] == rule and match["text"].startswith(prefix))
                i -= 1
            counts[node.name] = n
    return counts


def device_helpers(source: str) -> set[str]:
    """The kernels (by triton_kernels) that the module never launches (``k[grid](...)``, ``k.run(...)``) and calls
    from other kernels, or that return a value: device functions, which Triton inlines (no work of their own)."""
    kernels = triton_kernels(source)
    tree = ast.parse(source)
    called, launched = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Subscript) or (isinstance(func, ast.Attribute) and func.attr == "run"):
                target = func.value
                launched.add(getattr(target, "id", None) or getattr(target, "attr", None))
        if isinstance(node, ast.FunctionDef) and node.name in kernels:
            called |= {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
            if any(isinstance(r, ast.Return) and r.value is not None for r in ast.walk(node)):
                called.add(node.name)  # (a kernel returns nothing: a jit function that returns is a device one)
    return (called - launched) & set(kernels)


def without_comments(code: str) -> str:
    return ast.dump(ast.parse(textwrap.dedent(code)))


# NPU500-NPU507 never rewrite a kernel (the NPU508+ rewrites inside kernels are proved by their own tests).
KERNEL_CASES = sorted(p for p in GOLDEN.glob("NPU50[0-7]/*.in.py") if triton_kernels(p.read_text("utf-8")))


@pytest.mark.parametrize("case", KERNEL_CASES, ids=[f"{p.parent.name}/{p.name}" for p in KERNEL_CASES])
def test_kernels_keep_their_code_and_are_tagged_once_where_they_are_work(case: Path) -> None:
    """Kernels get TODO comments only (their code is the same), one TODO above each kernel that is work (launched
    here or maybe elsewhere), none above a device helper; a module that is an Ascend port already stays as is."""
    before = case.read_text("utf-8")
    out = case.with_name(case.name.replace(".in.", ".out."))
    # (without the rules that do rewrite inside kernels: rules/triton_kernels.py)
    inside = tuple(r.id for r in all_rules() if r.module.endswith(".triton_kernels"))
    ported = handler_for(case).port(before.encode(), Selection(ignore=inside), PortOptions())
    after = ported.new_text if ported.new_text is not None else before
    kernels_before, kernels_after = triton_kernels(before), triton_kernels(after)
    assert kernels_before.keys() == kernels_after.keys()
    for name, code in kernels_before.items():
        assert without_comments(code) == without_comments(kernels_after[name]), name
    counts = todo_counts_above(after, "NPU500", "Triton kernel ")
    helpers = device_helpers(before)
    expected = {name: int(out.exists() and name not in helpers) for name in kernels_before}
    assert {name: counts[name] for name in kernels_before} == expected


def test_kernel_todo_says_how_to_launch_and_what_each_line_needs() -> None:
    after = (GOLDEN / "NPU500" / "import_styles.out.py").read_text("utf-8")
    todos = [m for line in after.splitlines() if (m := TODO_PATTERN.search(line)) and m["rule"] == "NPU500"]
    headers = {
        t["text"].split(":")[0].removeprefix("Triton kernel ").split(",")[0]: t["text"]
        for t in todos
        if t["text"].startswith("Triton kernel ")
    }
    assert len(headers) == 5
    for text in headers.values():
        assert "Triton-Ascend" in text and "65535 programs" in text and "Ascend C operator" in text
    assert "torch_npu.npu_rms_norm" in headers["_rms_norm_fwd_kernel"]
    assert "num_warps/num_stages are ignored" in headers["_rms_norm_fwd_kernel"]
    assert "fit its tiles (BLOCK) in the 192 KB on-chip buffer" in headers["_rms_norm_fwd_kernel"]
    assert "torch_npu.npu_fusion_attention" in headers["_fwd_attn_kernel"]
    assert "per AI core (num_aicore: it uses tl.dot)" in headers["_fwd_attn_kernel"]
    assert "per vector core (num_vectorcore)" in headers["add_kernel"]
    assert "launched outside this module" not in headers["add_kernel"]  # add() launches it
    assert "launched outside this module (not here)" in headers["weird_kernel"]
    assert "may already do this" not in headers["add_kernel"]
    lines = [t["text"] for t in todos if not t["text"].startswith("Triton kernel ")]
    assert [line.split(":")[0] for line in lines] == ["tl.float64", "tl.inline_asm_elementwise"]


def test_named_torch_npu_equivalents_exist_in_the_shipped_api() -> None:
    ops = npu_api.load().ops
    for _, op in KERNEL_EQUIVALENTS:
        if op.startswith("torch_npu."):
            assert op.removeprefix("torch_npu.").split()[0] in ops, op  # ("npu_rms_norm on 1 + weight")
    assert kernel_equivalent("_layer_norm_fwd_fused") == "torch.nn.functional.layer_norm"
    assert kernel_equivalent("fused_add_rms_norm_kernel") == "torch_npu.npu_rms_norm"
    assert kernel_equivalent("_seeded_dropout") is None


KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs).to(tl.float64))


def launch(x, y):
    k[(1,)](x, y, BLOCK=64)
"""


def _npu500(text: str, selection: Selection | None = None) -> list[str]:
    ported = handler_for(Path("k.py")).port(text.encode(), selection or Selection(), PortOptions())
    return [f.message for f in ported.findings if f.rule.id == "NPU500"]


def _without_kernel_rewrites() -> Selection:
    """Every rule but those of rules/triton_kernels.py (which rewrite what NPU500 would otherwise note)."""
    return Selection(ignore=tuple(r.id for r in all_rules() if r.module.endswith(".triton_kernels")))


@pytest.mark.parametrize("folder", ["backends/triton_ascend", "ops/backends/ascend", "npu"])
def test_kernels_in_an_npu_backend_folder_get_no_todo(tmp_path: Path, folder: str) -> None:
    for where in (folder, "ops", "npu_port"):  # (a folder named `npu_port/` elsewhere is no backend)
        (tmp_path / where).mkdir(parents=True, exist_ok=True)
        (tmp_path / where / "k.py").write_text(KERNEL)
    result = run([tmp_path], RunConfig(selection=Selection(select=("NPU500",)), jobs=1, cache=False))
    found = {Path(f.path).parent.relative_to(tmp_path).as_posix(): len(f.findings) for f in result.files}
    assert found == {folder: 0, "ops": 2, "npu_port": 2}  # (the kernel's TODO and its fp64 line)


def test_the_portable_libdevice_try_import_is_no_sign_of_an_ascend_module() -> None:
    """NPU501 writes a try-import of Triton-Ascend's libdevice: the ported module is still a CUDA one (and its
    TODOs are found again on a second run), while Triton-Ascend-only imports mark an Ascend port."""
    chain = (
        "try:\n    from triton.language.extra.cann import libdevice\nexcept ImportError:\n"
        "    from triton.language.extra.cuda import libdevice\n"
    )
    assert len(_npu500(chain + KERNEL)) == 2
    assert _npu500("from triton.language.extra.cann import libdevice\n" + KERNEL) == []
    assert _npu500("import triton.language.extra.cann.extension as extension\n" + KERNEL) == []
    assert _npu500(KERNEL.replace("tl.load(x + offs)", "tl.load(x + offs, care_padding=False)")) == []


def test_allow_tf32_false_is_valid_and_tf32_is_noted_only_where_no_rule_rewrites_it() -> None:
    dot = KERNEL.replace("tl.load(x + offs).to(tl.float64)", "tl.dot(tl.load(x), tl.load(x), allow_tf32={})")
    assert not [m for m in _npu500(dot.format("False"), _without_kernel_rewrites()) if "tf32" in m]
    [note] = [m for m in _npu500(dot.format("True"), _without_kernel_rewrites()) if "tf32" in m]
    assert note.startswith("tl.dot tf32: Triton-Ascend rejects")
    assert not [m for m in _npu500(dot.format("True")) if "tf32" in m]  # (rules/triton_kernels.py drops it)
    [runtime] = [m for m in _npu500(dot.format("TF32")) if "tf32" in m.lower()]
    assert runtime.startswith("tl.dot allow_tf32=TF32 is chosen at run time")


def test_a_generic_libdevice_chain_is_noted_where_no_rule_rewrites_it() -> None:
    """fla's `tl.extra.libdevice.round(...)`: not remapped on Triton-Ascend (the NPU500 note was missing)."""
    chain = KERNEL.replace("tl.load(x + offs).to(tl.float64)", "tl.extra.libdevice.round(tl.load(x + offs))")
    [note] = [m for m in _npu500(chain, _without_kernel_rewrites()) if "libdevice" in m]
    assert note.startswith("tl.extra.libdevice is not remapped on Triton-Ascend")
    assert not [m for m in _npu500(chain) if "libdevice" in m]  # rewritten instead
    missing = chain.replace(".round(", ".fast_expf(")
    assert [m for m in _npu500(missing) if "libdevice" in m] == [
        "libdevice.fast_expf is not in Triton-Ascend's libdevice: use the tl/tl.math function or tl ops"
    ]


def test_device_functions_get_no_kernel_todo() -> None:
    helper = KERNEL.replace(
        "@triton.jit\ndef k(", "@triton.jit\ndef twice(v):\n    return v * 2\n\n\n@triton.jit\ndef k("
    )
    headers = [m for m in _npu500(helper) if m.startswith("Triton kernel")]
    assert [h.split(":")[0] for h in headers] == ["Triton kernel k"]


def test_the_assessment_counts_a_kernel_once_and_its_line_notes_as_todos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text(KERNEL)
    result = CliRunner().invoke(app, ["scan", ".", "--jobs", "1", "--select", "NPU500", "--format", "json"])
    document = json.loads(result.stdout)
    assert [(k["kind"], k["name"]) for k in document["kernels"]] == [("triton", "k")]
    basis = {row["item"]: row for row in document["summary"]["effort_basis"]}
    assert basis["triton-kernel"]["count"] == 1 and basis["todo"]["count"] == 1  # (the tl.float64 line)


def test_a_kernel_todo_is_written_once_when_rules_are_selected_by_prefix() -> None:
    source = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n"
    ported = handler_for(Path("k.py")).port(source.encode(), Selection(select=parse_patterns(["NPU5"])), PortOptions())
    assert ported.new_text is not None and ported.new_text.count("NPU500") == 1
    ignored = handler_for(Path("k.py")).port(source.encode(), Selection(ignore=("NPU500",)), PortOptions())
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
    ported = handler.port(latin1, Selection(), PortOptions())
    assert ported.new_text is None
    [finding] = ported.findings
    assert finding.rule.id == "NPU503" and finding.line == 2 and "1 kernel (__global__): k" in finding.message
    assert handler.port(latin1, Selection(ignore=("NPU503",)), PortOptions()).findings == []
    many = "".join(f"__global__ void k{i}(int n) {{ }}\n" for i in range(15))
    assert "and 3 more" in handler.port(many.encode(), Selection(), PortOptions()).findings[0].message

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
    device_only = handler_for(Path("m.py")).port(source.encode(), Selection(select=("NPU1",)), PortOptions())
    assert device_only.new_text is None  # not renamed at high confidence, no NPU107 "unsupported" TODO
    ported = handler_for(Path("m.py")).port(source.encode(), Selection(), PortOptions())
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
    from ascend_port.rules.cuda_sources import extension_ops
    from ascend_port.run.project_facts import facts

    root = _extension_project(tmp_path / "proj")
    assert extension_ops(facts([root / "mypkg"]).top) == {
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

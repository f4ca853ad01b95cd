"""`ascend-port scaffold OP` (issue 31, item 5): the Ascend C operator project written for an op of a CUDA extension,
on the small extension of tests/data/scaffold_ext (setup.py's CUDAExtension, a PYBIND11_MODULE binding, a caller
with a pure-torch fallback beside one op and none beside the other): what the files say, the error paths, --force,
and that the generated reference and its test run here (pytest in a subprocess, with this venv's torch)."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.scaffold.fallback import docstring_shapes, unpacked_shapes
from ascend_port.scaffold.signature import BOOL, TENSOR, bound_function, find_function

EXTENSION = Path(__file__).parent / "data" / "scaffold_ext"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(EXTENSION, tmp_path / "proj")
    return tmp_path / "proj"


def scaffold(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["scaffold", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def run_generated_tests(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_unknown_op_is_an_error_listing_the_ops_found(project: Path) -> None:
    code, _, err = scaffold("no_such_op", str(project))
    assert code == 2
    assert "no_such_op: no such op" in err
    assert "fused_ops_cuda.scale_bias  (csrc/fused_ops.cpp)" in err
    assert "fused_ops_cuda.fused_gelu" in err
    assert "torch.ops.fused_extra.row_norm  (csrc/row_norm.cu)" in err
    assert "upfirdn_ext.upfirdn  (jit/upfirdn.cpp)" in err
    assert not (project / "ascend_ops").exists()


def test_without_op_the_ops_of_the_current_folder_are_listed(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    code, _, err = scaffold()
    assert code == 2
    assert "give the op" in err and "fused_ops_cuda.scale_bias" in err


def test_a_project_without_extension_ops_says_so(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\n")
    code, _, err = scaffold("op", str(tmp_path))
    assert code == 2
    assert "no op of a CUDA extension found" in err


def test_the_op_with_a_fallback_gets_it_as_reference_and_an_operator_project(project: Path) -> None:
    code, out, err = scaffold("fused_ops_cuda.scale_bias", str(project))
    assert code == 0, err
    assert "reference: scale_bias_torch (fused/ops.py:13)" in out
    root = project / "ascend_ops" / "scale_bias"
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        "README.md",
        "build.sh",
        "conftest.py",
        "op_host/scale_bias.cpp",
        "op_host/scale_bias_tiling.h",
        "op_kernel/scale_bias.cpp",
        "scale_bias.json",
        "scale_bias_npu/__init__.py",
        "scale_bias_npu/reference.py",
        "setup.py",
        "test_scale_bias.py",
        "torch_binding/scale_bias_npu.cpp",
    ]
    # msOpGen's prototype: the C++ function's tensors as inputs, its result as output, the double as an attribute
    [prototype] = json.loads((root / "scale_bias.json").read_text())
    assert prototype["op"] == "ScaleBias"
    assert [d["name"] for d in prototype["input_desc"]] == ["x", "bias"]
    assert [d["name"] for d in prototype["output_desc"]] == ["out"]
    assert prototype["attr"] == [{"name": "alpha", "param_type": "required", "type": "float"}]
    host = (root / "op_host" / "scale_bias.cpp").read_text()
    assert (
        'this->Input("bias").ParamType(REQUIRED)' in host and 'this->Attr("alpha").AttrType(REQUIRED).Float();' in host
    )
    assert "OP_ADD(ScaleBias);" in host and "context->SetBlockDim(BLOCK_DIM);" in host
    assert "BEGIN_TILING_DATA_DEF(ScaleBiasTilingData)" in (root / "op_host" / "scale_bias_tiling.h").read_text()
    kernel = (root / "op_kernel" / "scale_bias.cpp").read_text()
    for part in (
        "__aicore__ inline void Init(GM_ADDR x, GM_ADDR bias, GM_ADDR out,",
        "void CopyIn(",
        "void Compute(",
        "void CopyOut(",
        "AscendC::TPipe pipe;",
        "TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueue_bias",
        "GET_TILING_DATA(tiling_data, tiling);",
        'extern "C" __global__ __aicore__ void scale_bias(',
    ):
        assert part in kernel, part
    binding = (root / "torch_binding" / "scale_bias_npu.cpp").read_text()
    assert "TORCH_LIBRARY_IMPL(scale_bias_npu, PrivateUse1, m)" in binding
    assert "EXEC_NPU_CMD(aclnnScaleBias, x, bias, alpha, out);" in binding
    assert 'm.def("scale_bias(Tensor x, Tensor bias, float alpha) -> Tensor");' in binding
    reference = (root / "scale_bias_npu" / "reference.py").read_text()
    assert "def scale_bias_torch(x, bias, alpha=DEFAULT_ALPHA):" in reference and "DEFAULT_ALPHA = 1.0" in reference
    assert "result = scale_bias_torch(x=x, bias=bias, alpha=alpha)" in reference
    assert "import fused_ops_cuda" not in reference  # (the CUDA import is not copied)
    test = (root / "test_scale_bias.py").read_text()
    assert "SIZES = {'rows': 2, 'cols': 3}" in test and "EXPECTED_SHAPE = (2, 3)" in test
    assert "fused/ops.py:25 in scale_bias() (result used)" in test
    result = run_generated_tests(root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 2 skipped" in result.stdout
    assert "no NPU here" in result.stdout


@pytest.mark.slow
def test_the_generated_test_fails_when_the_reference_gives_the_wrong_shape(project: Path) -> None:
    assert scaffold("scale_bias", str(project))[0] == 0
    reference = project / "ascend_ops" / "scale_bias" / "scale_bias_npu" / "reference.py"
    reference.write_text(reference.read_text().replace("    return result\n", "    return result.t()\n"))
    result = run_generated_tests(reference.parent.parent)
    assert result.returncode == 1 and "1 failed" in result.stdout


def test_an_op_without_fallback_gets_a_reference_to_write_and_its_test_skips_saying_why(project: Path) -> None:
    out = project.parent / "elsewhere"
    code, _, err = scaffold("fused_gelu", str(project), "--out", str(out))
    assert code == 0, err
    reference = (out / "fused_gelu_npu" / "reference.py").read_text()
    assert "def fused_gelu(x):" in reference
    assert "    raise NotImplementedError(\n" in reference
    assert (
        '"TODO(ascend-port): write the CPU reference of fused_ops_cuda.fused_gelu from its CUDA kernels "' in reference
    )
    test = (out / "test_fused_gelu.py").read_text()
    # (gelu_twice unpacks a list it builds: the call itself gives one result)
    assert "fused/ops.py:30 in gelu() (result used); fused/ops.py:34 in gelu_twice()" in test
    result = run_generated_tests(out)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 skipped" in result.stdout and "reference.py is still a TODO" in result.stdout


def test_a_torch_library_op_gets_the_fallback_of_a_module_beside_its_call_site(project: Path) -> None:
    """torch.ops.fused_extra.row_norm: TORCH_LIBRARY's schema, TORCH_LIBRARY_IMPL(CUDA)'s function, called through
    torch.ops in fused/ops.py; its pure-torch version is in fused/reference.py."""
    code, out, err = scaffold("torch.ops.fused_extra.row_norm", str(project))
    assert code == 0, err
    assert "reference: row_norm_ref (fused/reference.py:6)" in out
    root = project / "ascend_ops" / "row_norm"
    assert "result = row_norm_ref(x=x, eps=eps)" in (root / "row_norm_npu" / "reference.py").read_text()
    test = (root / "test_row_norm.py").read_text()
    assert "fused/ops.py:44 in row_norm() (result used)" in test
    assert "EXPECTED_SHAPE = (2, 3)  # the op returns empty_like(x): (tokens, hidden)" in test
    result = run_generated_tests(root)
    assert result.returncode == 0 and "1 passed, 2 skipped" in result.stdout, result.stdout + result.stderr


@pytest.mark.slow
def test_the_generated_test_checks_the_results_the_call_sites_unpack(project: Path) -> None:
    """fused/ops.py unpacks split_halves into two names: a reference giving one tensor fails the generated test."""
    assert scaffold("split_halves", str(project))[0] == 0
    root = project / "ascend_ops" / "split_halves"
    test = (root / "test_split_halves.py").read_text()
    assert "assert isinstance(result, (tuple, list)) and len(result) >= 2  # as the call sites unpack it" in test
    reference = root / "split_halves_npu" / "reference.py"
    text = reference.read_text()
    body = text[text.index("    raise NotImplementedError") :]
    reference.write_text(text.replace(body, "    return x\n"))
    assert "1 failed" in run_generated_tests(root).stdout
    reference.write_text(text.replace(body, "    return list(x.chunk(2, dim))\n"))
    result = run_generated_tests(root)
    assert result.returncode == 0 and "1 passed, 2 skipped" in result.stdout, result.stdout + result.stderr


def test_an_op_of_a_jit_build_is_found_with_its_call_site(project: Path) -> None:
    """jit/ops.py: `upfirdn_ext = load("upfirdn_ext", sources=[...upfirdn.cpp...])`, then `upfirdn_ext.upfirdn(...)`:
    the op is bound under TORCH_EXTENSION_NAME, which the load() names."""
    code, _, err = scaffold("upfirdn_ext.upfirdn", str(project))
    assert code == 0, err
    root = project / "ascend_ops" / "upfirdn"
    test = (root / "test_upfirdn.py").read_text()
    assert "jit/ops.py:15 in upfirdn2d() (result used)" in test
    assert '"up": 1,  # int64_t  TODO(ascend-port): a value the op accepts' in test
    binding = (root / "torch_binding" / "upfirdn_npu.cpp").read_text()
    assert 'm.def("upfirdn(Tensor input, Tensor kernel, int up, int down) -> Tensor");' in binding


def test_an_op_whose_cpp_function_is_not_in_the_sources_is_an_error(project: Path) -> None:
    code, _, err = scaffold("external_op", str(project))
    assert code == 2
    assert "fused_ops_cuda.external_op: the C++ function bound to it (in csrc/fused_ops.cpp) was not found" in err
    assert not (project / "ascend_ops").exists()


def test_the_scaffold_itself_gives_the_port_nothing_to_do(project: Path) -> None:
    """`ascend-port scan` of the written folder: no finding (its NpuExtension build and its torch.ops call of the
    binding are no CUDA extension's)."""
    assert scaffold("scale_bias", str(project))[0] == 0
    root = project / "ascend_ops" / "scale_bias"
    result = CliRunner().invoke(app, ["scan", str(root), "--no-cache", "--format", "concise"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output


# A stand-in for the built binding (`scale_bias_npu/_C`): the op registered for PrivateUse1 in Python, so that the
# generated NPU comparison runs under `ascend-port emulate` (its npu device is PrivateUse1, its torch_npu a stand-in).
STAND_IN_BINDING = """
import torch

_LIB = torch.library.Library("scale_bias_npu", "DEF")
_LIB.define("scale_bias(Tensor x, Tensor bias, float alpha) -> Tensor")
_LIB.impl("scale_bias", lambda x, bias, alpha: {formula}, "PrivateUse1")
"""


@pytest.mark.slow
def test_the_generated_npu_comparison_runs_under_the_emulator_and_catches_a_wrong_operator(project: Path) -> None:
    from emulation import CLI, run

    assert scaffold("scale_bias", str(project))[0] == 0
    root = project / "ascend_ops" / "scale_bias"
    command = [*CLI, "emulate", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root)]
    (root / "scale_bias_npu" / "_C.py").write_text(STAND_IN_BINDING.format(formula="x * alpha + bias"))
    result = run(command, cwd=root)
    assert result.returncode == 0 and "3 passed" in result.stdout, result.stdout + result.stderr
    (root / "scale_bias_npu" / "_C.py").write_text(STAND_IN_BINDING.format(formula="x * alpha"))
    result = run(command, cwd=root)
    assert "2 failed, 1 passed" in result.stdout, result.stdout + result.stderr


def test_existing_files_are_kept_unless_forced(project: Path) -> None:
    assert scaffold("scale_bias", str(project))[0] == 0
    edited = project / "ascend_ops" / "scale_bias" / "op_kernel" / "scale_bias.cpp"
    edited.write_text("// my kernel\n")
    code, _, err = scaffold("scale_bias", str(project))
    assert code == 2 and "exist and would be replaced" in err and "--force" in err
    assert edited.read_text() == "// my kernel\n"
    code, _, err = scaffold("scale_bias", str(project), "--force")
    assert code == 0, err
    assert "class KernelScaleBias" in edited.read_text()


def test_the_cpp_signature_is_read_with_optional_and_written_tensors() -> None:
    text = """
    #define CHECK_SHAPE(x, ...) TORCH_CHECK(x.sizes() == torch::IntArrayRef({__VA_ARGS__}))
    void fwd(const at::Tensor &x, const c10::optional<at::Tensor> &bias_, at::Tensor &out,
             bool silu_activation) {
        CHECK_SHAPE(x, batch, dim, seqlen);
        CHECK_SHAPE(bias, dim);
        CHECK_SHAPE(out, !flag ? seqlen : seqlen * 2);
    }
    PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("conv_fwd", &fwd, "doc"); }
    """
    assert bound_function(text, "conv_fwd") == "fwd"
    assert (
        bound_function(
            'TORCH_LIBRARY(ns, m) { m.def("scale(Tensor x, float a) -> Tensor", &ns::scale_impl); }', "scale"
        )
        == "scale_impl"
    )
    assert bound_function('m.impl("scale", TORCH_FN(scale_cuda));', "scale") == "scale_cuda"
    assert bound_function('m.def("scale_twice", &twice);', "scale") is None
    signature = find_function(text, "fwd", "a.cpp")
    assert signature is not None and signature.result == "none" and signature.line == 3
    assert [(p.name, p.kind, p.optional, p.written) for p in signature.params] == [
        ("x", TENSOR, False, False),
        ("bias", TENSOR, True, False),
        ("out", TENSOR, False, True),
        ("silu_activation", BOOL, False, False),
    ]
    assert signature.shapes == {"x": ("batch", "dim", "seqlen"), "bias": ("dim",)}
    keyword = find_function("at::Tensor clamp(const at::Tensor& in, double lambda) { return in; }", "clamp", "b.cpp")
    assert keyword is not None and keyword.result == "tensor"
    assert [p.name for p in keyword.params] == ["in_", "lambda_"]


def test_docstring_shapes_take_the_first_real_alternative() -> None:
    doc = """
    u: r(B D L)
    A: c(D N) or r(D N)
    B: c(D N) or r(B N L) or r(B N 2L)
    initial_states: (batch, dim, width - 1)
    bias: (dim,)
    note: not a shape
    """
    assert docstring_shapes(doc) == {
        "u": ("B", "D", "L"),
        "A": ("D", "N"),
        "B": ("B", "N", "L"),
        "initial_states": ("batch", "dim", "width - 1"),
        "bias": ("dim",),
    }


def test_the_shapes_a_fallback_unpacks_name_its_dimensions() -> None:
    function = ast.parse(
        "def upfirdn2d_native(input, kernel, up=1):\n"
        "    _, channel, in_h, in_w = input.shape\n"
        "    input = input.reshape(-1, in_h, in_w, 1)\n"
        "    _, in_h, in_w, minor = input.shape\n"
        "    kernel_h, kernel_w = kernel.size()\n"
        "    a, b = other.shape\n"
    ).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert unpacked_shapes(function) == {
        "input": ("input_dim0", "channel", "in_h", "in_w"),
        "kernel": ("kernel_h", "kernel_w"),
    }

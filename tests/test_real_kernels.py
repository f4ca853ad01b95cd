"""The port of real code with many kernels: DeepSpeed 0.16.4's sdist (Triton kernels, CUDA extensions built by its
op builders, 95 .cu/.cuh files). Every Triton kernel that is work (not a device function) and every CUDAExtension
gets exactly one TODO, kernels keep their code, every .cu/.cuh file is reported, nothing fails, changed files parse
and a second run is a no-op. flash-linear-attention (issue 19): NPU500 where its kernels need work, never in its
own Ascend port.

The sdist is downloaded once with pip into the gitignored .cache/corpora (never built or installed)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from test_kernels import device_helpers, todo_counts_above, triton_kernels, without_comments

from ascend_port.core.findings import TODO_PATTERN
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.run.engine import RunConfig, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

# The machinery on real code, as for an NPU-only fork (`--other-devices drop`): these projects also run on
# other devices, so by default their CUDA code is reported, not rewritten (python/device_model.py).
NPU_ONLY = PortOptions(other_devices="drop")

DEEPSPEED = ("deepspeed", "0.16.4")


@pytest.fixture(scope="module")
def deepspeed() -> Path:
    try:
        root = corpora.fetch(*DEEPSPEED, sdist=True)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download the deepspeed {DEEPSPEED[1]} sdist: {error}")
    return root


def _cuda_extension_statements(tree: ast.Module) -> list[ast.stmt]:
    """The innermost statements that call a name imported as torch.utils.cpp_extension.CUDAExtension (under any
    alias, even one that is also bound to something else, as DeepSpeed's `ExtensionBuilder`)."""
    names = {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "torch.utils.cpp_extension"
        for a in n.names
        if a.name == "CUDAExtension"
    }
    found = []

    def visit(statements: list[ast.stmt]) -> None:
        for statement in statements:
            inner = [getattr(statement, f, []) for f in ("body", "orelse", "finalbody")]
            inner += [h.body for h in getattr(statement, "handlers", [])]
            blocks = [b for b in inner if b and isinstance(b[0], ast.stmt)]
            own = [
                n
                for n in ast.walk(statement)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
            ]
            nested = {id(n) for b in blocks for s in b for n in ast.walk(s)}
            if any(id(call) not in nested for call in own):
                found.append(statement)
            for block in blocks:
                visit(block)

    visit(tree.body)
    return found


@pytest.mark.slow
def test_deepspeed_kernels_and_extensions_are_tagged_once(deepspeed: Path) -> None:
    result = run([deepspeed], RunConfig(jobs=2, options=NPU_ONLY))
    assert not result.errors, [(f.path, f.error) for f in result.errors]
    by_path = {Path(f.path).resolve(): f for f in result.files}

    kernels = extensions = 0
    for path, file in by_path.items():
        if path.suffix != ".py":
            continue
        before = path.read_text("utf-8")
        after = file.new_bytes.decode("utf-8") if file.changed else before
        found = triton_kernels(before)
        if found:
            work = set(found) - device_helpers(before)
            kernels += len(work)
            assert triton_kernels(after).keys() == found.keys(), f"{path}: a kernel changed"
            for name, code in found.items():
                assert without_comments(code) == without_comments(triton_kernels(after)[name]), (path, name)
            counts = todo_counts_above(after, "NPU500", "Triton kernel ")
            assert {name: counts[name] for name in found} == {name: int(name in work) for name in found}, path
        statements = _cuda_extension_statements(ast.parse(after))
        lines = after.splitlines()
        for statement in statements:
            extensions += 1
            first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])
            above = []
            i = first - 2
            while i >= 0 and lines[i].lstrip().startswith("#"):
                above.append(lines[i])
                i -= 1
            tagged = [
                c
                for c in above
                if (m := TODO_PATTERN.search(c))
                and m["rule"] == "NPU502"
                and "CUDA extension" in m["text"]
                and "JIT" not in m["text"]
            ]
            assert len(tagged) == 1, (path, statement.lineno, above)
    assert kernels == 16  # 17 Triton kernels, one of them a device function (gelu.py: gelu_functor)
    assert extensions == 2  # op_builder/builder.py, shipped twice
    findings = [f for file in result.files for f in file.findings]
    assert sum(f.rule.id == "NPU500" and f.message.startswith("Triton kernel ") for f in findings) == kernels
    assert sum(f.rule.id == "NPU502" and f.message.startswith("CUDA extension") for f in findings) == extensions

    cuda_files = [f for f in result.files if Path(f.path).suffix in (".cu", ".cuh")]
    assert len(cuda_files) == 95 and not any(f.changed for f in cuda_files)
    assert all([x.rule.id for x in f.findings] == ["NPU503"] for f in cuda_files)
    assert (
        sum("kernel" in f.findings[0].message and "no __global__" not in f.findings[0].message for f in cuda_files)
        >= 30
    )

    for file in result.changed:
        if file.path.endswith(".py"):
            ast.parse(file.new_bytes, filename=file.path)
        again = handler_for(Path(file.path)).port(file.new_bytes, Selection(), PortOptions())
        assert again.new_text is None or again.source.encode(again.new_text) == file.new_bytes, file.path


CAUSAL_CONV1D = ("causal-conv1d", "1.7.0")  # setup.py's CUDAExtension, csrc/causal_conv1d.cpp's PYBIND11_MODULE


@pytest.fixture(scope="module")
def causal_conv1d() -> Path:
    try:
        root = corpora.fetch(*CAUSAL_CONV1D, sdist=True)
    except (subprocess.CalledProcessError, OSError, ValueError) as error:
        # (pip builds the sdist's metadata, which imports torch: where that fails, unpack it by hand as the
        # module docstring says, with `pip download --no-build-isolation`)
        pytest.skip(f"cannot download the causal-conv1d {CAUSAL_CONV1D[1]} sdist: {error}")
    return root / "causal_conv1d-1.7.0"


def test_causal_conv1d_calls_of_its_extension_ops_name_the_cpp_binding(causal_conv1d: Path) -> None:
    """Issue 16 §3: the ops bound in csrc/causal_conv1d.cpp (PYBIND11_MODULE(TORCH_EXTENSION_NAME), named
    causal_conv1d_cuda by setup.py) are flagged where cpp_functions.py calls them, naming the binding."""
    result = run([causal_conv1d], RunConfig(selection=Selection(select=("NPU502",)), jobs=1, cache=False))
    assert not result.errors
    sites = {
        (Path(f.path).name, finding.line): finding.message
        for f in result.files
        for finding in f.findings
        if "causal_conv1d.cpp" in finding.message
    }
    assert sorted(sites) == [("cpp_functions.py", 22), ("cpp_functions.py", 55), ("cpp_functions.py", 82)]
    for message in sites.values():
        assert "of the CUDA extension causal_conv1d_cuda (bound in csrc/causal_conv1d.cpp)" in message
    [ported] = [f for f in result.changed if f.path.endswith("cpp_functions.py")]
    assert ported.new_bytes is not None
    ast.parse(ported.new_bytes)


# flash-linear-attention at a pinned commit (not on PyPI as such): its CUDA kernels beside its own Triton-Ascend port
# (`backends/triton_ascend/`). The tree is unpacked by hand from a git snapshot of fla-org/flash-linear-attention:
#   git --git-dir=<fla.git> archive bc3b101dcb713ddc5bd8924b66754eb68b5ccf89 | tar -x -C .cache/corpora/fla-bc3b101
FLA = corpora.CACHE / "fla-bc3b101"


@pytest.fixture(scope="module")
def fla_findings() -> dict[str, list]:
    """path relative to fla/ -> the NPU500 findings (NPU500 alone, as `scan --select NPU500`)."""
    if not (FLA / "fla" / "__init__.py").exists():
        pytest.skip(f"flash-linear-attention is not unpacked at {FLA}")
    tree = (FLA / "fla").resolve()
    result = run([tree], RunConfig(selection=Selection(select=("NPU500",)), jobs=2, cache=False))
    assert not result.errors
    return {Path(f.path).resolve().relative_to(tree).as_posix(): f.findings for f in result.files}


@pytest.mark.slow
def test_fla_kernels_are_work_only_where_they_are_launched_and_not_yet_on_ascend(fla_findings) -> None:
    """Before issue 19: 457 identical TODOs on this tree, 114 of them on the project's own Ascend kernels, 64 "no
    tf32" notes on `allow_tf32=False` (valid on Ascend), `tl.extra.libdevice.round` not noted."""
    tree = FLA / "fla"
    ascend = {p: f for p, f in fla_findings.items() if "/backends/triton_ascend/" in f"/{p}"}
    assert len(ascend) >= 30 and not any(ascend.values())  # the project's Ascend port: nothing to say

    headers = expected = 0
    for path, findings in fla_findings.items():
        if path in ascend or not path.endswith(".py"):
            continue
        source = (tree / path).read_text("utf-8")
        work = set(triton_kernels(source)) - device_helpers(source)
        named = [f.message.split(":")[0].removeprefix("Triton kernel ").split(",")[0] for f in findings]
        kernel_todos = [n for f, n in zip(findings, named, strict=True) if f.message.startswith("Triton kernel ")]
        assert sorted(kernel_todos) == sorted(work), path
        headers += len(kernel_todos)
        expected += len(work)
    assert headers == expected

    messages = [f.message for findings in fla_findings.values() for f in findings]
    lines = [m for m in messages if not m.startswith("Triton kernel ")]
    assert not [m for m in messages if "tf32" in m and "allow_tf32=False" in m]
    assert not [m for m in lines if m.startswith("tl.dot tf32")]  # (fla has no allow_tf32=True)
    assert sum(m.startswith("tl.extra.libdevice is not remapped") for m in lines) == 2  # fused_bitlinear's round
    assert sum(m.startswith("tl.inline_asm_elementwise") for m in lines) == 2  # (the ones not under Ascend guards)
    assert sum(m.startswith("tl.atomic_add sem='relaxed'") for m in lines) == 10  # path_attn
    assert sum(m.startswith("tensor descriptor (TMA)") for m in lines) == 6  # solve_tril
    assert sum("is the left operand of an earlier tl.dot too" in m for m in lines) > 100
    assert len(messages) < 700

"""Writes the scaffold of one op: the msOpGen prototype, the Ascend C host and kernel sources, the torch binding
(TORCH_LIBRARY_IMPL for PrivateUse1 calling the aclnn API), the Python package that falls back to the CPU reference,
the reference and its test. The text comes from ``templates/`` (package data), filled with what ``ascend_c.py`` and
``python_side.py`` compute."""

from __future__ import annotations

import string
from importlib import resources
from pathlib import Path

from ascend_port.scaffold.ascend_c import binding_values, kernel_values, op_def, prototype
from ascend_port.scaffold.plan import Plan, ScaffoldError, op_type
from ascend_port.scaffold.python_side import conftest, python_values, reference_source

__all__ = ["ScaffoldError", "render", "write"]


def _template(name: str) -> string.Template:
    return string.Template(
        resources.files("ascend_port.scaffold").joinpath("templates").joinpath(name).read_text("utf-8")
    )


def render(p: Plan) -> dict[str, str]:
    """Relative path -> text of every file of the scaffold."""
    sig = p.signature
    values = {
        "op_id": p.name,
        "op_type": op_type(p.name),
        "qualified": p.op.qualified,
        "package": p.package,
        "namespace": p.package,
        "guard": f"{p.name.upper()}_TILING_H",
        "cuda_function": f"{sig.function}()",
        "cuda_file": sig.file,
        "cuda_line": str(sig.line),
        "cuda_signature": f"{sig.function}({', '.join(q.cpp_type + ' ' + q.name for q in sig.params)})",
        "result_note": f"the CUDA op returns {sig.result}",
        "infer_shapes": "\n".join(
            f"    *context->GetOutputShape({i}) = *first;  // {n}" for i, n in enumerate(p.outputs)
        ),
        "infer_dtypes": "\n".join(f"    context->SetOutputDataType({i}, dtype);" for i in range(len(p.outputs))),
        "op_def": op_def(p),
        **kernel_values(p),
        **binding_values(p),
        **python_values(p),
    }
    name = p.name
    return {
        f"{name}.json": prototype(p),
        f"op_host/{name}_tiling.h": _template("op_tiling.h.tmpl").substitute(values),
        f"op_host/{name}.cpp": _template("op_host.cpp.tmpl").substitute(values),
        f"op_kernel/{name}.cpp": _template("op_kernel.cpp.tmpl").substitute(values),
        f"torch_binding/{name}_npu.cpp": _template("torch_binding.cpp.tmpl").substitute(values),
        "setup.py": _template("setup.py.tmpl").substitute(values),
        "build.sh": _template("build.sh.tmpl").substitute(values),
        f"{p.package}/__init__.py": _template("package_init.py.tmpl").substitute(values),
        f"{p.package}/reference.py": reference_source(p),
        f"test_{name}.py": _template("test_op.py.tmpl").substitute(values),
        "conftest.py": conftest(p),
        "README.md": _template("README.md.tmpl").substitute(values),
    }


def write(p: Plan, force: bool) -> list[Path]:
    """Writes the scaffold; refuses (ScaffoldError) to replace any existing file unless ``force``."""
    files = render(p)
    existing = [p.out / rel for rel in files if (p.out / rel).exists()]
    if existing and not force:
        shown = ", ".join(str(path) for path in existing[:5]) + (" ..." if len(existing) > 5 else "")
        raise ScaffoldError(
            f"{len(existing)} file(s) exist and would be replaced: {shown}: use --force to replace them"
        )
    written = []
    for rel, text in files.items():
        path = p.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        if rel == "build.sh":
            path.chmod(0o755)
        written.append(path)
    return written

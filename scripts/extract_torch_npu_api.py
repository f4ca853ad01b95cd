"""Extract the public API of torch_npu into ascend_port/data/torch_npu_api.json.

We read the published wheel instead of installing it: installing torch-npu
pulls in (or replaces) a specific torch build and its import needs the Ascend
CANN runtime, which breaks ``import torch`` on machines without NPUs. A wheel
is just a zip, so we open it with ``zipfile`` and parse the Python sources with
``ast``; nothing from torch_npu is ever imported or executed. The output is
deterministic: the same wheel always gives the same JSON.

Usage:
    python scripts/extract_torch_npu_api.py                   # download 2.14.0
    python scripts/extract_torch_npu_api.py --version 2.14.0
    python scripts/extract_torch_npu_api.py --wheel /tmp/torch_npu-....whl
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

DEFAULT_VERSION = "2.14.0"
DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "ascend_port" / "data" / "torch_npu_api.json"
NPU = "torch_npu/npu/"


def download_wheel(version: str, dest: Path) -> Path:
    """Download the cp311 manylinux x86_64 wheel of torch-npu (without dependencies)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.11",
            "--platform",
            "manylinux_2_28_x86_64",
            f"torch-npu=={version}",
            "-d",
            str(dest),
        ],
        check=True,
    )
    wheels = sorted(dest.glob("torch_npu-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {dest}, found {[w.name for w in wheels]}")
    return wheels[0]


def string_list(node: ast.expr) -> list[str] | None:
    """The strings of a literal list/tuple (or a sum of them), else None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_list(node.left), string_list(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def dunder_all(tree: ast.Module) -> list[str] | None:
    """``__all__`` of a module: ``=``, ``+=``, ``.extend(...)`` and ``.append(...)`` forms."""
    names: list[str] | None = None
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value:
                names = string_list(node.value) or []
        elif (
            isinstance(node, ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "__all__"
            and isinstance(node.op, ast.Add)
        ):
            names = (names or []) + (string_list(node.value) or [])
        elif (
            isinstance(node, ast.Expr)
            and isinstance(call := node.value, ast.Call)
            and isinstance(func := call.func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "__all__"
            and call.args
        ):
            if func.attr == "extend":
                names = (names or []) + (string_list(call.args[0]) or [])
            elif func.attr == "append" and isinstance(arg := call.args[0], ast.Constant) and isinstance(arg.value, str):
                names = (names or []) + [arg.value]
    return names


def top_level_names(tree: ast.Module) -> list[str]:
    """Public functions, classes and assigned names defined at module level."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return sorted(n for n in names if not n.startswith("_"))


def public_api(tree: ast.Module) -> list[str]:
    """``__all__`` if the module defines one, otherwise its public top-level names."""
    names = dunder_all(tree)
    return sorted(set(names)) if names is not None else top_level_names(tree)


def npu_submodules(wheel: zipfile.ZipFile) -> dict[str, str]:
    """Public modules and subpackages directly under torch_npu/npu/, name -> source path."""
    found: dict[str, str] = {}
    for path in wheel.namelist():
        rest = path[len(NPU) :] if path.startswith(NPU) else ""
        parts = rest.split("/")
        if len(parts) == 1 and rest.endswith(".py"):
            name = rest[:-3]
        elif len(parts) == 2 and parts[1] == "__init__.py":
            name = parts[0]
        else:
            continue
        if name and not name.startswith("_"):
            found[name] = path
    return dict(sorted(found.items()))


def documented_ops(tree: ast.Module) -> list[str]:
    """First string argument of every ``_add_torch_npu_docstr("name", ...)`` call."""
    return sorted(
        {
            node.args[0].value
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_add_torch_npu_docstr"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        }
    )


def extract(wheel_path: Path) -> dict[str, object]:
    with zipfile.ZipFile(wheel_path) as wheel:

        def parse(path: str) -> ast.Module:
            return ast.parse(wheel.read(path).decode("utf-8"), filename=path)

        distributed = parse("torch_npu/distributed/__init__.py")
        if "is_hccl_available" not in ast.unparse(distributed):
            print("warning: torch_npu/distributed/__init__.py does not mention is_hccl_available", file=sys.stderr)
        return {
            "schema": 1,
            "torch_npu_version": wheel_path.name.split("-")[1],
            "source": wheel_path.name,
            "sha256": hashlib.sha256(wheel_path.read_bytes()).hexdigest(),
            "npu": sorted(set(dunder_all(parse(NPU + "__init__.py")) or [])),
            "npu_submodules": {name: public_api(parse(path)) for name, path in npu_submodules(wheel).items()},
            "optim": public_api(parse("torch_npu/optim/__init__.py")),
            "profiler": public_api(parse("torch_npu/profiler/__init__.py")),
            "ops": documented_ops(parse("torch_npu/_op_plugin_docs.py")),
            "distributed": public_api(distributed),
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=DEFAULT_VERSION, help="torch-npu version to download")
    parser.add_argument("--wheel", type=Path, help="use this already downloaded wheel")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON file to write")
    args = parser.parse_args(argv)

    if args.wheel:
        api = extract(args.wheel)
    else:
        with tempfile.TemporaryDirectory(prefix="torch_npu_wheel_") as tmp:
            api = extract(download_wheel(args.version, Path(tmp)))

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(api, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    counts = {k: len(v) for k, v in api.items() if isinstance(v, (list, dict))}
    print(f"wrote {args.output}: {counts}")


if __name__ == "__main__":
    main()

"""Compile the golden Triton kernel pairs with Triton-Ascend, without an NPU (run by tests/test_triton_ascend.py).

Runs in Triton-Ascend's own virtualenv (it cannot share one with community Triton): ``python
triton_ascend_worker.py`` prints one JSON line, the outcome of each (pair, run, original/ported). The stages are those
``triton.compile`` runs on an NPU up to CANN's: the frontend (``ASTSource.make_ir``), ``make_ttir`` and the adapter
(``ttadapter``, triton-adapter-opt: the "ConvertTritonIRToLinalgIR" errors) for an Ascend 910B target.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import triton
import triton.runtime
from triton._C.libtriton import ir
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import ASTSource, make_backend

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
from kernel_pairs import PAIRS, values

TARGET = GPUTarget("npu", "Ascend910B3", 0)
# Triton-Ascend's Autotuner asks the NPU driver for the device when a module is imported, and there is no NPU here:
# the kernels are compiled with the values of one config instead (``meta`` parameters), as the autotuner would.
triton.autotune = triton.runtime.autotune = lambda *args, **kwargs: lambda fn: fn
TYPES = {"in": "*fp32", "out": "*fp32", "int": "i32"}


def load(path: Path, kernel: str):
    spec = importlib.util.spec_from_file_location(f"golden_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, kernel)
    while not hasattr(fn, "cache_key"):  # (an Autotuner or Heuristics wraps the JITFunction)
        fn = fn.fn
    return fn


def compile_ascend(fn, signature: dict[str, str], constants: dict[str, object]) -> None:
    backend = make_backend(TARGET)
    src = ASTSource(fn, signature, constants)
    options = backend.parse_options(dict(src.parse_options()))
    stages: dict = {}
    backend.add_stages(stages, options)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    metadata = {"hash": src.hash(), "target": TARGET, **options.__dict__}
    module = src.make_ir(options, backend.get_codegen_implementation(), backend.get_module_map(), context)
    module = stages["ttir"](module, metadata)
    stages["ttadapter"](module, metadata)


def function_source(path: Path, name: str) -> str:
    """A top-level function of a file, without its decorators (the caller puts a bare ``@triton.jit`` on it)."""
    text = path.read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = text.splitlines(keepends=True)
    return "".join(lines[node.lineno - 1 : node.end_lineno])


def real(spec_file: str) -> None:
    """Compile kernels of a real project: {kernel, original, ported, signature, constants, helpers}, each kernel
    lifted out of its file with the module-level names it needs (helpers: [file, function] pairs; the ported file's
    ``_ap_libdevice`` import), so that the project itself is never imported."""
    results = []
    for spec in json.loads(Path(spec_file).read_text()):
        preamble = ["import triton\n", "import triton.language as tl\n"]
        for file, function in spec["helpers"]:
            preamble.append("\n@triton.jit\n" + function_source(Path(file), function))
        for side in ("original", "ported"):
            path = Path(spec[side])
            text = path.read_text()
            head = [ast.get_source_segment(text, n) or "" for n in ast.parse(text).body if isinstance(n, ast.Try)]
            kernel = "\n@triton.jit\n" + function_source(path, spec["kernel"])
            source = "".join(preamble) + "\n".join(h for h in head if "_ap_libdevice" in h) + "\n" + kernel
            with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as out:
                out.write(source)
            try:
                compile_ascend(load(Path(out.name), spec["kernel"]), spec["signature"], spec["constants"])
                error = None
            except Exception as exc:  # (the outcome measured)
                error = f"{type(exc).__name__}: {exc}"[-600:]
            results.append({"kernel": spec["kernel"], "side": side, "error": error})
    print(json.dumps(results))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--real":
        real(sys.argv[2])
        return
    results = []
    for pair in PAIRS:
        for run, _ in pair.ascend:
            signature, constants = {}, {}
            for name, (kind, value) in values(pair, run).items():
                # A None pointer and an integer equal to 1 are constants, as Triton's JIT specialises them.
                if kind in ("constexpr", "meta") or value is None or (kind == "int" and value == 1):
                    constants[name] = value
                else:
                    signature[name] = TYPES[kind]
            for side, path in (("original", pair.original), ("ported", pair.ported)):
                try:
                    compile_ascend(load(path, pair.kernel), signature, constants)
                    error = None
                except Exception as exc:  # (any failure of the frontend or adapter is the outcome measured)
                    error = f"{type(exc).__name__}: {exc}"[-600:]
                results.append(
                    {"case": f"{pair.rule}/{pair.case}/{pair.kernel}", "run": repr(run), "side": side, "error": error}
                )
    print(json.dumps(results))


if __name__ == "__main__":
    main()

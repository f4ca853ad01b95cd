"""NPU502, NPU507: the calls outside kernels. torch's C++/CUDA extension builders (`CUDAExtension`, a JIT build
with CUDA sources, `BuildExtension` where a build uses it) and the calls of the extensions' ops get a TODO: the .cu
code needs a port. Triton's `get_active_torch_device()` becomes the current NPU (NPU507 shares the calls hook)."""

from __future__ import annotations

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.rules.kernels.arguments import _keyword, _positional, _string, _strings_in
from ascend_port.rules.kernels.extension_facts import (
    CPP_EXTENSION,
    CUDA_SOURCE,
    _extension_modules,
    _python_op_namespaces,
    extension_op_site,
)
from ascend_port.rules.kernels.kernel_todos import TritonKernelRules

MEDIUM, LOW = Confidence.MEDIUM, Confidence.LOW

CUDA_EXTENSION = rule(
    "NPU502",
    "cuda-extension",
    LOW,
    "`CUDAExtension`, `load`/`load_inline` with CUDA sources, `BuildExtension` and the calls of the extension's ops: "
    "TODO, the .cu code needs a port.",
    """
    There is no nvcc for NPUs and no tool that turns CUDA kernels into NPU kernels. Host C++ that only calls
    ATen builds for NPU with `torch_npu.utils.cpp_extension.NpuExtension` (a setuptools Extension that links
    torch_npu; the same module has a JIT `load`); the device code has to become Ascend C custom operators
    (scaffold them with msOpGen from a JSON prototype) registered with `TORCH_LIBRARY` or OpPlugin, or be
    replaced by torch/torch_npu ops. `ascend-port scaffold OP` writes that operator project for one of the ops this
    rule reports (`ascend-port scaffold` with no OP lists them): the prototype, the kernel class to fill in, the
    torch binding, and a CPU reference (the project's own pure-torch version where it ships one) with its test.
    `ascend-port scan` lists every .cu/.cuh file with its kernels (NPU503), which is the size of that work.
    `CppExtension` alone gets no TODO, nor torch_npu's `NpuExtension` (the NPU build of host C++, as `ascend-port
    scaffold` writes it), and `BuildExtension` gets one where a build uses it (`cmdclass=...`) in a module that
    builds CUDA sources. The Python call sites of the extension's ops get a
    TODO too: calls through the module a JIT build returns (`ops = load(..., sources=["k.cu"])`, then
    `ops.scale(x)`), through an imported compiled module named for CUDA (`selective_scan_cuda.fwd(...)`, or
    `from fused_cuda import fwd`, then `fwd(x)`), and of custom operators `torch.ops.<ns>.<op>` outside torch's,
    torch_npu's and other devices' namespaces and those the module defines in Python
    (`torch.library.custom_op("ns::op")`). A run over a project also reads its C++/CUDA sources: the ops that
    `PYBIND11_MODULE` and `TORCH_LIBRARY`/`TORCH_LIBRARY_IMPL(ns, CUDA, ...)` bind, under the module name
    setup.py's `CUDAExtension("pkg._C", ...)` gives them; a call of such an op through any import of that module
    (`import pkg._C as ext; ext.op(x)`, `from pkg import _C`) gets the TODO, which names the C++ file that binds it.
    A name imported for CUDA that is called itself (`from utils import move_to_cuda`, then `move_to_cuda(batch)`)
    is the project's own Python: a compiled extension is a module, called through its attributes.

    Before:
        from setuptools import setup
        from torch.utils.cpp_extension import CUDAExtension

        ext_modules = [CUDAExtension("fused_ops", ["ops.cpp", "ops_kernel.cu"])]
        setup(name="fused_ops", ext_modules=ext_modules)
    After:
        from setuptools import setup
        from torch.utils.cpp_extension import CUDAExtension

        # TODO(ascend-port): NPU502 [low] CUDA extension fused_ops (1 .cu source): no nvcc on NPU: ...
        ext_modules = [CUDAExtension("fused_ops", ["ops.cpp", "ops_kernel.cu"])]
        setup(name="fused_ops", ext_modules=ext_modules)
    """,
    example_file="setup.py",
)
TRITON_ACTIVE_DEVICE = rule(
    "NPU507",
    "triton-active-device",
    MEDIUM,
    '`triton.runtime.driver.active.get_active_torch_device()` -> `torch.device("npu", torch.npu.current_device())`.',
    """
    Triton-Ascend's NPU driver has no `get_active_torch_device()` on its 3.2.0 wheel (later versions return the NPU
    device); Triton-Ascend's migration guide drops the call and uses the NPU device directly. The current NPU is
    the one Triton-Ascend launches on (its driver asks `torch.npu.current_device()`).

    Before:
        import torch
        import triton
        DEVICE = triton.runtime.driver.active.get_active_torch_device()
    After:
        import torch
        import triton
        DEVICE = torch.device("npu", torch.npu.current_device())
    """,
)


class ExtensionRules(TritonKernelRules):
    """NPU502, NPU507: C++/CUDA extensions and Triton's active device."""

    # --- NPU502: C++/CUDA extensions ---------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.imports.resolve(original.func)
        if qualified == "triton.runtime.driver.active.get_active_torch_device" and not original.args:
            torch = self.ctx.imports.local_name_for("torch")
            if torch is None:
                return updated  # the module does not import torch: nothing to spell the device with
            replacement = cst.parse_expression(f'{torch}.device("npu", {torch}.npu.current_device())')
            return (
                self.fix(
                    TRITON_ACTIVE_DEVICE,
                    original,
                    replacement,
                    'get_active_torch_device() -> torch.device("npu", torch.npu.current_device())',
                )
                or updated
            )
        if qualified == f"{CPP_EXTENSION}.CUDAExtension":
            name = _string(getattr(_keyword(original, "name") or _positional(original, 0), "value", None))
            sources = _keyword(original, "sources") or _positional(original, 1)
            count = sum(1 for s in _strings_in(sources.value) if CUDA_SOURCE.search(s)) if sources else 0
            what = f"CUDA extension {name}" if name else "CUDA extension"
            if count:
                what += f" ({count} .cu source{'s' if count > 1 else ''})"
            self.todo(CUDA_EXTENSION, original, f"{what}: no nvcc on NPU: {self._extension_way()}")
        elif (site := self._extension_op(original.func, qualified)) is not None:
            self.todo(CUDA_EXTENSION, original, site)
        elif qualified in (f"{CPP_EXTENSION}.load", f"{CPP_EXTENSION}.load_inline") and self._builds_cuda(original):
            name = _string(getattr(_keyword(original, "name") or _positional(original, 0), "value", None))
            what = f"JIT CUDA extension {name}" if name else "JIT CUDA extension"
            self.todo(
                CUDA_EXTENSION,
                original,
                f"{what}: no nvcc on NPU: {self._extension_way()} (torch_npu.utils.cpp_extension.load for "
                "the host C++)",
            )
        return updated

    def _extension_op(self, func: cst.BaseExpression, qualified: str | None) -> str | None:
        """The TODO for a call of an op of a CUDA extension (extension_op_site), else None."""
        base = func
        while isinstance(base, cst.Attribute):
            base = base.value
        return extension_op_site(
            qualified,
            lambda: cst.Module([]).code_for_node(func),
            base.value if isinstance(base, cst.Name) else None,
            base is func,
            self.ctx.fact(_extension_modules),
            self._project_ops(),
            self._python_ops,
        )

    def _project_ops(self) -> dict[str, dict[str, str]]:
        return self.ctx.options.extension_op_map

    def _python_ops(self) -> set[str]:
        return self.ctx.fact(_python_op_namespaces)

    @staticmethod
    def _extension_way() -> str:
        return (
            "port the CUDA kernels to Ascend C operators (msOpGen scaffold, registered with TORCH_LIBRARY) or "
            "replace them with torch/torch_npu ops; build the host C++ with "
            "torch_npu.utils.cpp_extension.NpuExtension"
        )

    @staticmethod
    def _builds_cuda(call: cst.Call) -> bool:
        for arg in call.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword in ("cuda_sources", "extra_cuda_cflags"):
                return not (isinstance(arg.value, cst.Name) and arg.value.value == "None")
            if keyword == "with_cuda":
                return isinstance(arg.value, cst.Name) and arg.value.value == "True"
        return any(CUDA_SOURCE.search(s) for arg in call.args for s in _strings_in(arg.value))

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if id(original) not in self._import_parts and id(original) not in self._attr_names:
            self._build_extension(original)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if id(original) not in self._import_parts:
            self._build_extension(original)
        return updated

    def _build_extension(self, node: cst.Name | cst.Attribute) -> None:
        if (
            self._cpp_only
            or not self._build_context
            or self.ctx.imports.resolve(node) != f"{CPP_EXTENSION}.BuildExtension"
        ):
            return
        self.todo(
            CUDA_EXTENSION,
            node,
            "BuildExtension compiles .cu sources with nvcc: on NPU build host C++ as "
            "torch_npu.utils.cpp_extension.NpuExtension (BuildExtension still works for it) and the CUDA "
            "kernels as Ascend C operators",
        )

"""The kernels rules' common ground (rules/kernels/__init__.py): the state of every layer of KernelTransformer and
the bookkeeping that keeps it (import names, `.attr` names, build contexts, Triton-Ascend's try-imports)."""

from __future__ import annotations

import libcst as cst

from ascend_port.python.names import names_in
from ascend_port.python.transformer import PortTransformer
from ascend_port.rules.kernels.arguments import _string
from ascend_port.rules.kernels.extension_facts import CPP_EXTENSION
from ascend_port.rules.kernels.kernel_facts import _KernelScan
from ascend_port.rules.kernels.tables import ASCEND_LIBDEVICE_PACKAGES


class KernelRules(PortTransformer):
    """The state of every layer of KernelTransformer, and the hooks that keep it."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._import_parts: set[int] = set()  # names inside import statements are not uses
        self._attr_names: set[int] = set()  # the `.attr` Name of every Attribute: not a reference on its own
        self._ascend_try = 0  # inside a try statement that already imports Triton-Ascend's libdevice
        self._build_context = 0  # inside `cmdclass=...` or a `"build_ext": ...` entry
        self._kernels: list[_KernelScan | None] = []  # the functions being visited: a scan for each Triton kernel
        aliases = set(ctx.imports.aliases.values())
        # BuildExtension only matters when CUDA sources are built; a setup.py importing CppExtension (or torch_npu's
        # NpuExtension: an NPU build, e.g. the torch binding `ascend-port scaffold` writes) and not CUDAExtension
        # builds host C++ only.
        self._cpp_only = (
            bool(aliases & {f"{CPP_EXTENSION}.CppExtension", "torch_npu.utils.cpp_extension.NpuExtension"})
            and f"{CPP_EXTENSION}.CUDAExtension" not in aliases
            and f"{CPP_EXTENSION}.CUDA_HOME" not in aliases
        )

    # --- bookkeeping -------------------------------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> None:
        self._import_parts |= names_in(node)

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        return updated

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._import_parts |= names_in(node)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        return updated

    # BuildExtension is flagged where a build uses it (`cmdclass={"build_ext": BuildExtension}`, `cmdclass=...`),
    # not where a helper merely returns it.
    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._build_context += _string(node.key) == "build_ext"

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        self._build_context -= _string(original.key) == "build_ext"
        return updated

    def visit_Arg(self, node: cst.Arg) -> None:
        self._build_context += node.keyword is not None and node.keyword.value == "cmdclass"

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        self._build_context -= original.keyword is not None and original.keyword.value == "cmdclass"
        return updated

    def visit_Try(self, node: cst.Try) -> None:
        self._ascend_try += _imports_ascend_libdevice(node)

    def leave_Try(self, original: cst.Try, updated: cst.Try) -> cst.Try:
        self._ascend_try -= _imports_ascend_libdevice(original)
        return updated


def _imports_ascend_libdevice(node: cst.Try) -> bool:
    code = cst.Module([]).code_for_node(node.body)
    return any(package in code for package in ASCEND_LIBDEVICE_PACKAGES)

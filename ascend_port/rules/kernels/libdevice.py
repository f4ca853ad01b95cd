"""NPU501: CUDA's Triton libdevice import rerouted to Triton-Ascend's (`extra.cann`, then `extra.ascend`), with
CUDA's as the last fallback: where libdevice lives is mechanical on Triton-Ascend, so it is changed outside kernels."""

from __future__ import annotations

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.names import build_dotted, dotted
from ascend_port.rules.kernels.base import KernelRules
from ascend_port.rules.kernels.tables import ASCEND_LIBDEVICE_PACKAGES, CUDA_LIBDEVICE_MODULES, LIBDEVICE_ON_ASCEND

MEDIUM, LOW = Confidence.MEDIUM, Confidence.LOW

TRITON_LIBDEVICE = rule(
    "NPU501",
    "triton-libdevice",
    MEDIUM,
    "CUDA's Triton libdevice import -> Triton-Ascend's (`extra.cann`, then `extra.ascend`), keeping CUDA as the "
    "fallback.",
    """
    Triton-Ascend has no `triton.language.extra.cuda`, and its backend does not remap the generic
    `triton.language.extra.libdevice` stubs. Its own libdevice is `triton.language.extra.cann.libdevice`
    (3.2.1 and later) or `triton.language.extra.ascend.libdevice` (the 3.2.0 wheel); torch_npu imports them the
    same way, newest first. The original import stays as the last fallback so the module still runs on CUDA.
    Only 46 of CUDA libdevice's functions exist in both (exp, log, tanh, erf, pow, rsqrt, ...): a name imported
    directly that is not among them keeps the import unchanged, and the kernel's NPU500 TODO names the functions
    it calls that are missing. Review: the Ascend functions cover fp32/fp16 (sometimes bf16), not fp64. CUDA runs
    what it ran, so the import is rerouted also in a project that supports the NPU already (fla-core), where the
    other rules only report.

    Before:
        from triton.language.extra.cuda import libdevice
    After:
        try:
            from triton.language.extra.cann import libdevice
        except ImportError:
            try:
                from triton.language.extra.ascend import libdevice
            except ImportError:
                from triton.language.extra.cuda import libdevice
    """,
)


class LibdeviceRules(KernelRules):
    """NPU501: the libdevice import."""

    # --- NPU501: libdevice import ------------------------------------------------------------------------------

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if len(updated.body) != 1 or self._ascend_try:
            return updated
        small = updated.body[0]
        imported = self._cuda_libdevice_import(small)
        if imported is None:
            return updated
        chain = [_with_package(small, package) for package in ASCEND_LIBDEVICE_PACKAGES] + [small]
        replacement = _try_chain(chain, updated)
        return (
            self.fix(
                TRITON_LIBDEVICE,
                original,
                replacement,
                f"{imported} -> Triton-Ascend's libdevice (extra.cann, then extra.ascend; CUDA as fallback)",
            )
            or updated
        )

    def _cuda_libdevice_import(self, small: cst.BaseSmallStatement) -> str | None:
        """The module a CUDA libdevice import names, when it can be rerouted to Triton-Ascend."""
        if isinstance(small, cst.ImportFrom):
            return _cuda_libdevice_import_from(small)
        if isinstance(small, cst.Import) and len(small.names) == 1 and small.names[0].asname is not None:
            module = dotted(small.names[0].name)
            if module in CUDA_LIBDEVICE_MODULES:
                return module
        return None


def _cuda_libdevice_import_from(small: cst.ImportFrom) -> str | None:
    """``_cuda_libdevice_import`` for a ``from`` import: the libdevice module itself, or functions Ascend has."""
    if small.module is None or small.relative or isinstance(small.names, cst.ImportStar):
        return None
    module = dotted(small.module)
    if len(small.names) == 1:
        name = small.names[0].name
        if not isinstance(name, cst.Name):
            return None
        if module in ("triton.language.extra.cuda", "triton.language.extra") and name.value == "libdevice":
            return f"{module}.libdevice"
    names = [a.name.value for a in small.names if isinstance(a.name, cst.Name)]
    if module in CUDA_LIBDEVICE_MODULES and names and all(n in LIBDEVICE_ON_ASCEND for n in names):
        return module
    return None


def _with_package(small: cst.BaseSmallStatement, package: str) -> cst.BaseSmallStatement:
    """The same import statement pointed at one of Triton-Ascend's libdevice packages."""
    if isinstance(small, cst.Import):
        alias = small.names[0]
        return small.with_changes(
            names=[alias.with_changes(name=build_dotted(f"{package}.libdevice"), comma=cst.MaybeSentinel.DEFAULT)]
        )
    assert isinstance(small, cst.ImportFrom) and small.module is not None
    module = dotted(small.module)
    new_module = f"{package}.libdevice" if module in CUDA_LIBDEVICE_MODULES else package
    return small.with_changes(module=build_dotted(new_module))


def _try_chain(chain: list[cst.BaseSmallStatement], original: cst.SimpleStatementLine) -> cst.Try:
    """try: chain[0] / except ImportError: try: chain[1] ... with the last one as the final fallback."""
    body: cst.BaseStatement = cst.SimpleStatementLine([chain[-1]], trailing_whitespace=original.trailing_whitespace)
    for small in reversed(chain[:-1]):
        body = cst.Try(
            body=cst.IndentedBlock([cst.SimpleStatementLine([small])]),
            handlers=[cst.ExceptHandler(body=cst.IndentedBlock([body]), type=cst.Name("ImportError"))],
        )
    assert isinstance(body, cst.Try)
    return body.with_changes(leading_lines=original.leading_lines)

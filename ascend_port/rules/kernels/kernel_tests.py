"""NPU517: a test whose subject is a CUDA-only kernel stays CUDA code and is skipped on an NPU host.

A test that calls an op of a C++/CUDA extension (NPU502's), launches a Triton kernel or calls a CUDA-only library
(NPU504's table) tests that kernel: ported like any code (`.cuda()` -> `.npu()`, its skip guard asked of the NPU),
it runs on an NPU host and fails on the kernel. The device model keeps such a test whole (python/device_model.py:
every other rule leaves it as it is), and this rule gives it a CUDA skip guard where it has none. What is read here
is plain ``ast`` of the module's text, once per text (the trigger search and the device model ask the same)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import libcst as cst

from ascend_port.core import library_support
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import Finding
from ascend_port.core.options import ExtensionOps, PortOptions
from ascend_port.core.sources import line_offsets, python_lines
from ascend_port.core.suppression import Suppressions
from ascend_port.python.device_facts import PROBE_NAMES, dotted_ast, resolve_ast
from ascend_port.python.device_model import ACCELERATORS, NVIDIA_SMI, OTHER_VENDORS, DeviceModel, Span, devices_in
from ascend_port.python.module_facts import statement_blocks
from ascend_port.python.names import ImportIndex, walk_statements
from ascend_port.python.parsing import parse_quietly
from ascend_port.python.scopes import FUNCTIONS, Scope, innermost
from ascend_port.python.transformer import PortTransformer
from ascend_port.rules.kernels.extension_facts import (
    NOT_EXTENSIONS,
    extension_modules,
    extension_op_site,
    python_op_namespaces,
)
from ascend_port.rules.kernels.kernel_todos import TRITON_KERNEL
from ascend_port.rules.kernels.tables import TRITON_DECORATORS, as_triton
from ascend_port.rules.libraries import LIBRARIES, library_way

CUDA_KERNEL_TEST = rule(
    "NPU517",
    "cuda-kernel-test",
    Confidence.MEDIUM,
    "A test whose subject is a CUDA-only kernel (an extension op, a Triton kernel, a CUDA-only library) keeps its "
    "CUDA code and is skipped on the NPU: a CUDA skip guard is added where it has none (a test of NVIDIA's tools, "
    "nvidia-smi, keeps its own guards).",
    """
    A test function or method (`test_*`, at the top of a module or in a test class) that runs on CUDA (it names
    CUDA, or its class's `setUp` does, and no other device) and calls an op of a C++/CUDA extension itself (the
    calls NPU502 flags), launches a Triton kernel (`kernel[grid](...)`) or calls a CUDA-only library (NPU504's
    table: CuPy, FlashInfer, bitsandbytes, ...) tests that kernel, which an NPU host does not have. Ported like
    other code, its tensors would go to the NPU and its skip guard would ask the NPU, so that the test ran there
    and failed on the kernel. Such a test is left whole as it is, its CUDA lines and a CUDA skip guard it has
    (`@pytest.mark.skipif(not torch.cuda.is_available(), ...)`, `@unittest.skipUnless(...)`, `if not
    torch.cuda.is_available(): pytest.skip(...)`, a call of the kernel under a CUDA test) with them: on an NPU host
    it is skipped. So is the CUDA skip guard of its class (a skip decorator: the class stays whole, its `setUp`
    too) or module (`pytestmark = pytest.mark.skipif(...)`, `if not torch.cuda.is_available(): pytest.skip(...,
    allow_module_level=True)`) when all the class's (the module's) tests are such tests: its tests need no guard
    of their own (where other tests share it, it is ported for them and each kernel test gets its own). A test
    without such a guard gets one, closest to its `def`: `@pytest.mark.skipif(not torch.cuda.is_available(),
    reason="tests the CUDA kernel <name>: none on the NPU")` in a module that imports
    pytest, `@unittest.skipUnless(torch.cuda.is_available(), ...)` on a `unittest.TestCase` method in a module that
    imports unittest (or `skipUnless` from it); elsewhere a TODO says to skip it. The finding names what would port
    it (the kernel's NPU replacement). A test that reaches the kernel only through a function of the project (which
    may have an NPU path), that is given its device (`def test_op(device)`) or names another device (the NPU, CPU
    in a decorator, another vendor's) is ported as before, and so is a test whose `def` line says
    `# ascend-port: ignore[NPU517]`. A test that refers to NVIDIA's tools (a name for them, `check_cuda_with_nvidia_smi`,
    `pynvml`, or the `nvidia-smi` command; in its body or decorators) and not to the NPU tests them: it is kept whole
    too, with the CUDA guards it has (`skipif(torch.cuda.device_count() == 0)` skips it on an NPU host, `> 0` runs a
    mocked nvidia-smi there), and gets none (its CPU cases run anywhere).

    Before:
        import pytest
        import torch

        import fused_adam_cuda


        def test_fused_adam():
            p = torch.randn(8).cuda()
            fused_adam_cuda.adam(p, p.clone(), 1e-3)
    After:
        import pytest
        import torch

        import fused_adam_cuda


        @pytest.mark.skipif(not torch.cuda.is_available(), reason="tests the CUDA kernel fused_adam_cuda.adam: none on the NPU")
        def test_fused_adam():
            p = torch.randn(8).cuda()
            fused_adam_cuda.adam(p, p.clone(), 1e-3)
    Stays (a test of torch's own ops is ported):
        import pytest
        import torch


        def test_add():
            x = torch.randn(8)
            assert torch.equal(x + 0, x)
    """,
)


@dataclass(frozen=True)
class KernelTest:
    """A test whose subject is a CUDA-only kernel."""

    first: int  # its first line (decorators included) and last line
    last: int
    line: int  # the line of its `def`
    name: str
    # what the test tests: "the CUDA kernel <the kernel as the test calls it>" (`fused_adam_cuda.adam`, `add_kernel`),
    # "the CUDA-only library <its package>"
    subject: str
    why: str  # what the kernel is and what would port it
    # How it keeps off the kernel on an NPU host already ("": it does not): a CUDA skip guard of its own, or its
    # class's or module's, or a CUDA test around its call of the kernel.
    guard: str
    unittest: bool  # a method of a unittest.TestCase
    # The lines (first, last) of the class or module skip guards that stay CUDA's with it (a class's decorators,
    # `pytestmark = ...`, `if not torch.cuda.is_available(): pytest.skip(..., allow_module_level=True)`).
    outer: tuple[tuple[int, int], ...] = ()


# What a module that tests a CUDA-only kernel says (a launch `](`, an extension, a custom op, a library): a test
# module without any of these is not parsed for it. (cuda-python's `cuda` only where a module imports it: not every
# `torch.cuda`.)
_LIBRARY_ROOTS = sorted({prefix.split(".")[0] for prefix, _ in (*LIBRARIES, *library_support.import_ways())} - {"cuda"})
_SIGNS = re.compile(
    r"(?i:nvidia|nvml)|\]\s*\(|_cuda|torch\.ops\.|cpp_extension|(?:from|import)[ \t]+cuda\b|(?<![.\w])(?:"
    + "|".join(map(re.escape, _LIBRARY_ROOTS))
    + r")\b"
)
_TEST_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+test", re.MULTILINE)
_SKIP_WORD = re.compile(r"skip|require", re.IGNORECASE)


@lru_cache(maxsize=8)  # (asked by the trigger search, then by the device model and the rule, of the same text)
def kernel_tests(text: str, ops: ExtensionOps = ()) -> tuple[KernelTest, ...]:
    """The tests of a module's source whose subject is a CUDA-only kernel; ``ops``: the project's extensions' ops
    (PortOptions.extension_ops)."""
    if "def test" not in text:  # (most modules: one search, far cheaper than _TEST_DEF's at every offset)
        return ()
    if not _TEST_DEF.search(text) or not (_SIGNS.search(text) or any(m.rsplit(".", 1)[-1] in text for m, _ in ops)):
        return ()
    tree = parse_quietly(text)
    if tree is None:
        return ()
    return tuple(_Reader(tree, ops).tests())


class _Reader:
    """What one module says of the kernels its tests call."""

    def __init__(self, tree: ast.Module, ops: ExtensionOps) -> None:
        self.tree = tree
        self.aliases = ImportIndex.from_ast(tree).aliases
        assignments = [n for n in walk_statements(tree) if isinstance(n, ast.Assign)]
        self.extensions = extension_modules(self.aliases, assignments)
        self.project_ops = {module: dict(found) for module, found in ops}
        self.triton_kernels = {
            node.name
            for node in walk_statements(tree)
            if isinstance(node, FUNCTIONS) and any(map(self._is_triton_decorator, node.decorator_list))
        }
        # (a kernel imported from the project is launched in a module that imports Triton)
        self.imports_triton = any((as_triton(path) or "").split(".")[0] == "triton" for path in self.aliases.values())
        self._python_ops: set[str] | None = None

    def python_ops(self) -> set[str]:
        """The operator namespaces the module defines in Python (read when a test calls torch.ops)."""
        if self._python_ops is None:
            self._python_ops = python_op_namespaces(n for n in ast.walk(self.tree) if isinstance(n, ast.Call))
        return self._python_ops

    def tests(self) -> Iterator[KernelTest]:
        """The kernel tests. Those of a class (a module) whose tests are all kernel tests keep its CUDA skip guard:
        ported to ask the NPU, it would let them run there; with it, they need none of their own. (A class or module
        with other tests too gets its guard ported as before, and each kernel test in it a guard of its own.)"""
        every = [(self._kernel_test(f, in_case, setup), cls) for f, in_case, setup, cls in _test_functions(self.tree)]
        found = [(test, cls) for test, cls in every if test is not None]
        module = _module_guards(self.tree) if found and all(test is not None for test, _ in every) else []
        for test, cls in found:
            whole = cls is not None and all(other is not None for other, c in every if c is cls)
            held = _class_guards(cls) if cls is not None and whole else []
            if not held and not module:
                yield test
                continue
            guard = test.guard or f"{'its class' if held else 'its module'}'s CUDA skip guard skips it on the NPU"
            yield replace(test, guard=guard, outer=tuple(held + module))

    def _kernel_test(self, function: Function, in_test_case: bool, setup: list[Function]) -> KernelTest | None:
        """The kernel test ``function`` is, if it is one (a test of NVIDIA's tools is kept as one)."""
        tool = _nvidia_tool(function)
        if tool is not None:
            return _nvidia_test(function, tool, in_test_case)
        if not _cuda_only(function, setup):
            return None
        subject = next(
            ((found, guarded) for call, guarded in _calls(function.body, False) if (found := self._kernel(call))),
            None,
        )
        if subject is None:
            return None
        (subject_name, why), under_test = subject
        guard = "its CUDA skip guard skips it on the NPU" if _guarded(function) else ""
        return KernelTest(
            first=min([function.lineno, *(d.lineno for d in function.decorator_list)]),
            last=function.end_lineno or function.lineno,
            line=function.lineno,
            name=function.name,
            subject=subject_name,
            why=why,
            guard=guard
            or ("it calls the kernel only under a CUDA test, which the NPU does not pass" if under_test else ""),
            unittest=in_test_case,
        )

    def _is_triton_decorator(self, decorator: ast.expr) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return as_triton(resolve_ast(target, self.aliases)) in TRITON_DECORATORS

    def _kernel(self, call: ast.Call) -> tuple[str, str] | None:
        """(what the test tests, what it is and what would port it) when ``call`` runs a CUDA-only kernel itself,
        else None."""
        func = call.func
        if isinstance(func, ast.Subscript):  # `kernel[grid](...)`
            name = dotted_ast(func.value)
            if name is None:
                return None
            local = name.rsplit(".", 1)[-1]
            if local in self.triton_kernels or (self.imports_triton and _from_project(func.value, self.aliases)):
                return (
                    f"the CUDA kernel {local}",
                    f"{local} is a Triton kernel: port it to Triton-Ascend ({TRITON_KERNEL.id}'s TODOs on its definition)",
                )
            return None
        code = dotted_ast(func)
        if code is None:
            return None
        qualified = resolve_ast(func, self.aliases)
        head = code.split(".", 1)[0]
        site = extension_op_site(
            qualified, lambda: code, head, "." not in code, self.extensions, self.project_ops, self.python_ops
        )
        if site is not None:
            return f"the CUDA kernel {code}", site
        way = library_way(qualified) if qualified else None
        if qualified is None or way is None:
            return None
        return f"the CUDA-only library {qualified.split('.')[0]}", f"{code}() runs a CUDA-only library: {way}"


# An identifier named for NVIDIA's tools (`check_cuda_with_nvidia_smi`, `pynvml`, `nvmlInit`).
_NVIDIA_NAME = re.compile(r"(?i)nvidia|nvml")


def _nvidia_tool(function: Function) -> str | None:
    """What of NVIDIA's tools the test (its decorators included) refers to: a name for NVIDIA (LitServe's
    `check_cuda_with_nvidia_smi`, pynvml) or the `nvidia-smi` command; None when it refers to none, or names the
    NPU."""
    found = None
    for node in ast.walk(function):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name is not None and _NVIDIA_NAME.search(name):
            found = found or name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(NVIDIA_SMI):
            found = found or NVIDIA_SMI
    return found if found is not None and "npu" not in devices_in(function) else None


def _nvidia_test(function: Function, tool: str, unittest: bool) -> KernelTest:
    """A test whose subject is NVIDIA's tools: kept whole with the guards it has (a CUDA skip guard skips it on an
    NPU host, `skipif(torch.cuda.device_count() > 0)` runs it there, with its mocks), and given none (it may run
    where no NVIDIA GPU is: a mocked nvidia-smi, a CPU case)."""
    return KernelTest(
        first=min([function.lineno, *(d.lineno for d in function.decorator_list)]),
        last=function.end_lineno or function.lineno,
        line=function.lineno,
        name=function.name,
        subject=f"NVIDIA's tools ({tool})",
        why=f"it tests NVIDIA's tools ({tool}), which describe NVIDIA GPUs: its CUDA names are theirs",
        guard="its guards, if any, stay CUDA's",
        unittest=unittest,
    )


def _from_project(node: ast.expr, aliases: Mapping[str, str]) -> bool:
    """Is ``node`` a name imported from outside torch, Triton and the other libraries that are no extensions (a
    project's kernel: `from pkg.kernels import add_kernel`)?"""
    qualified = resolve_ast(node, aliases)
    return qualified is not None and qualified.split(".")[0] not in NOT_EXTENSIONS


# The methods of a test class that prepare each of its tests (unittest's, pytest's).
_SETUPS = frozenset(("setUp", "setUpClass", "setup_method", "setup_class"))
Function = ast.FunctionDef | ast.AsyncFunctionDef


def _test_functions(tree: ast.Module) -> Iterator[tuple[Function, bool, list[Function], ast.ClassDef | None]]:
    """The module's test functions, each with whether it is a method of a unittest.TestCase, its class's setup
    methods and its class: `test*` functions at its top and in its classes (pytest collects those of `Test*`
    classes, unittest those of TestCase's)."""
    for node in tree.body:
        if isinstance(node, FUNCTIONS) and node.name.startswith("test"):
            yield node, False, [], None
        elif isinstance(node, ast.ClassDef):
            test_case = any((dotted_ast(base) or "").endswith("TestCase") for base in node.bases)
            if test_case or node.name.startswith("Test"):
                methods = [m for m in node.body if isinstance(m, FUNCTIONS)]
                setup = [m for m in methods if m.name in _SETUPS]
                yield from ((m, test_case, setup, node) for m in methods if m.name.startswith("test"))


def _class_guards(cls: ast.ClassDef) -> list[tuple[int, int]]:
    """The lines of the whole class (its decorators first) when a decorator of it is a CUDA skip guard
    (`@pytest.mark.skipif(not torch.cuda.is_available(), ...)`, `@unittest.skipIf(...)`), else none: its setup
    methods stay CUDA's with its tests (an NPU host never runs them)."""
    if not any(map(_skip_decorator, cls.decorator_list)):
        return []
    return [(min(d.lineno for d in cls.decorator_list), cls.end_lineno or cls.lineno)]


def _module_guards(tree: ast.Module) -> list[tuple[int, int]]:
    """The lines of the module's CUDA skip guards: `pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
    ...)` (or a list with one), `if not torch.cuda.is_available(): pytest.skip(..., allow_module_level=True)` (or
    `raise unittest.SkipTest(...)`)."""
    guards = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            marks = any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets)
            if marks and node.value is not None and any(map(_skip_decorator, ast.walk(node.value))):
                guards.append(_lines(node))
        elif isinstance(node, ast.If) and _asks_cuda(node.test) and _skips(node.body[0]):
            guards.append(_lines(node))
    return guards


def _lines(node: ast.AST) -> tuple[int, int]:
    first = getattr(node, "lineno", 0)
    return first, getattr(node, "end_lineno", None) or first


def _cuda_only(function: Function, setup: list[Function]) -> bool:
    """Does the test run on CUDA alone? It (or its class's ``setup``, which makes its tensors) uses CUDA (else the
    port changes nothing in it: _uses_cuda) and names no other accelerator (the NPU, another vendor's: a test that handles them), no
    device in its decorators but CUDA (`@pytest.mark.skipif("cpu" not in devices, ...)`), and takes no device as a
    parameter (`def test_op(device)`: the kernel serves the devices it is given). (The NPU in ``setup`` is no sign:
    a port moves it there, and the test keeps the CUDA guard it got.)"""
    if not (_uses_cuda(function) or any(map(_uses_cuda, setup))):
        return False
    prepared = set().union(*map(devices_in, setup))
    if devices_in(function) & (ACCELERATORS - {"cuda"}) or prepared & OTHER_VENDORS:
        return False
    if any(devices_in(decorator) - {"cuda"} for decorator in function.decorator_list):
        return False
    arguments = function.args
    return not any(
        "device" in a.arg or a.arg == "dev" for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
    )


def _uses_cuda(node: ast.AST) -> bool:
    """Does ``node`` use CUDA as the port reads it: a device string (`"cuda"`, `"cuda:1"`), `.cuda()`, `torch.cuda.`,
    `.is_cuda`? (Not an identifier that only says the word: bitsandbytes' `cuda120_spec` fixture.)"""
    return any(
        (isinstance(n, ast.Attribute) and n.attr in ("cuda", "is_cuda"))
        or (isinstance(n, ast.Constant) and "cuda" in devices_in(n))
        for n in ast.walk(node)
    )


def _calls(statements: Sequence[ast.stmt], guarded: bool) -> Iterator[tuple[ast.Call, bool]]:
    """The calls of ``statements`` in order, each with whether a CUDA test holds it (`if torch.cuda.is_available():`,
    `if x.is_cuda:`): there an NPU host never reaches it."""
    for node in statements:
        inner = guarded or (isinstance(node, (ast.If, ast.While)) and _asks_cuda(node.test))
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                calls = [n for n in ast.walk(child) if isinstance(n, ast.Call)]
                yield from ((c, guarded) for c in sorted(calls, key=lambda c: (c.lineno, c.col_offset)))
        for block in statement_blocks(node):
            yield from _calls(block, inner)


def _guarded(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does a CUDA guard of the test's own skip it where CUDA is not: a decorator that skips or requires and names
    CUDA (`@pytest.mark.skipif(not torch.cuda.is_available(), ...)`, `@unittest.skipUnless(...)`,
    `@require_cuda`), or an `if` on CUDA in its body that skips or returns?"""
    if any(map(_skip_decorator, function.decorator_list)):
        return True
    return any(isinstance(node, ast.If) and _asks_cuda(node.test) and _skips(node.body[0]) for node in function.body)


def _skip_decorator(node: ast.AST) -> bool:
    """Is ``node`` a decorator (a mark) that skips or requires and names CUDA?"""
    if not isinstance(node, (ast.Call, ast.Name, ast.Attribute)):
        return False
    target = node.func if isinstance(node, ast.Call) else node
    name = (dotted_ast(target) or "").rsplit(".", 1)[-1]
    return bool(_SKIP_WORD.search(name)) and _asks_cuda(node)


def _asks_cuda(test: ast.AST) -> bool:
    """Does ``test`` ask about CUDA with an answer on a host without it (`torch.cuda.is_available()`,
    `device_count()`, `x.is_cuda`)? A capability probe raises there: no guard (NPU108 keeps it CUDA's anyway)."""
    return "cuda" in devices_in(test) and not any(
        isinstance(n, ast.Call) and (dotted_ast(n.func) or "").rsplit(".", 1)[-1] in PROBE_NAMES for n in ast.walk(test)
    )


def _skips(node: ast.stmt) -> bool:
    """`pytest.skip(...)`, `self.skipTest(...)`, `raise unittest.SkipTest(...)`, `return`."""
    if isinstance(node, (ast.Return, ast.Raise)):
        return True
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and bool(_SKIP_WORD.search((dotted_ast(node.value.func) or "").rsplit(".", 1)[-1]))
    )


def keep_kernel_tests(model: DeviceModel, text: str, options: PortOptions, suppressions: Suppressions) -> DeviceModel:
    """``model`` keeping the module's tests of CUDA-only kernels whole (those it does not keep already: another
    device's; and those whose `def` line says `# ascend-port: ignore[NPU517]`, ported as any code), with the lines
    of their `def`s (DeviceModel.kernel_tests)."""
    tests = [
        t
        for t in kernel_tests(text, options.extension_ops)
        if not model.keeps(t.line) and not suppressions.suppresses(CUDA_KERNEL_TEST.id, t.line)
    ]
    if not tests:
        return model
    model.kept.extend(Span(t.first, t.last) for t in tests)
    # (a class's or module's CUDA skip guard that its kernel tests keep)
    model.kept.extend(Span(first, last) for t in tests for first, last in t.outer)
    model.kernel_tests.update(t.line for t in tests)
    return model.finish()


_TEST_SCOPE: Scope = innermost(*FUNCTIONS)


def kernel_test_sites(text: str, options: PortOptions) -> list[tuple[int, Scope]]:
    """Trigger matches at the `def` of each test of a CUDA-only kernel: its whole function is ported (its guard goes
    above the `def`); what it calls names no trigger of its own when the kernel is a project's."""
    tests = kernel_tests(text, options.extension_ops)
    if not tests:
        return []
    starts = line_offsets(python_lines(text))
    return [(starts[t.line - 1], _TEST_SCOPE) for t in tests]


class KernelTestTransformer(PortTransformer):
    """NPU517: tests of CUDA-only kernels get a CUDA skip guard."""

    RULES = (CUDA_KERNEL_TEST,)
    # (the tests it guards are code the device model keeps)
    SEES_KEPT_CODE = True
    option_triggers = staticmethod(kernel_test_sites)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        model = self.ctx.devices()
        line = self.ctx.line_of(original.name)
        if model is None or line not in model.kernel_tests:
            return updated
        test = next((t for t in kernel_tests(self.ctx.source, self.ctx.options.extension_ops) if t.line == line), None)
        if test is None:
            return updated
        if test.guard:
            self._report(original, f"{test.name}() is kept as CUDA code ({test.guard}): {test.why}")
            return updated
        guard = self._guard(test)
        if guard is None:
            self.todo(
                CUDA_KERNEL_TEST,
                original,
                f"{test.name}() is kept as CUDA code: skip it on the NPU (the module imports no torch, or neither "
                f"pytest nor unittest, to write the guard with): {test.why}",
            )
            return updated
        decorated = updated.with_changes(decorators=[*updated.decorators, cst.Decorator(guard)])
        message = f"{test.name}() is kept as CUDA code, with a CUDA skip guard that skips it on the NPU: {test.why}"
        # (the guard asks CUDA: the module needs no torch_npu for it)
        return self.fix(CUDA_KERNEL_TEST, original, decorated, message, needs_torch_npu=False) or updated

    def _guard(self, test: KernelTest) -> cst.BaseExpression | None:
        """The skip guard the test gets, written with the module's own imports; None when it has none to write it
        with."""
        imports = self.ctx.imports
        torch = imports.local_name_for("torch")
        unittest = imports.local_name_for("unittest")
        pytest = imports.local_name_for("pytest")
        reason = f"tests {test.subject}: none on the NPU"
        if torch is None:
            return None
        skip_unless = f"{unittest}.skipUnless" if unittest else imports.local_name_for("unittest.skipUnless")
        if test.unittest and skip_unless is not None:
            return cst.parse_expression(f'{skip_unless}({torch}.cuda.is_available(), "{reason}")')
        if pytest is not None:
            return cst.parse_expression(f'{pytest}.mark.skipif(not {torch}.cuda.is_available(), reason="{reason}")')
        return None

    def _report(self, original: cst.CSTNode, message: str) -> None:
        """A finding with no change: the test stays as it is (porting its kernel is work by hand)."""
        if self.enabled(CUDA_KERNEL_TEST) and not self.ctx.suppressed(CUDA_KERNEL_TEST, original):
            self.ctx.findings.append(Finding(CUDA_KERNEL_TEST, self.ctx.line_of(original), message, applied=False))

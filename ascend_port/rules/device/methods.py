"""NPU113, NPU114: a class's own `cuda()`, which the calls NPU101 renames reach through `npu = cuda`."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from typing import TypeGuard

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.sources import python_lines
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.transformer import PortContext
from ascend_port.rules.device.torch_cuda import CUDA_METHOD, TorchCudaRules

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


USER_CUDA_METHOD = rule(
    "NPU113",
    "user-cuda-method",
    MEDIUM,
    "A class's own `cuda()` method: its calls keep the name, and the class gets `npu = cuda` for the calls renamed.",
    """
    `def cuda(self)` in a user class (a batch or a wrapper that moves its tensors) is not torch's `.cuda()`: its
    body is ported as usual, so the method moves to the NPU. Calls known to reach it (`self.cuda()` inside the
    class, `batch.cuda()` where `batch = Batch(...)` in the module, `Batch(...).cuda()`) keep their name; calls on
    objects whose type the port cannot see (`[b.cuda() for b in batches]`) become `.npu()` like a tensor's, so the
    class gets `npu = cuda` after the method and they reach it too (an override of `nn.Module.cuda` then also runs
    for `.npu()`). A class with an `npu` of its own gets a TODO instead.

    Before:
        class Batch:
            def cuda(self):
                self.x = self.x.cuda()
                return self
        batch = Batch().cuda()
    After:
        class Batch:
            def cuda(self):
                self.x = self.x.npu()
                return self

            npu = cuda  # (ascend-port NPU113: the calls renamed to .npu() reach this class's cuda())
        batch = Batch().cuda()
    """,
    follows=(CUDA_METHOD.id,),
)


USER_NPU_METHOD = rule(
    "NPU114",
    "user-npu-method",
    LOW,
    "A class with its own `cuda()` and `npu()`: a TODO, since the calls renamed to `.npu()` reach its `npu()`.",
    """
    NPU113 gives a class's own `cuda()` the alias `npu = cuda`, so the calls on objects of unknown type, renamed to
    `.npu()` like a tensor's, still reach it. A class that defines an `npu` of its own keeps it: those calls now
    run its `npu()` instead of its `cuda()`, which may do something else. The method gets a TODO.

    Before:
        class Batch:
            def cuda(self):
                return self
            def npu(self):
                raise RuntimeError("no NPU")
    After:
        class Batch:
            # TODO(ascend-port): NPU114 [low] Batch.cuda() is this class's own method and the class has its own ...
            def cuda(self):
                return self
            def npu(self):
                raise RuntimeError("no NPU")
    """,
)


def user_cuda_classes(facts: ModuleFacts) -> tuple[frozenset[str], frozenset[str]]:
    """(classes of the module with a ``cuda`` method of their own, names assigned ``Cls(...)`` of one of them)."""
    classes = frozenset(
        node.name
        for node in facts.statements(ast.ClassDef)
        if any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "cuda" for item in node.body)
    )
    if not classes:
        return classes, frozenset()
    instances = frozenset(
        target.id
        for node in facts.statements(ast.Assign)
        if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id in classes
        for target in node.targets
        if isinstance(target, ast.Name)
    )
    return classes, instances


def _is_cuda_method(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "cuda"


def _def_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """The lines a definition's finding may be on: its decorators' and its ``def``'s."""
    return set(range(min([node.lineno, *(d.lineno for d in node.decorator_list)]), node.lineno + 1))


def _binds(cls: ast.ClassDef, name: str) -> bool:
    """Whether the class body defines ``name`` (a method, or an assignment)."""
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
            return True
        targets = (
            item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _npu_alias(cls: ast.ClassDef) -> bool:
    """Whether the class body has ``npu = cuda`` (NPU113's alias)."""
    return any(
        isinstance(item, ast.Assign)
        and [t.id for t in item.targets if isinstance(t, ast.Name)] == ["npu"]
        and isinstance(item.value, ast.Name)
        and item.value.id == "cuda"
        for item in cls.body
    )


NPU_ALIAS = "npu = cuda  # (ascend-port NPU113: the calls renamed to .npu() reach this class's cuda())"


def _add_npu_aliases(text: str, tree: ast.Module, classes: set[str]) -> str:
    """``text`` with ``npu = cuda`` after the ``cuda`` method of each class named in ``classes`` that has no
    ``npu`` of its own."""
    lines = python_lines(text)
    at: list[tuple[int, str]] = []  # (index of the line after the method, its indent)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in classes and not _binds(node, "npu"):
            for item in node.body:
                if _is_cuda_method(item) and item.end_lineno is not None:
                    indent = lines[item.lineno - 1][: item.col_offset]
                    at.append((item.end_lineno, indent))
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    for end, indent in sorted(at, reverse=True):
        if not lines[end - 1].endswith(("\n", "\r")):
            lines[end - 1] += newline
        lines.insert(end, newline + indent + NPU_ALIAS + newline)
    return "".join(lines)


class MethodRules(TorchCudaRules):
    """NPU113, NPU114: a class's own ``cuda()`` (the calls NPU101 renames reach it through ``npu = cuda``)."""

    def _user_cuda(self) -> tuple[frozenset[str], frozenset[str]]:
        """(the module's classes that define ``cuda``, the names bound to an instance of one), read once per file."""
        return self.ctx.fact(user_cuda_classes)

    def _reaches_user_cuda(self, receiver: cst.BaseExpression, call: cst.Call) -> bool:
        classes, instances = self._user_cuda()
        if not classes:
            return False
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name):
            return receiver.func.value in classes  # Batch(...).cuda()
        if not isinstance(receiver, cst.Name):
            return False
        if receiver.value in instances:
            return True
        definitions = self._definitions()
        if receiver.value != "self" or definitions is None:
            return False
        around = definitions.around(self.ctx.line_of(call))
        return bool(around) and around[-1][1] is not None and around[-1][1].name in classes

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value != "cuda":
            return
        definitions = self._definitions()
        around = definitions.around(self.ctx.line_of(node.body)) if definitions is not None else []
        cls = around[-1][1] if around and around[-1][0].name == "cuda" else None
        if cls is None or _npu_alias(cls):
            return  # (ported before: the alias is there)
        if _binds(cls, "npu"):
            self.todo(
                USER_NPU_METHOD,
                node,
                f"{cls.name}.cuda() is this class's own method and the class has its own npu(): calls on objects "
                "of unknown type are renamed to .npu(), which reaches npu(), not cuda(): check them",
            )
        else:  # the alias itself is written by finish(), once the whole module is ported
            self.fix(USER_CUDA_METHOD, node, node, f"{cls.name}.cuda(): `npu = cuda` added for the calls renamed")

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        found = {f.line: i for i, f in enumerate(ctx.findings) if f.rule is USER_CUDA_METHOD and f.kind == "rewrite"}
        original = ctx.module() if found else None
        if original is None:
            return text
        classes: set[str] = set()
        for cls_node in ctx.facts().statements(ast.ClassDef):
            for item in cls_node.body:
                if not _is_cuda_method(item) or item.end_lineno is None:
                    continue
                line = next((n for n in sorted(_def_lines(item)) if n in found), None)
                if line is None:
                    continue
                classes.add(cls_node.name)
                # The finding goes where the alias does (before the line after the method), so the reports give that
                # edit its rule.
                i = found[line]
                ctx.findings[i] = dataclasses.replace(ctx.findings[i], line=item.end_lineno + 1)
        return _add_npu_aliases(text, tree(), classes)

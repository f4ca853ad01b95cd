"""The precision rules' common ground (rules/precision/__init__.py): where both transformers are (the enclosing
functions, classes and statements, which say whether this is a rotary table) and the helpers several rules use."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import libcst as cst

from ascend_port.python.transformer import PortTransformer

# --- tables ------------------------------------------------------------------------------------------------------

FP64_DTYPES = {
    "torch.float64": "float32",
    "torch.double": "float32",
    "torch.complex128": "complex64",
    "torch.cdouble": "complex64",
}
# The names of rotary tables, and of the sinusoidal timestep embeddings built the same way (Wan's
# sinusoidal_embedding_1d, diffusers' get_timestep_embedding): NPU302 lowers their double precision.
ROTARY = re.compile(r"(?i:rotary|freqs?_cis|inv_freq|sinusoid|timestep_embedding)|RoPE|Rope|ROPE|(?:^|_)rope(?:_|s?$)")


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def _is_method(call: cst.BaseExpression, name: str, resolve: Callable) -> bool:
    """``<value>.name(...)`` on a value (not a module function reached through an import)."""
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == name
        and resolve(call.func) is None
    )


def _walk(node: cst.CSTNode, ancestors: tuple[cst.CSTNode, ...] = ()) -> Iterator[tuple[cst.CSTNode, tuple]]:
    """Every node under ``node`` with its ancestors, skipping names that are not references (``.attr``, keywords).
    In pre-order, with a stack: nested generators pass every node through each level above it."""
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(node, ancestors)]
    while stack:
        node, ancestors = stack.pop()
        yield node, ancestors
        inner = (*ancestors, node)
        if isinstance(node, cst.Attribute):
            stack.append((node.value, inner))
            continue
        keyword = node.keyword if isinstance(node, cst.Arg) else None
        stack.extend((child, inner) for child in reversed(node.children) if child is not keyword or keyword is None)


class PrecisionRules(PortTransformer):
    """What both precision transformers share: where they are (the enclosing functions, classes and assignment
    targets, which say whether this is a rotary table)."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._rotary: list[bool] = []  # one entry per enclosing def, class and simple statement
        self._functions: list[str] = []
        self._classes: list[cst.ClassDef] = []
        self._lines: list[cst.SimpleStatementLine] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node.name.value)
        self._rotary.append(bool(ROTARY.search(node.name.value)))

    def leave_FunctionDef(self, original, updated):
        self._functions.pop()
        self._rotary.pop()
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._rotary.append(bool(ROTARY.search(node.name.value)))
        self._classes.append(node)

    def leave_ClassDef(self, original, updated):
        self._rotary.pop()
        self._classes.pop()
        return updated

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._lines.append(node)
        targets = []
        for small in node.body:
            if isinstance(small, cst.Assign):
                targets += [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets.append(small.target)
        names = [
            t.value if isinstance(t, cst.Name) else t.attr.value
            for t in targets
            if isinstance(t, (cst.Name, cst.Attribute))
        ]
        self._rotary.append(any(ROTARY.search(n) for n in names))

    def leave_SimpleStatementLine(self, original, updated):
        self._lines.pop()
        self._rotary.pop()
        return updated

    def _fp64_dtype(self, node: cst.BaseExpression) -> str | None:
        """The float32/complex64 name for a float64/complex128 dtype expression, else None."""
        return FP64_DTYPES.get(self.ctx.imports.resolve(node) or "") if isinstance(node, cst.Attribute) else None

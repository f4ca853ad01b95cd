"""The distributed rules' common ground (rules/distributed/__init__.py): the state of every layer, the marks
every layer reads (docstrings, attribute, keyword and parameter names, imports), and the helpers that read
string literals and assignment targets."""

from __future__ import annotations

import libcst as cst

from ascend_port.python.transformer import PortTransformer


def _literal(node: cst.SimpleString) -> object:
    try:
        return node.evaluated_value
    except Exception:
        return None


def _string_leaves(expr: cst.BaseExpression, containers: bool) -> list[cst.SimpleString]:
    """The string literals an expression can evaluate to (through conditionals and, if allowed, containers)."""
    if isinstance(expr, cst.SimpleString):
        return [expr]
    if isinstance(expr, cst.IfExp):
        return _string_leaves(expr.body, containers) + _string_leaves(expr.orelse, containers)
    if isinstance(expr, cst.BooleanOperation):
        return _string_leaves(expr.left, containers) + _string_leaves(expr.right, containers)
    if containers and isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return [s for e in expr.elements for s in _string_leaves(e.value, False)]
    return []


def _target_name(target: cst.BaseExpression) -> str:
    """The name an assignment target or operand stands for (``x``, ``self.x``, ``cfg["x"]``), else ``""``."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute):
        return target.attr.value
    key = _subscript_key(target)
    return str(_literal(key)) if key is not None else ""


def _subscript_key(target: cst.BaseExpression) -> cst.SimpleString | None:
    if isinstance(target, cst.Subscript) and len(target.slice) == 1:
        index = target.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return index.value
    return None


class DistributedRules(PortTransformer):
    """The state of every distributed layer, and the marks every layer reads."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # Where each backend string stands, marked top-down so leave_SimpleString knows which rule it falls under.
        self._argument_strings: set[int] = set()
        self._comparison_strings: set[int] = set()
        self._kept_strings: set[int] = set()  # "nccl" in a test that already lists "hccl"
        self._docstrings: set[int] = set()
        self._non_references: set[int] = set()  # Name nodes that are attribute, keyword or parameter names
        self._in_import = False
        # The value each variable-name string is set to (env[K] = v, setdefault(K, v), {K: v}); rewritten values.
        self._env_values: dict[int, cst.BaseExpression] = {}
        self._value_rewrites: dict[int, cst.BaseExpression] = {}
        self._unset_names: set[int] = set()  # env.pop("NCCL_X"), del env["NCCL_X"], os.unsetenv("NCCL_X")
        # per enclosing function: the names that always hold a device index, and those that may (read from the
        # function when a call first asks: most functions have no call that takes a device)
        self._index_stack: list[tuple[frozenset[str], frozenset[str]] | cst.FunctionDef] = []

    # --- marking, top-down ----------------------------------------------------------------------------------

    def visit_Expr(self, node: cst.Expr) -> None:
        self._docstrings.add(id(node.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._non_references.add(id(node.attr))

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import = True

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self._in_import = False
        return updated

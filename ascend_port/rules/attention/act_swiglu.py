"""SwiGLU (glu.SWIGLU) through a module's configured activation: transformers' MLPs compute
`self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))` with `self.act_fn = ACT2FN[config.hidden_act]`,
SiLU for Llama, Mistral, Qwen and most of their kin, but known only at run time. The fused op is written under a test
of the activation's type (and of the device, in a project that keeps its other devices); the original expression
stays for every other activation.

npu_swiglu takes the concatenation of the two halves and activates the first: `torch.cat((gate, up), dim=-1)`, the
form of LLaMA-Factory's NPU kernel for transformers' MLPs. The two factors must be projections of one tensor by two
of the module's layers (`self.gate_proj(x)`, `self.up_proj(x)`): then they have one shape, and the concatenation and
its halves are exact. Any other factor (a name, which may broadcast) is left alone.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from ascend_port.python.calls import code_of
from ascend_port.python.device_facts import resolve_ast
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import ImportIndex
from ascend_port.python.scopes import FUNCTIONS, enclosing
from ascend_port.rules.attention.fused_ops import _blocks, _plain_reference, npu_test, silu_test
from ascend_port.rules.attention.glu import SWIGLU, GluMixin, OuterFunctionTransformer, _products, _ReplaceCode

# the calls whose value may be SiLU, chosen by a configuration: transformers' table and its function, torch's module
ACTIVATION_FACTORIES = ("get_activation", "torch.nn.SiLU")


def act_swiglu_function(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The scope of `self.act(self.gate(x)) * self.up(x)`: the innermost function around it."""
    return enclosing(path, *FUNCTIONS)


def activation_attributes(facts: ModuleFacts) -> list[tuple[int, int, str, bool]]:
    """The attributes that the methods of the module's classes assign to `self`, as (the class's first line, its last
    line, the attribute, whether every value assigned may be SiLU: `ACT2FN[name]`, `get_activation(name)`,
    `nn.SiLU()`, a parameter or a call of one)."""
    found: list[tuple[int, int, str, bool]] = []
    for cls in facts.statements(ast.ClassDef):
        values: dict[str, bool] = {}
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
            for node in ast.walk(fn):
                for attr, value in _self_assignments(node):
                    values[attr] = values.get(attr, True) and _may_be_silu(value, params, facts)
        end = cls.end_lineno or cls.lineno
        found.extend((cls.lineno, end, attr, may) for attr, may in values.items())
    return found


def _self_assignments(node: ast.AST) -> list[tuple[str, ast.expr]]:
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    else:
        return []
    return [
        (t.attr, value)
        for t in targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    ]


def _may_be_silu(value: ast.expr, params: set[str], facts: ModuleFacts) -> bool:
    if isinstance(value, ast.Subscript):
        return True  # ACT2FN[config.hidden_act] (a table of activations)
    if isinstance(value, ast.Name):
        return value.id in params  # an activation passed in
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Name) and value.func.id in params:
        return True  # `act_layer()`: a class passed in
    name = resolve_ast(value.func, facts.imports.aliases) or ""
    return any(name == f or name.endswith(f".{f}") for f in ACTIVATION_FACTORIES)


@dataclass(frozen=True)
class _ActSwiglu:
    statement: cst.SimpleStatementLine  # the original statement that holds the product
    product: str  # code of `self.act(self.gate(x)) * self.up(x)`
    activation: str  # `self.act`
    gate: str  # `self.gate(x)`
    up: str  # `self.up(x)`
    tensor: str  # x (what tells the device)


def find_act_swiglus(owner: GluMixin, fn: cst.FunctionDef) -> list[_ActSwiglu]:
    """The statements of ``fn`` (not in nested functions, nor in the other devices' branch of a dispatch) with one
    product of a SiLU-able activation of a projection and another projection of the same tensor."""
    line = owner.ctx.line_of(fn)
    classes = [
        (first, attr, may) for first, last, attr, may in owner.ctx.fact(activation_attributes) if first <= line <= last
    ]
    innermost = max((first for first, _, _ in classes), default=None)
    assigned = {attr: may for first, attr, may in classes if first == innermost}
    found = []
    for block in _blocks(fn.body):
        for statement in block:
            if isinstance(statement, cst.SimpleStatementLine):
                hits = [hit for node, a, b in _products(statement) if (hit := _match(node, a, b, assigned))]
                if len(hits) == 1:
                    found.append(_ActSwiglu(statement, *hits[0]))
    return found


def _match(
    node: cst.BinaryOperation, gate: cst.BaseExpression, up: cst.BaseExpression, assigned: dict[str, bool]
) -> tuple[str, str, str, str, str] | None:
    """(product, activation, gate, up, tensor) for `self.act(self.gate(x)) * self.up(x)`, else None. ``assigned``:
    the class's attributes and whether they may be SiLU (one it does not assign may be anything)."""
    activation = _self_call(gate)
    if activation is None or not assigned.get(activation[0].attr.value, True):
        return None
    projection, other = _self_call(activation[1]), _self_call(up)
    if projection is None or other is None or projection[0].attr.value == other[0].attr.value:
        return None
    tensor = projection[1]
    if not _plain_reference(tensor) or code_of(tensor) != code_of(other[1]):
        return None
    return code_of(node), code_of(activation[0]), code_of(activation[1]), code_of(up), code_of(tensor).strip()


def _self_call(node: cst.BaseExpression) -> tuple[cst.Attribute, cst.BaseExpression] | None:
    """(`self.m`, a) for `self.m(a)`, one positional argument."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and len(node.args) == 1):
        return None
    receiver, (arg,) = node.func.value, node.args
    if not (isinstance(receiver, cst.Name) and receiver.value == "self") or arg.keyword is not None or arg.star:
        return None
    return node.func, arg.value


class ActSwigluApplier(OuterFunctionTransformer):
    """Each found statement, in the updated function, as `if <device and SiLU>: <fused> else: <statement>`."""

    def __init__(self, owner: GluMixin, found: list[_ActSwiglu], torch: str) -> None:
        super().__init__()
        self.owner, self.torch = owner, torch
        self.found = {code_of(m.statement): m for m in found}

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        match = self.found.get(code_of(updated))
        if match is None:
            return updated
        npu = self.owner.torch_npu()
        cat = f"{self.torch}.cat(({match.gate}, {match.up}), dim=-1)"
        fused = updated.visit(_ReplaceCode(match.product, cst.parse_expression(f"{npu}.npu_swiglu({cat}, dim=-1)")))
        if not isinstance(fused, cst.SimpleStatementLine):
            return updated  # (a statement line with an expression replaced by an expression is one)
        silu = silu_test(match.activation, self.torch)
        if self.owner.dispatches():
            test = cst.parse_expression(f"{code_of(npu_test(match.tensor))} and ({silu})")
        else:
            test = cst.parse_expression(silu)  # (an NPU-only port still runs the other activations)
        ported = cst.If(
            test=test,
            body=cst.IndentedBlock(body=[fused.with_changes(leading_lines=[])]),
            orelse=cst.Else(body=cst.IndentedBlock(body=[updated.with_changes(leading_lines=[])])),
            leading_lines=updated.leading_lines,
        )
        message = f"{match.activation}(gate) * up -> torch_npu.npu_swiglu when {match.activation} is SiLU"
        return self.owner.fix(SWIGLU, match.statement, ported, message, torch_npu_name=True) or updated


class ActSwigluMixin(GluMixin):
    """The SwiGLUs through a configured activation in NormTransformer, read in the original function and written in
    the updated one (after the chunked SwiGLUs and GEGLUs)."""

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        result = super().leave_FunctionDef(original, updated)
        torch = self.ctx.imports.local_name_for("torch")  # (torch.cat and torch.nn.SiLU are spelled with it)
        found = find_act_swiglus(self, original) if torch and isinstance(result, cst.FunctionDef) else []
        return result.visit(ActSwigluApplier(self, found, torch)) if found and torch else result

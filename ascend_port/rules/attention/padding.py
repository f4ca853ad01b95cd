"""NPU410: flash-attn's pure-PyTorch padding utilities (`flash_attn.bert_padding`) -> local helpers.

`pad_input`, `unpad_input`, `index_first_axis` and `index_put_first_axis` are plain indexing around the varlen
kernels, but they live in the flash_attn package, which cannot be installed on an NPU host: importing them fails
there and takes the ported varlen calls around them (NPU401) down too. Their calls become calls of small helpers
with the same signature that ascend-port writes into the module (helpers.py inserts them, as for NPU400); the import
then goes away with its last use (NPU408).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.calls import literal
from ascend_port.python.scopes import Trigger
from ascend_port.python.transformer import PortContext, PortTransformer
from ascend_port.rules.attention.helper_names import PADDING_HELPERS
from ascend_port.rules.attention.helpers import insert_helpers

PADDING = rule(
    "NPU410",
    "flash-attn-padding-utils",
    Confidence.HIGH,
    "`flash_attn.bert_padding` (`pad_input`, `unpad_input`, `index_first_axis`, ...) -> local pure-PyTorch helpers.",
    """
    Each call becomes a call of a helper with the same parameters, written once into the module: `_npu_unpad_input`
    returns flash-attn >= 2.7's five values (tokens, indices, cu_seqlens, max_seqlen, used_seqlens), and a call whose
    result is unpacked into four names (flash-attn < 2.7) gets `[:4]`; a result used otherwise (kept whole, indexed
    past 3) is left on flash-attn, and NPU409 marks the import. `index_first_axis(x, indices)` is `x[indices]`,
    `index_put_first_axis(values, indices, n)` scatters into zeros of n rows, `pad_input(x, indices, batch, seqlen)`
    scatters and reshapes to (batch, seqlen, ...); `IndexFirstAxis.apply` and `IndexPutFirstAxis.apply` are the
    same functions. Autograd goes through plain indexing. `unpad_input_for_concatenated_sequences` is not ported.

    Before:
        import torch
        from flash_attn.bert_padding import pad_input, unpad_input


        def forward(x, mask):
            x_unpad, indices, cu_seqlens, max_s = unpad_input(x, mask)
            return pad_input(x_unpad * 2, indices, x.shape[0], x.shape[1])
    After:
        import torch


        def _npu_unpad_input(hidden_states, attention_mask, unused_mask=None):
            ...


        def _npu_pad_input(hidden_states, indices, batch, seqlen):
            ...


        def forward(x, mask):
            x_unpad, indices, cu_seqlens, max_s = _npu_unpad_input(x, mask)[:4]
            return _npu_pad_input(x_unpad * 2, indices, x.shape[0], x.shape[1])
    """,
)

MODULE = "flash_attn.bert_padding"
# flash-attn's name -> the helper that replaces it (calls of `Class.apply` for the autograd classes).
FUNCTIONS = {
    "pad_input": "_npu_pad_input",
    "unpad_input": "_npu_unpad_input",
    "index_first_axis": "_npu_index_first_axis",
    "index_put_first_axis": "_npu_index_put_first_axis",
    "IndexFirstAxis.apply": "_npu_index_first_axis",
    "IndexPutFirstAxis.apply": "_npu_index_put_first_axis",
}
# What may be imported from the module once every use is a ported call (names and the `.apply` of the classes).
PORTABLE = {f"{MODULE}.{name}" for name in FUNCTIONS} | {f"{MODULE}.IndexFirstAxis", f"{MODULE}.IndexPutFirstAxis"}
TRIGGER = r"pad_input|index_(?:put_)?first_axis|Index(?:Put)?FirstAxis|bert_padding"
TRIGGER_RE = re.compile(TRIGGER)


def _unpad_use(parent: object, call: object) -> str | None:
    """How a call of unpad_input is used, from its parent node (LibCST's or ast's): "4" (unpacked into four names:
    flash-attn < 2.7), "any" (a use the same under both releases: five names, a starred unpacking, an index below 4
    or a slice ending at 4 at most), or None (anything else: kept whole, passed on, indexed past 3)."""
    targets: list | None = None
    if isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1:
        cst_target = parent.targets[0].target
        targets = list(cst_target.elements) if isinstance(cst_target, (cst.Tuple, cst.List)) else None
        starred = targets is not None and any(isinstance(e, cst.StarredElement) for e in targets)
    elif isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1:
        ast_target = parent.targets[0]
        targets = list(ast_target.elts) if isinstance(ast_target, (ast.Tuple, ast.List)) else None
        starred = targets is not None and any(isinstance(e, ast.Starred) for e in targets)
    if targets is not None:
        return "any" if starred or len(targets) == 5 else "4" if len(targets) == 4 else None
    return "any" if _small_subscript(parent, call) else None


def _small_subscript(parent: object, call: object) -> bool:
    """`call[i]` with a literal 0 <= i < 4, or `call[:n]` with n <= 4 (ast or LibCST)."""
    if isinstance(parent, ast.Subscript) and parent.value is call:
        index = parent.slice
        if isinstance(index, ast.Slice):
            upper = index.upper.value if isinstance(index.upper, ast.Constant) else None
            return index.lower is None and index.step is None and _small(upper, 4)
        return isinstance(index, ast.Constant) and _small(index.value, 3)
    if isinstance(parent, cst.Subscript) and parent.value is call and len(parent.slice) == 1:
        element = parent.slice[0].slice
        if isinstance(element, cst.Slice):
            bound = literal(element.upper) if element.upper is not None else None
            return element.lower is None and element.step is None and _small(bound, 4)
        return isinstance(element, cst.Index) and _small(literal(element.value), 3)
    return False


def _small(value: object, most: int) -> bool:
    return type(value) is int and 0 <= value <= most


def ast_call_ported(qualified: str, call: ast.AST | None, parent: ast.AST | None) -> bool:
    """Whether NPU410 ports this call of ``qualified`` (module_uses in attention.py asks, for NPU409's TODO)."""
    if qualified == f"{MODULE}.unpad_input":
        return _unpad_use(parent, call) is not None
    return qualified in PORTABLE


def _passes_unused_mask(call: cst.Call) -> bool:
    return len([a for a in call.args if a.keyword is None and not a.star]) >= 3 or any(
        a.keyword is not None and a.keyword.value == "unused_mask" for a in call.args
    )


class PaddingTransformer(PortTransformer):
    """NPU410: calls of flash_attn.bert_padding's functions -> the helpers; ``finish`` writes the helpers."""

    TRIGGERS = (Trigger(TRIGGER, imports=("flash_attn",)),)  # (the calls it ports resolve to flash_attn's)
    RULES = (PADDING,)

    def __init__(self, ctx: PortContext) -> None:
        super().__init__(ctx)
        self._parents: dict[int, cst.CSTNode] = {}  # id of a call -> the statement or subscript around it

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        if not ctx.selection.enabled(PADDING):
            return text
        return insert_helpers(text, tree, "torch_npu", {name: f"rule {PADDING.id}" for name in PADDING_HELPERS})

    def visit_Assign(self, node: cst.Assign) -> None:
        self._parents[id(node.value)] = node

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._parents[id(node.value)] = node

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.imports.resolve(original.func)
        if qualified is None or not qualified.startswith(f"{MODULE}."):
            return updated
        name = qualified[len(MODULE) + 1 :]
        helper = FUNCTIONS.get(name)
        if helper is None:
            return updated
        replacement: cst.BaseExpression = updated.with_changes(func=cst.Name(helper))
        detail = ""
        if name == "unpad_input":
            use = _unpad_use(self._parents.get(id(original)), original)
            if use is None or (use == "4" and _passes_unused_mask(original)):
                return updated  # which release's result it expects is unknown: NPU409 marks the import
            if use == "4":  # flash-attn < 2.7 returns four values, the helper five
                upper = cst.Slice(lower=None, upper=cst.Integer("4"))
                replacement = cst.Subscript(value=replacement, slice=[cst.SubscriptElement(slice=upper)])
                detail = ", its first four values as flash-attn < 2.7"
        message = f"{name} -> {helper} (local pure-PyTorch helper{detail})"
        return self.fix(PADDING, original, replacement, message) or updated

"""NPU428: a softmax over the last axis of scores just masked with `masked_fill(mask, <very negative>)` gets a TODO
naming torch_npu.npu_scaled_masked_softmax, whose shape limits the code cannot show.

Recognised by meaning, in a function that multiplies matrices (attention): `softmax(s.masked_fill(m, v), dim=-1)`,
or `s = s.masked_fill(m, v)` / `s.masked_fill_(m, v)` directly before a statement with `softmax(s, dim=-1)`
(`s.float()` too), where v is -inf or the dtype's minimum or a literal at most -1e4: a mask, not another use of
masked_fill.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import Finding
from ascend_port.python.calls import code_of
from ascend_port.rules.attention.fused_ops import _blocks

if TYPE_CHECKING:
    from collections.abc import Callable

MASKED_SOFTMAX = rule(
    "NPU428",
    "masked-softmax",
    Confidence.LOW,
    "`softmax(scores.masked_fill(mask, -inf), dim=-1)`: reported as fusable into `torch_npu.npu_scaled_masked_softmax` "
    "(information, no TODO: the code runs on the NPU as it is).",
    """
    npu_scaled_masked_softmax(x, mask, scale=1.0) computes softmax(x * scale, masked where the boolean mask is
    True) over the last axis in one kernel; masked_fill's mask is boolean with the same polarity (True: filled),
    so the mask passes as it is. The rewrite is not made: the op takes only an x whose last two axes are 32 to
    4096 long and multiples of 32 (torch_npu's docs), which the code does not show, and it fills -10000 (Ascend's
    own reference of the op), so a fully masked row gives a uniform row where a fill of -inf gives NaN. The
    unfused code runs on the NPU as it is, so this rule only reports (the performance section of the reports lists
    it); it writes neither code nor a TODO. Scores
    cast for the softmax (`s.float()`) are recognised too, in a function that multiplies matrices (attention: a
    sampler's masked logits over a vocabulary are not the op's shapes); a softmax over another axis, with a `dtype`, or of an
    additive (float) mask, and a fill that is not a mask's (0, a name) are left alone, without a TODO. Where the
    target release lacks the op, nothing is said.

    Before:
        import torch.nn.functional as F


        def attend(scores, mask, value):
            scores = scores.masked_fill(mask, float("-inf"))
            return F.softmax(scores, dim=-1) @ value
    After:
        import torch.nn.functional as F


        def attend(scores, mask, value):
            scores = scores.masked_fill(mask, float("-inf"))
            return F.softmax(scores, dim=-1) @ value
    """,
    informational=True,
)

SOFTMAX = {"torch.softmax", "torch.nn.functional.softmax", "torch.Tensor.softmax"}
# fills that mask: -inf (float("-inf"), -math.inf, -np.inf, -torch.inf) or the dtype's minimum
INFINITE = {'float("-inf")', "float('-inf')", '-float("inf")', "-float('inf')"}


class MaskedSoftmaxMixin:
    """NPU428 in NormTransformer: the finding on a softmax of masked scores (see the module)."""

    ctx: Any
    if TYPE_CHECKING:  # (PortTransformer's, after this class in NormTransformer's bases)
        enabled: Callable[..., bool]

    def note_masked_softmax(self, original: cst.Call) -> None:
        """The finding, if ``original`` (a call being left: NormTransformer.leave_Call) is a softmax of masked
        scores."""
        scores = self._softmax_input(original)
        if scores is None or not self._multiplies_matrices():
            return
        masked = _masked_fill(scores, self._fill)
        if masked is None and isinstance(scores, cst.Name):
            masked = self._masked_before(scores.value)
        version = npu_api.target_version(self.ctx.options)
        if masked is None or "npu_scaled_masked_softmax" not in npu_api.load_release(version).ops:
            return
        x, mask, fill = masked
        infinite = "inf" in fill.replace("finfo", "")  # (-inf; a dtype's minimum makes a uniform row, as -10000)
        nan = "; a fully masked row: NaN here, uniform there" if infinite else ""
        if not self.enabled(MASKED_SOFTMAX):
            return
        self.ctx.findings.append(
            Finding(
                MASKED_SOFTMAX,
                self.ctx.line_of(original),
                f"masked softmax: torch_npu.npu_scaled_masked_softmax({x}, {mask}) computes this in one kernel (the "
                f"mask as it is: True masks); not rewritten: the op takes only scores whose last two axes are 32 to "
                f"4096 long and multiples of 32 (not known here), and fills -10000 where this code fills {fill}{nan}",
                applied=False,
            )
        )

    def _multiplies_matrices(self) -> bool:
        """Does the function being visited multiply matrices (`@`, matmul, bmm, einsum): attention, whose scores
        the op is made for (a sampler's masked logits over a vocabulary are not)?"""
        functions = getattr(self, "_functions", None) or [None]  # (RotaryMixin's: the functions being visited)
        fn = functions[-1]
        if not isinstance(fn, cst.FunctionDef):
            return False
        finder = _MatrixProducts()
        fn.visit(finder)
        return finder.found

    def _softmax_input(self, call: cst.Call) -> cst.BaseExpression | None:
        """The scores of `F.softmax(s, dim=-1)` / `torch.softmax(s, -1)` / `s.softmax(-1)`, `.float()` taken off;
        None for any other call, another axis or more arguments (a `dtype`)."""
        resolve = self.ctx.imports.resolve
        args = list(call.args)
        if any(arg.star for arg in args):
            return None
        if resolve(call.func) in SOFTMAX and args and args[0].keyword is None:
            scores, args = args[0].value, args[1:]
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "softmax" and resolve(call.func) is None:
            scores = call.func.value
        else:
            return None
        if len(args) != 1 or (args[0].keyword is not None and args[0].keyword.value != "dim"):
            return None
        if code_of(args[0].value).strip() != "-1":
            return None
        while (
            isinstance(scores, cst.Call)
            and isinstance(scores.func, cst.Attribute)
            and scores.func.attr.value == "float"
            and not scores.args
        ):
            scores = scores.func.value
        return scores

    def _fill(self, value: cst.BaseExpression) -> bool:
        """Does ``value`` mask: -inf, the dtype's minimum (`torch.finfo(t.dtype).min`), a literal at most -1e4?"""
        code = code_of(value).strip().replace(" ", "")
        if code in INFINITE or code.endswith(".min") and "finfo(" in code:
            return True
        if code.startswith("-") and self.ctx.imports.resolve(cst.parse_expression(code[1:])) in (
            "math.inf",
            "numpy.inf",
            "torch.inf",
        ):
            return True
        if code.startswith("torch.tensor(") and code.endswith(".min)") and "finfo(" in code:
            return True
        try:
            number = ast.literal_eval(code)
        except (ValueError, SyntaxError):
            return False
        return isinstance(number, (int, float)) and not isinstance(number, bool) and number <= -1e4

    def _masked_before(self, name: str) -> tuple[str, str, str] | None:
        """(x, mask, fill) of `name = name.masked_fill(m, v)` or `name.masked_fill_(m, v)` as the statement right
        before the one being visited, in the same block of the function being visited."""
        functions = getattr(self, "_functions", None) or [None]  # (RotaryMixin's: the functions being visited)
        fn = functions[-1]
        if not isinstance(fn, cst.FunctionDef):
            return None
        enclosing = {id(s) for s in self.ctx.enclosing_statements()}
        for block in _blocks(fn.body):
            at = next((i for i, statement in enumerate(block) if id(statement) in enclosing), None)
            if not at:  # (None, or the first statement of its block)
                continue
            before = block[at - 1]
            if not (isinstance(before, cst.SimpleStatementLine) and len(before.body) == 1):
                return None
            small = before.body[0]
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name) and target.value == name:
                    found = _masked_fill(small.value, self._fill, "masked_fill")
                    return found if found is not None and found[0] == name else None
            if isinstance(small, cst.Expr):
                found = _masked_fill(small.value, self._fill, "masked_fill_")
                return found if found is not None and found[0] == name else None
            return None
        return None


def _masked_fill(node: cst.BaseExpression, fills, method: str = "masked_fill") -> tuple[str, str, str] | None:
    """(x, mask, fill) of `x.masked_fill(mask, fill)` with a masking fill, x a name; else None."""
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == method
        and isinstance(node.func.value, cst.Name)
        and len(node.args) == 2
        and all(arg.keyword is None and not arg.star for arg in node.args)
        and fills(node.args[1].value)
    ):
        return None
    return node.func.value.value, code_of(node.args[0].value).strip(), code_of(node.args[1].value).strip()


class _MatrixProducts(cst.CSTVisitor):
    """Finds `a @ b` and calls of matmul, bmm, baddbmm, einsum."""

    def __init__(self) -> None:
        self.found = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.found |= isinstance(node.operator, cst.MatrixMultiply)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        self.found |= name in ("matmul", "bmm", "baddbmm", "einsum")

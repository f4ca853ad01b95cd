"""NPU428: a softmax over the last axis of scores just masked with `masked_fill(mask, <very negative>)` gets a TODO
naming torch_npu.npu_scaled_masked_softmax, whose shape limits the code cannot show.

Recognised by meaning, in a function that multiplies matrices (attention): `softmax(s.masked_fill(m, v), dim=-1)`,
or `s = s.masked_fill(m, v)` / `s.masked_fill_(m, v)` directly before a statement with `softmax(s, dim=-1)`
(`s.float()` too), where v is -inf or the dtype's minimum or a literal at most -1e4: a mask, not another use of
masked_fill.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, cast

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import Finding
from ascend_port.python.calls import code_of
from ascend_port.python.definitions import bound_name, insert_definitions
from ascend_port.rules.attention.fused_ops import _blocks, _plain_reference

if TYPE_CHECKING:
    from collections.abc import Callable

MASKED_SOFTMAX = rule(
    "NPU428",
    "masked-softmax",
    Confidence.MEDIUM,
    "`softmax(scores.masked_fill(mask, -10000 or the dtype's minimum), dim=-1)` -> "
    "`torch_npu.npu_scaled_masked_softmax(scores, mask)` where the shapes fit at run time (a fill of -inf: reported).",
    '''
    npu_scaled_masked_softmax(x, mask, scale=1.0) computes softmax(x * scale, masked where the boolean mask is
    True) over the last axis in one kernel, filling the masked positions with -10000 (Ascend's reference of the op,
    and its kernel: x * (1 - mask) + mask * -10000), in float32, returned in x's dtype (torch_npu >= 2.1; earlier
    kernels returned float16). masked_fill's mask is boolean with the same polarity (True: filled), so the mask
    passes as it is. A fill of -10000 is the op's own; the dtype's minimum or another literal at most -1e4 gives
    the same rows wherever a row keeps a score above about -9980 (a masked key's weight exp(-10000 - max) is then
    below float32's rounding), and a fully masked row is uniform in both. Where the scores were masked in the
    statement before (`s = s.masked_fill(m, v)`, `s.masked_fill_(m, v)`), the op masks them again, which changes
    nothing. The rewrite runs the op only where it takes the tensors, tested at run time: a 4-D float16, bfloat16
    or float32 x whose last two axes are 32 to 4096 long and multiples of 32 (torch_npu's docs), a 4-D mask as
    long as x in those two axes (a padding mask broadcast over the queries, (b, 1, 1, k), takes the original code:
    the kernel reads the mask's rows in full), and, in a project that keeps its other devices (the default), an
    NPU x; anywhere else the original code runs. The test is a function the port writes once in the module,
    `_npu_masked_softmax_fits(scores, mask)`, in front of its first use. It reads the mask's shape on a name (or
    an attribute of one): the mask itself or the one tensor of an elementwise mask (`~m`, `m == 0`,
    `(1 - m).bool()`), so the mask is computed once. Scores cast for the softmax (`s.float()`) go to the op cast,
    so the result keeps its dtype.

    Medium confidence: scores that hold -inf where they are masked (masked before by other code) would give NaN
    in the kernel (-inf * 0). A fill of -inf is reported, not rewritten: a fully masked row is NaN there and
    uniform in the op (and an x already filled with -inf gives NaN). Recognised in a function that multiplies
    matrices (attention: a sampler's masked logits over a vocabulary are not the op's shapes); a softmax over
    another axis, with a `dtype`, or of an additive (float) mask, and a fill that is not a mask's (0, a name) are
    left alone. Where the target release lacks the op, nothing is said.

    Before:
        import torch
        import torch.nn.functional as F


        def attend(scores, mask, value):
            scores = scores.masked_fill(mask, -10000.0)
            return F.softmax(scores, dim=-1) @ value
    After:
        import torch
        try:
            import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
        except ImportError:
            pass
        import torch.nn.functional as F


        def _npu_masked_softmax_fits(scores, mask):
            """Whether torch_npu.npu_scaled_masked_softmax takes these scores and mask (written by ascend-port, rule
            NPU428): npu scores of a float dtype, 4-D, and a 4-D mask of their last two axes, each 32 to 4096 long
            and a multiple of 32."""
            return (
                scores.device.type == "npu"
                and scores.dtype in (torch.float16, torch.bfloat16, torch.float32)
                and scores.dim() == mask.dim() == 4
                and mask.shape[-2:] == scores.shape[-2:]
                and all(32 <= n <= 4096 and n % 32 == 0 for n in scores.shape[-2:])
            )


        def attend(scores, mask, value):
            scores = scores.masked_fill(mask, -10000.0)
            return (torch_npu.npu_scaled_masked_softmax(scores, mask) if _npu_masked_softmax_fits(scores, mask) else F.softmax(scores, dim=-1)) @ value
    Stays (a fill of -inf: a fully masked row is NaN here, uniform in the op):
        import torch
        import torch.nn.functional as F


        def attend(scores, mask, value):
            scores = scores.masked_fill(mask, float("-inf"))
            return F.softmax(scores, dim=-1) @ value
    ''',  # noqa: E501  (the After example: the rewrite's line)
    speeds_up=True,
    writes=("_npu_masked_softmax_fits",),  # (FITS, below)
)

MASKED_SOFTMAX_NOTE = rule(
    "NPU431",
    "masked-softmax-left",
    Confidence.LOW,
    "A masked softmax that npu_scaled_masked_softmax could compute but the port leaves: a fill of -inf, a mask "
    "whose shape the test cannot read (information, no TODO: the code runs on the NPU as it is).",
    """
    The softmax NPU428 recognises, left as it is: its fill is -inf (a fully masked row is NaN here and uniform in
    the op, which fills -10000), or its mask is an expression whose shape the run-time test cannot read without
    computing it a second time (`mask[None]`, `mask.unsqueeze(1)`), or the module does not import torch (the test names its dtypes). The
    unfused code runs on the NPU as it is; this rule only reports (the performance section of the reports lists
    it) and writes neither code nor a TODO. Where -inf only guards padding (no row is masked in full), a fill of
    torch.finfo(scores.dtype).min makes the softmax NPU428's.

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


FUSED_OP = "npu_scaled_masked_softmax"
# The run-time test of the op's shapes, dtypes (and device), written once in the module (insert_fits_test).
FITS = "_npu_masked_softmax_fits"
_FITS_SOURCE = '''\
def {name}(scores, mask):
    """Whether {torch_npu}.{op} takes these scores and mask (written by ascend-port, rule
    NPU428): {npu}scores of a float dtype, 4-D, and a 4-D mask of their last two axes, each {low} to {high} long
    and a multiple of 32."""
    return (
        {tests}
    )
'''
OP_FILL = -10000  # the op's fill (its kernel: x * (1 - mask) + mask * -10000)
AXIS = (32, 4096)  # the op's last two axes: 32 to 4096 long, multiples of 32 (torch_npu's docs)


class MaskedSoftmaxMixin:
    """NPU428/NPU431 in NormTransformer: a softmax of masked scores, fused or reported (see the module)."""

    ctx: Any
    if TYPE_CHECKING:  # (PortTransformer's and NormTransformer's, after this class in NormTransformer's bases)
        enabled: Callable[..., bool]
        fix: Callable[..., Any]
        torch_npu: Callable[[], str]
        dispatches: Callable[[], bool]
        _whole_value: Callable[[cst.BaseExpression], bool]

    def port_masked_softmax(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``updated``, or the op where ``original`` (a call being left: NormTransformer.leave_Call) is a softmax of
        masked scores that the op computes; a note where it could but is left."""
        if id(original) in getattr(self, "_for_others", ()):
            return updated  # (the original code of a softmax fused before: the other devices' path)
        found = self._softmax_input(original)
        if found is None or not self._multiplies_matrices():
            return updated
        scores, cast = found
        masked = _masked_fill(scores, self._fill)
        if masked is None and isinstance(scores, cst.Name):
            masked = self._masked_before(scores.value)
        version = npu_api.target_version(self.ctx.options)
        if masked is None or FUSED_OP not in npu_api.load_release(version).ops:
            return updated
        x, mask, fill = masked
        torch = self.ctx.imports.local_name_for("torch")
        why = self._left_because(mask, fill, torch)
        if why is not None:
            self._note(original, x, mask, why)
            return updated
        assert torch is not None  # (_left_because)
        return self._fused(original, updated, x + (".float()" if cast else ""), x, mask, torch, fill)

    def _left_because(self, mask: str, fill: str, torch: str | None) -> str | None:
        """Why the op is not written here, or None."""
        if "inf" in fill.replace("finfo", ""):
            return f"this code fills {fill}, the op -10000: a fully masked row is NaN here, uniform there"
        if _shaped_like(cst.parse_expression(mask)) is None:
            return f"the mask `{mask}` is computed here in a shape the test cannot read without computing it again"
        if torch is None:
            return "the module does not import torch (the test of the shapes names its dtypes)"
        return None

    def _note(self, original: cst.Call, x: str, mask: str, why: str) -> None:
        if not self.enabled(MASKED_SOFTMAX_NOTE):
            return
        message = (
            f"masked softmax: torch_npu.{FUSED_OP}({x}, {mask}) computes this in one kernel (the mask as it is: True "
            f"masks) where the last two axes are 32 to 4096 long and multiples of 32; not rewritten: {why}"
        )
        self.ctx.findings.append(Finding(MASKED_SOFTMAX_NOTE, self.ctx.line_of(original), message, applied=False))

    def _fused(
        self, original: cst.Call, updated: cst.Call, x: str, scores: str, mask: str, torch: str, fill: str
    ) -> cst.BaseExpression:
        """`op(x, mask) if <the op takes them> else <the softmax>`, in parentheses unless it is a whole value."""
        shaped = _shaped_like(cst.parse_expression(mask))  # (the mask's shape, read without computing it)
        call = cst.parse_expression(f"{self.torch_npu()}.{FUSED_OP}({x}, {mask})")
        whole = self._whole_value(original)
        replacement = cst.IfExp(
            test=cst.parse_expression(f"{FITS}({scores}, {shaped})"),
            body=call,
            orelse=updated.with_changes(lpar=[], rpar=[]),
            lpar=updated.lpar or ([] if whole else [cst.LeftParen()]),
            rpar=updated.rpar or ([] if whole else [cst.RightParen()]),
        )
        exact = _literal(fill) == OP_FILL
        detail = (
            "the op's fill" if exact else f"{fill} for the op's -10000: the same rows where a kept score is above -9980"
        )
        message = f"masked softmax -> torch_npu.{FUSED_OP}({x}, {mask}) where the shapes fit ({detail})"
        return self.fix(MASKED_SOFTMAX, original, replacement, message, torch_npu_name=True) or updated

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

    def _softmax_input(self, call: cst.Call) -> tuple[cst.BaseExpression, bool] | None:
        """The scores of `F.softmax(s, dim=-1)` / `torch.softmax(s, -1)` / `s.softmax(-1)`, `.float()` taken off, and
        whether it was there; None for any other call, another axis or more arguments (a `dtype`)."""
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
        cast = False
        while (
            isinstance(scores, cst.Call)
            and isinstance(scores.func, cst.Attribute)
            and scores.func.attr.value == "float"
            and not scores.args
        ):
            scores, cast = scores.func.value, True
        return scores, cast

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
        number = _literal(code)
        return number is not None and number <= -1e4

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


def _shaped_like(mask: cst.BaseExpression) -> str | None:
    """The name (or attribute) whose shape ``mask`` has: the mask itself, or the one tensor of an elementwise
    expression of it with numbers (`~m`, `m == 0`, `(1 - m).bool()`, `m.logical_not()`); None for anything else."""
    if _plain_reference(mask):
        return code_of(mask.with_changes(lpar=[], rpar=[])).strip()
    if isinstance(mask, cst.UnaryOperation) and isinstance(mask.operator, cst.BitInvert):
        return _shaped_like(mask.expression)
    if isinstance(mask, cst.Comparison) and len(mask.comparisons) == 1:
        sides = (mask.left, mask.comparisons[0].comparator)
    elif isinstance(mask, cst.BinaryOperation):
        sides = (mask.left, mask.right)
    elif isinstance(mask, cst.Call) and isinstance(mask.func, cst.Attribute) and not mask.args:
        return _shaped_like(mask.func.value) if mask.func.attr.value in ("bool", "logical_not") else None
    else:
        return None
    numbers = [side for side in sides if _literal(code_of(side).strip()) is not None]
    return _shaped_like(next(side for side in sides if side not in numbers)) if len(numbers) == 1 else None


def _literal(code: str) -> float | None:
    """The number ``code`` spells (`-1e4`, `-10000.0`), or None."""
    try:
        number = ast.literal_eval(code.replace(" ", ""))
    except (ValueError, SyntaxError):
        return None
    return number if isinstance(number, (int, float)) and not isinstance(number, bool) else None


def insert_fits_test(text: str, parse: Callable[[], ast.Module], ctx: Any) -> str:
    """``text`` with the definition of ``FITS`` in front of its first use, unless the module defines it (the
    device is tested in a project that keeps its other devices: NormTransformer.dispatches)."""

    def block(tree: ast.Module, missing: list[str]) -> str | None:
        torch = bound_name(tree, "torch")
        if torch is None:
            return None  # (NPU428 rewrites only where the module imports torch)
        dtypes = ", ".join(f"{torch}.{d}" for d in ("float16", "bfloat16", "float32"))
        low, high = AXIS
        npu = ctx.options.other_devices == "keep"
        tests = ['scores.device.type == "npu"'] if npu else []
        tests += [
            f"scores.dtype in ({dtypes})",
            "scores.dim() == mask.dim() == 4",
            "mask.shape[-2:] == scores.shape[-2:]",
            f"all({low} <= n <= {high} and n % 32 == 0 for n in scores.shape[-2:])",
        ]
        torch_npu = bound_name(tree, "torch_npu") or "torch_npu"
        return _FITS_SOURCE.format(
            name=FITS,
            torch_npu=torch_npu,
            op=FUSED_OP,
            npu="npu " if npu else "",
            low=low,
            high=high,
            tests="\n        and ".join(tests),
        )

    return insert_definitions(text, parse, [FITS], block)


def unfused(node: cst.CSTNodeT) -> cst.CSTNodeT:
    """``node`` with this rule's rewrites taken back (`op(...) if <test> else <softmax>` -> the softmax): for NPU425,
    which fuses the whole attention and keeps its original code for the other tensors."""
    return cast("cst.CSTNodeT", node.visit(_Unfuse()))  # (_Unfuse replaces expressions, never removes a node)


class _Unfuse(cst.CSTTransformer):
    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        body = updated.body
        if isinstance(body, cst.Call) and isinstance(body.func, cst.Attribute) and body.func.attr.value == FUSED_OP:
            return updated.orelse  # (a call: the parentheses the rewrite put around it are not needed)
        return updated


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

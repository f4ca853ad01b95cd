"""NPU430: `F.scaled_dot_product_attention` with a floating attention mask -> torch_npu.npu_fusion_attention.

torch_npu's SDPA (op-plugin `op_plugin/ops/opapi/ScaledDotProductAttentionKernelNpuOpApi.cpp`, see sdpa_path.py)
takes FlashAttentionScore only for a bool mask or none; a floating mask goes to `_scaled_dot_product_attention_math`
(small operators). A call whose mask the code shows to be an attention mask (0 where attended, a large negative or
-inf where not), not a bias, gets the fused op on the NPU when the mask is floating at run time; a bool mask, None,
and the other devices keep the call. What reads as a bias (a name that says bias, a mask something is added to, a
caller in the module passing a bias: mask_callers.py) is left, with NPU407's word on the call.
"""

from __future__ import annotations

import ast

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.calls import code_of, literal
from ascend_port.python.scopes import FUNCTIONS, Trigger, innermost
from ascend_port.python.transformer import PortTransformer
from ascend_port.rules.attention.attention import SDPA, SDPA_NATIVE
from ascend_port.rules.attention.attention_match import _conjunction
from ascend_port.rules.attention.fused_ops import TorchNpuName, _plain_reference
from ascend_port.rules.attention.mask_callers import attention_mask_values, function_ast
from ascend_port.rules.attention.sdpa_path import _bool_valued, _bound

SDPA_FLOAT_MASK = rule(
    "NPU430",
    "sdpa-float-mask-fusion",
    Confidence.MEDIUM,
    "`F.scaled_dot_product_attention(q, k, v, attn_mask=<float mask>)` -> `torch_npu.npu_fusion_attention` on NPU.",
    """
    torch_npu's SDPA reaches its fused kernel (FlashAttentionScore) only for a bool `attn_mask` or none; a floating
    mask falls back to small operators (op-plugin's ScaledDotProductAttentionKernelNpuOpApi.cpp, torch_npu 2.1 on:
    see `explain NPU407`). A call whose mask is an attention mask gets, on the NPU and while the mask is floating
    and 4-D at run time, `torch_npu.npu_fusion_attention(q, k, v, q.shape[1], "BNSD", atten_mask=(mask <
    0).expand(B, -1, Sq, Sk), scale=..., keep_prob=1 - dropout_p, inner_precise=2)[0]`; a bool mask or None keeps
    the call (it reaches the kernel already), and so do the other devices. q, k, v and the mask must be names or
    attributes (read twice); `is_causal` must be False or a name (then the test asks `not is_causal`); the scale
    defaults to SDPA's `q.shape[-1] ** -0.5`; GQA (fewer key/value heads, `enable_gqa`) is the op's own.

    An attention mask: a name or attribute named a mask (`attention_mask`, `causal_mask`, diffusers'
    `prepare_attention_mask(...)` output), none of whose words, nor those of what the function assigns to it, says
    bias (bias, alibi, position_bias, similarity...), that is not built by adding something to it (`mask = mask +
    bias`, `mask += ...`), and, for a parameter, that no caller in the module passes a bias to (mask_callers.py).
    Any other mask is left, with NPU407's word on it, and so is one the function makes bool (a comparison,
    `dtype=torch.bool`, then reshaped or padded). A `**kwargs` is taken only where every other parameter is given
    (transformers' `**sdpa_kwargs`: enable_gqa alone).

    Medium: the mask is read as HF and diffusers build one (0 where attended, the dtype's lowest value, -10000 or
    -inf where not): `< 0` is exact for those, not for a mask that carries a bias under a mask's name. A row
    masked entirely comes out 0 (`inner_precise=2`) where SDPA gives 0 (-inf, torch's safe softmax) or averages v
    (a finite lowest value). Dropout draws other random numbers than torch's. The op's own limits (fp16, bf16 or
    fp32; head dim <= 768 with Dq = Dk >= Dv; query heads a multiple of the key/value heads; an Atlas A2) are not
    tested at run time: a call outside them raises where torch_npu's SDPA would take its math path.

    Before:
        import torch
        import torch.nn.functional as F


        def attend(query, key, value, attention_mask):
            return F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask)
    After:
        import torch
        try:
            import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
        except ImportError:
            pass
        import torch.nn.functional as F


        def attend(query, key, value, attention_mask):
            if (
                query.device.type == "npu"
                and attention_mask is not None
                and attention_mask.is_floating_point()
                and attention_mask.dim() == query.dim() == 4
            ):
                return torch_npu.npu_fusion_attention(
                    query, key, value, query.shape[1], "BNSD",
                    atten_mask=(attention_mask < 0).expand(query.shape[0], -1, query.shape[2], key.shape[2]),
                    scale=query.shape[-1] ** -0.5,
                    inner_precise=2,
                )[0]
            else:
                return F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask)
    """,
    speeds_up=True,
)

NPU_TEST = '.device.type == "npu"'
FUSED_CALL = ".npu_fusion_attention("


class SdpaFusionTransformer(TorchNpuName, PortTransformer):
    """NPU430, on a statement that calls SDPA once (the function around it read for what makes the mask)."""

    TRIGGERS = (Trigger(r"scaled_dot_product_attention\s*\(", innermost(*FUNCTIONS)),)
    RULES = (SDPA_FLOAT_MASK,)
    DISPATCHES_ON_DEVICE = True
    RUNS_AFTER = ("AttentionTransformer",)  # (its NPU407 finding on the call, replaced here when the call is ported)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.functions: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.functions.pop()
        return updated

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement:
        calls = [c for c in _calls(original) if self.ctx.imports.resolve(c.func) in SDPA]
        if len(calls) != 1 or not self.functions or self._in_npu_dispatch():
            return updated
        call = calls[0]
        fused = self._fused(call, self.functions[-1])
        if fused is None:
            return updated
        expression, tests = fused
        if self.ctx.options.other_devices == "keep":
            tests.insert(0, f'{code_of(_argument(call, "query"))}.device.type == "npu"')
        ported_line = updated.visit(_Replace(code_of(call), cst.parse_expression(expression)))
        assert isinstance(ported_line, cst.SimpleStatementLine)
        plain = updated.with_changes(leading_lines=[])
        ported: cst.BaseStatement = cst.If(
            test=_conjunction(tests),
            body=cst.IndentedBlock(body=[ported_line.with_changes(leading_lines=[])]),
            orelse=cst.Else(body=cst.IndentedBlock(body=[plain])),
            leading_lines=updated.leading_lines,
        )
        message = "scaled_dot_product_attention with a floating attention mask -> torch_npu.npu_fusion_attention"
        fixed = self.fix(
            SDPA_FLOAT_MASK, original, ported, f"{message} (BNSD, atten_mask = mask < 0)", torch_npu_name=True
        )
        if fixed is None:
            return updated
        line = self.ctx.line_of(call)  # (NPU407's "left unchanged" would contradict the port)
        self.ctx.findings[:] = [f for f in self.ctx.findings if not (f.rule is SDPA_NATIVE and f.line == line)]
        return fixed

    def _in_npu_dispatch(self) -> bool:
        """Is the statement under a test of a tensor's device for the NPU, or in the `else` of an `if` whose body
        calls the op (this rule's own, ported before: with `--other-devices drop` its test names no device)?"""
        return any(
            isinstance(s, cst.If) and (NPU_TEST in code_of(s.test) or FUSED_CALL in code_of(s.body))
            for s in self.ctx.enclosing_statements()
        )

    def _fused(self, call: cst.Call, function: cst.FunctionDef) -> tuple[str, list[str]] | None:
        """The op's call and the run-time tests that choose it, or None where the call is left."""
        bound = _bound_explicitly(call)
        if bound is None or not all(name in bound for name in ("query", "key", "value", "attn_mask")):
            return None
        q, k, v, mask = (code_of(bound[n]).strip() for n in ("query", "key", "value", "attn_mask"))
        if not all(_plain_reference(bound[n]) for n in ("query", "key", "value", "attn_mask")):
            return None
        if not self._attention_mask(mask, function):
            return None
        tests = [f"{mask} is not None", f"{mask}.is_floating_point()", f"{mask}.dim() == {q}.dim() == 4"]
        causal = bound.get("is_causal")
        if causal is not None and literal(causal) is not False:
            if not _plain_reference(causal):
                return None  # (True, or an expression: with a mask SDPA refuses it; left)
            tests.append(f"not {code_of(causal).strip()}")
        arguments = [q, k, v, f"{q}.shape[1]", '"BNSD"']
        arguments.append(f"atten_mask=({mask} < 0).expand({q}.shape[0], -1, {q}.shape[2], {k}.shape[2])")
        arguments.append(f"scale={_scale(bound.get('scale'), q)}")
        dropout = bound.get("dropout_p")
        if dropout is not None and literal(dropout) not in (0, 0.0):
            arguments.append(f"keep_prob=1.0 - {_parenthesised(code_of(dropout).strip())}")
        arguments.append("inner_precise=2")  # (a row masked entirely: computed as 0, not left undefined)
        lines = "".join(f"    {argument},\n" for argument in arguments[5:])
        return f"{self.torch_npu()}.npu_fusion_attention(\n    {', '.join(arguments[:5])},\n{lines})[0]", tests

    def _attention_mask(self, code: str, function: cst.FunctionDef) -> bool:
        """Does the code show the mask ``code`` to be an attention mask (0 / large negative), not a bias, and not
        bool (SDPA's kernel takes a bool mask already)?"""
        fn = function_ast(function)
        values = attention_mask_values(code, fn, self.ctx.module()) if fn is not None else None
        return values is not None and not _shows_bool(values, code)


# Methods and functions whose result has their tensor's dtype (a bool mask reshaped or padded stays bool).
SAME_DTYPE = {"view", "reshape", "expand", "expand_as", "repeat", "repeat_interleave", "unsqueeze", "squeeze"}
SAME_DTYPE |= {"transpose", "permute", "contiguous", "flatten", "clone", "pad"}


def _shows_bool(values: list[ast.expr], code: str) -> bool:
    """Do the values assigned to the mask ``code`` make it bool: one is (a comparison, `~m`, `.bool()`, a tensor
    made with `dtype=torch.bool`), and the others are too or keep its dtype (`m.view(...)`, `F.pad(m, ...)`)?"""

    def made_bool(value: ast.expr) -> bool:
        if _bool_valued(cst.parse_expression(ast.unparse(value))):
            return True
        keywords = value.keywords if isinstance(value, ast.Call) else []
        return any(k.arg == "dtype" and ast.unparse(k.value).endswith(".bool") for k in keywords)

    def kept(value: ast.expr) -> bool:
        if isinstance(value, ast.Subscript):
            return ast.unparse(value.value) == code
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in SAME_DTYPE:
            return False
        source = (
            func.value if isinstance(func, ast.Attribute) and name != "pad" else value.args[0] if value.args else None
        )
        return source is not None and ast.unparse(source) == code

    return any(made_bool(v) for v in values) and all(made_bool(v) or kept(v) for v in values)


def _calls(statement: cst.SimpleStatementLine) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    statement.visit(Finder())
    return found


def _argument(call: cst.Call, name: str) -> cst.BaseExpression:
    bound = _bound_explicitly(call)
    assert bound is not None
    return bound[name]


def _bound_explicitly(call: cst.Call) -> dict[str, cst.BaseExpression] | None:
    """SDPA's arguments by parameter; a `**kwargs` only where every parameter but enable_gqa is given otherwise
    (transformers' `**sdpa_kwargs`): it can then hold enable_gqa alone, which the op needs not (GQA is its own)."""
    doubles = [a for a in call.args if a.star == "**"]
    if len(doubles) > 1:
        return None
    bound = _bound(call.with_changes(args=[a for a in call.args if a.star != "**"]))
    if doubles and (bound is None or not {"dropout_p", "is_causal", "scale"} <= bound.keys()):
        return None
    return bound


def _scale(scale: cst.BaseExpression | None, q: str) -> str:
    """SDPA's scale: its default 1/sqrt(head_dim) where none is given (a name may hold None: the default then)."""
    default = f"{q}.shape[-1] ** -0.5"
    if scale is None or literal(scale) is None:
        return default
    code = code_of(scale).strip()
    if isinstance(literal(scale), (int, float)) or not _plain_reference(scale):
        return code
    return f"{code} if {code} is not None else {default}"


def _parenthesised(code: str) -> str:
    try:
        simple = isinstance(ast.parse(code, mode="eval").body, (ast.Name, ast.Attribute, ast.Constant, ast.Call))
    except SyntaxError:
        simple = False
    return code if simple else f"({code})"


class _Replace(cst.CSTTransformer):
    """The SDPA call (by its code) replaced by the op's."""

    def __init__(self, code: str, replacement: cst.BaseExpression) -> None:
        super().__init__()
        self.code, self.replacement = code, replacement

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return self.replacement if code_of(original) == self.code else updated

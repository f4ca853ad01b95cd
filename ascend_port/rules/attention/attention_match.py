"""NPU425, NPU429: hand-written attention (`softmax(q @ k^T * scale + mask) @ v`) -> torch_npu.npu_fusion_attention.

The computation is recognised by meaning (attention_eval.py evaluates a run of the function's statements), not by
text: a run of top-level statements of one function that ends in `weights @ v`, with nothing else in it. The run's
statements move, unchanged, to the `else:` of a dispatch on q's device; the NPU branch calls the fused op.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import Finding, todo_comment
from ascend_port.python.calls import code_of
from ascend_port.python.names import ImportIndex
from ascend_port.python.scopes import FUNCTIONS, Trigger, enclosing
from ascend_port.python.transformer import PortTransformer
from ascend_port.rules.attention.attention_eval import SCORES_NOT_SEEN, Attention, Evaluator, Op, Opaque, read_attention
from ascend_port.rules.attention.fused_ops import TorchNpuName, _plain_reference
from ascend_port.rules.attention.mask_callers import bias_passed
from ascend_port.rules.attention.masked_softmax import MASKED_SOFTMAX, MASKED_SOFTMAX_NOTE, unfused

EAGER_ATTENTION = rule(
    "NPU425",
    "eager-attention",
    Confidence.MEDIUM,
    "Hand-written attention `softmax(q @ k^T * scale + mask) @ v` -> `torch_npu.npu_fusion_attention(...)[0]`.",
    """
    Recognised by meaning within one function (a symbolic evaluation of its statements, exact or nothing): scores
    `matmul(q, k.transpose(-2, -1))` (or `@`, `k.mT`), times or divided by a scalar (a number, a float parameter,
    `math.sqrt(d)`, `d ** -0.5`, a name or attribute named as a scale; q or k pre-scaled too); masks: a boolean
    `masked_fill(cond, -inf | finfo.min | <= -1e4)` (cond is already the op's polarity, True = masked out;
    broadcast to (B, 1, Sq, Sk), the shapes the op takes) or an additive float mask whose name says mask
    (`attn_weights + attention_mask`, also under `if attention_mask is not None:`), given to the op as
    `attention_mask < 0`; softmax over the last axis (a float32 softmax cast back is fine); functional dropout
    (`keep_prob = 1 - p` when training); weights @ v. GQA by `repeat_kv` / `repeat_interleave(n, dim=1)` on k and v
    is dropped: the op takes fewer KV heads. Layout BNSD (head_num = q.shape[1]); where the code does not prove q
    4-D (`transpose(2, 3)`), the dispatch also tests `q.dim() == 4`.

    Medium: an additive mask is read as HF builds it (0 where attended, the dtype's lowest value where not): `< 0`
    is exact for those, not for a mask that carries a bias. Rows masked entirely (a left-padded query's) come out 0
    (`inner_precise=2`, the op's invalid-row computation, given with every mask; without it the docs promise no
    value) where the eager softmax averages v (a lowest-value fill) or gives NaN (-inf): HF ignores those rows. A
    bias that is not named a mask (ALiBi, T5's position bias) is not a mask: not ported, nor a function to whose
    mask parameter a caller in the module passes a bias (granite_speech5's `position_bias`, swin's
    `relative_position_bias + attention_mask`, SAM's `attention_similarity`: mask_callers.py; callers in other
    modules are not seen). Dropout draws other random
    numbers than torch's. Under autocast the op computes in q's dtype: bf16 q/k/v (what a model's projections give
    it there) agree with the eager code; fp32 q/k/v under autocast come out fp32 from the op's reference where the
    eager matmuls give bf16 (whether torch_npu's autocast casts the op's inputs is not established).

    The eager function returns its weights; the op has none. Transformers' `eager_attention_forward(module, ...,
    **kwargs)` gets the op only where attentions are not asked for, by HF's own test (`output_attentions` in the
    call's kwargs, else the module's config), and returns None weights then, as its SDPA path does; another function
    whose weights are used after the computation is left (NPU429).

    In a project that keeps its other devices (the default) the op goes in `if q.device.type == "npu":` and the
    original statements stay in its `else:`; `--other-devices drop` writes the op alone.

    Before:
        import torch
        from torch import nn


        def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
            key_states = repeat_kv(key, module.num_key_value_groups)
            value_states = repeat_kv(value, module.num_key_value_groups)
            attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
            if attention_mask is not None:
                attn_weights = attn_weights + attention_mask
            attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
            attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
            attn_output = torch.matmul(attn_weights, value_states)
            attn_output = attn_output.transpose(1, 2).contiguous()
            return attn_output, attn_weights
    After:
        import torch
        try:
            import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
        except ImportError:
            pass
        from torch import nn


        def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
            if (
                query.device.type == "npu"
                and not kwargs.get("output_attentions", getattr(getattr(module, "config", None), "output_attentions", False))
            ):
                attn_output = torch_npu.npu_fusion_attention(
                    query, key, value, query.shape[1], "BNSD",
                    atten_mask=None if attention_mask is None else attention_mask < 0,
                    scale=scaling,
                    keep_prob=1.0 - dropout if module.training else 1.0,
                    inner_precise=2,
                )[0]
                attn_weights = None
            else:
                key_states = repeat_kv(key, module.num_key_value_groups)
                value_states = repeat_kv(value, module.num_key_value_groups)
                attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
                if attention_mask is not None:
                    attn_weights = attn_weights + attention_mask
                attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
                attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
                attn_output = torch.matmul(attn_weights, value_states)
            attn_output = attn_output.transpose(1, 2).contiguous()
            return attn_output, attn_weights
    """,
    speeds_up=True,
)
EAGER_ATTENTION_LEFT = rule(
    "NPU429",
    "eager-attention-left",
    Confidence.LOW,
    "Hand-written attention the port cannot prove it may fuse: a TODO saying why (a bias, a non-mask, weights used).",
    """
    `softmax(...) @ v` of scores `q @ k^T` that NPU425 does not port, where the evaluator can say why: a bias added
    to the scores (ALiBi, relative positions: not named a mask, or passed as the mask by a caller in the module), a
    mask multiplied in or filled with another value
    than -inf, a value of the computation read by the mask, or weights that the function uses after the
    computation (the op returns none). The code stays as it is; the TODO says what stopped the port. Attention the
    evaluator cannot follow to its end (softcapping under `if softcap is not None:`, attention sinks concatenated
    to the scores, a softmax over another axis, a dropout module) stays without a finding.

    Before:
        import torch


        def attend(q, k, v, bias):
            w = torch.softmax(q @ k.transpose(-2, -1) + bias, dim=-1)
            return w @ v
    After:
        import torch


        def attend(q, k, v, bias):
            # TODO(ascend-port): NPU429 [low] attention left unfused ...: `bias` is added to the scores: a bias the mask cannot express
            w = torch.softmax(q @ k.transpose(-2, -1) + bias, dim=-1)
            return w @ v
    """,
)


def attention_function(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The scope of a softmax: the innermost function around it, if it multiplies matrices (`@`, `matmul`)."""
    fn = enclosing(path, *FUNCTIONS)
    if fn is None:
        return None
    products = any(
        isinstance(n, ast.BinOp)
        and isinstance(n.op, ast.MatMult)
        or isinstance(n, ast.Attribute)
        and n.attr == "matmul"
        for n in ast.walk(fn)
    )
    return fn if products else None


# Reasons that say only that the run began after the scores were made (by a statement the evaluator does not know).
VAGUE = ("not weights @ v", "the weights are not a softmax", SCORES_NOT_SEEN)


class _Found:
    def __init__(self, start: int, end: int, attention: Attention, target: str | None, weights: str | None) -> None:
        self.start, self.end, self.attention, self.target, self.weights = start, end, attention, target, weights


class EagerAttentionTransformer(TorchNpuName, PortTransformer):
    """NPU425/NPU429, on the function around a softmax."""

    TRIGGERS = (Trigger(r"softmax\(", attention_function, also=("softmax",)),)
    RULES = (EAGER_ATTENTION, EAGER_ATTENTION_LEFT)
    DISPATCHES_ON_DEVICE = True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if not isinstance(original.body, cst.IndentedBlock) or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = list(original.body.body)
        if len(body) != len(updated.body.body):
            return updated  # (another rule split or merged statements: left)
        statements = [_ast_statement(s) for s in body]
        params = _parameters(original)
        found, why, where = self._find(statements, params)
        if found is None:
            if why is not None and where is not None:
                return self._left(original, updated, where, why)
            return updated
        kwargs = original.params.star_kwarg
        hf = isinstance(kwargs, cst.Param) and "module" in params
        # transformers 4.3x's attention layers: `if not output_attentions: attn_weights = None` after the computation
        flag = _weights_flag(statements[found.end + 1 :], found.weights, params) if found.weights else None
        if found.weights is not None and not hf and flag is None:
            why = f"its weights `{found.weights}` are used after it, and the op returns none"
            return self._left(original, updated, found.start, why)
        attention = found.attention
        if not _plain_reference(cst.parse_expression(attention.query)):
            return updated
        passed = self._bias_passed(original, attention)
        if passed is not None:
            why = f"a caller passes `{passed}` as its mask: a bias the mask cannot express"
            return self._left(original, updated, found.start, why)
        tests = [f'{attention.query}.device.type == "npu"'] if self.ctx.options.other_devices == "keep" else []
        if not attention.four_d:
            tests.append(f"{attention.query}.dim() == 4")
        if found.weights is not None and flag is not None:
            tests.append(f"not {flag}")
        elif found.weights is not None and isinstance(kwargs, cst.Param):
            config = 'getattr(getattr(module, "config", None), "output_attentions", False)'
            tests.append(f'not {kwargs.name.value}.get("output_attentions", {config})')
        fused = [cst.parse_statement(s) for s in self._fused(found)]
        # (the other tensors' path is the original code: NPU428's fused softmax in it taken back)
        chain = [unfused(s) for s in updated.body.body[found.start : found.end + 1]]
        first = chain[0]
        leading = getattr(first, "leading_lines", ())  # (a simple or a compound statement: both have them)
        chain[0] = first.with_changes(leading_lines=[])
        if tests:
            ported: list[cst.BaseStatement] = [
                cst.If(
                    test=_conjunction(tests),
                    body=cst.IndentedBlock(body=fused),
                    orelse=cst.Else(body=cst.IndentedBlock(body=chain)),
                    leading_lines=leading,
                )
            ]
        else:
            ported = [fused[0].with_changes(leading_lines=leading), *fused[1:]]
        gqa = ", GQA without repeating k/v" if attention.gqa else ""
        masks = ", the mask as atten_mask (True = masked out)" if attention.masks else ""
        message = f"eager attention -> torch_npu.npu_fusion_attention (BNSD{gqa}{masks})"
        anchor = cst.If(test=cst.Name("True"), body=cst.IndentedBlock(body=ported))
        fixed = self.fix(EAGER_ATTENTION, body[found.start], anchor, message, torch_npu_name=True)
        if fixed is None:
            return updated
        self._own_softmax(original, fused=True)
        new_body = [*updated.body.body[: found.start], *ported, *updated.body.body[found.end + 1 :]]
        return updated.with_changes(body=updated.body.with_changes(body=new_body))

    def _bias_passed(self, fn: cst.FunctionDef, attention: Attention) -> str | None:
        """A bias that a caller in this module passes as the parameter an additive mask comes from (mask_callers)."""
        p = fn.params
        positional = [param.name.value for param in (*p.posonly_params, *p.params)]
        keyword = [param.name.value for param in p.kwonly_params]
        for code in attention.additive:
            words = {n.id for n in ast.walk(ast.parse(code, mode="eval")) if isinstance(n, ast.Name)}
            for name in words & {*positional, *keyword}:
                index = positional.index(name) if name in positional else 1 << 30
                passed = bias_passed(self.ctx.module(), fn.name.value, name, index)
                if passed is not None:
                    return passed
        return None

    def _left(self, original: cst.FunctionDef, updated: cst.FunctionDef, where: int, why: str) -> cst.FunctionDef:
        """NPU429's TODO above the first statement of the computation (not above the function)."""
        statement = original.body.body[where]
        if not self.enabled(EAGER_ATTENTION_LEFT) or self.ctx.keeps(statement):
            return updated
        if self.ctx.suppressed(EAGER_ATTENTION_LEFT, statement):
            return updated
        message = f"attention left unfused (torch_npu.npu_fusion_attention): {why}"
        applied = not self.ctx.reports_only()
        self.ctx.findings.append(
            Finding(EAGER_ATTENTION_LEFT, self.ctx.line_of(statement), message, applied=applied, todo=True)
        )
        self._own_softmax(original)
        if not applied:
            return updated
        body = list(updated.body.body)
        text = todo_comment(EAGER_ATTENTION_LEFT, message)
        lines = list(getattr(body[where], "leading_lines", ()))
        if any(line.comment is not None and line.comment.value == text for line in lines):
            return updated  # (ported before)
        comment = cst.EmptyLine(comment=cst.Comment(text))
        body[where] = body[where].with_changes(leading_lines=[*lines, comment])
        return updated.with_changes(body=updated.body.with_changes(body=body))

    def _own_softmax(self, fn: cst.FunctionDef, fused: bool = False) -> None:
        """The function's softmax is this rule's (fused, or left with NPU429's reason): a note that its masked
        softmax could be fused alone would only contradict it; fused, NPU428's own fusion of it is gone too."""
        first = self.ctx.line_of(fn)
        last = first + code_of(fn.with_changes(leading_lines=[])).count("\n")
        rules = (MASKED_SOFTMAX_NOTE, MASKED_SOFTMAX) if fused else (MASKED_SOFTMAX_NOTE,)
        self.ctx.findings[:] = [f for f in self.ctx.findings if not (f.rule in rules and first <= f.line <= last)]

    def _fused(self, found: _Found) -> list[str]:
        a = found.attention
        arguments = [a.query, a.key, a.value, f"{a.query}.shape[1]", '"BNSD"']
        if a.masks:
            arguments.append(f"atten_mask={' | '.join(a.masks) if len(a.masks) == 1 else _or(a.masks)}")
        arguments.append(f"scale={a.scale}")
        if a.keep_prob is not None:
            arguments.append(f"keep_prob={a.keep_prob}")
        if a.masks:  # (a row masked entirely, a left-padded query's: computed as 0, not left undefined)
            arguments.append("inner_precise=2")
        # (one argument a line: the mask and keep_prob are expressions of their own)
        lines = "".join(f"    {argument},\n" for argument in arguments[5:])
        call = f"{self.torch_npu()}.npu_fusion_attention(\n    {', '.join(arguments[:5])},\n{lines})[0]"
        if found.target is None:
            return [f"return {call}"]
        out = [f"{found.target} = {call}"]
        if found.weights is not None:
            out.append(f"{found.weights} = None")
        return out

    def _find(
        self, statements: list[ast.stmt | None], params: dict[str, str | None]
    ) -> tuple[_Found | None, str | None, int | None]:
        """The last run of statements that computes attention, or (None, why not, where) for one that looks like it."""
        aliases = self.ctx.imports.aliases
        scalars = {name for name, annotation in params.items() if annotation in ("float", "int")}
        why: tuple[str, int, int] | None = None
        for end in range(len(statements) - 1, -1, -1):
            if not _outputs(statements[end]):
                continue
            best: tuple[int, Attention, Evaluator] | None = None
            for start in range(end, -1, -1):
                evaluator = Evaluator(aliases, scalars)
                output = _run(evaluator, statements[start : end + 1])
                if output is None:
                    if best is not None:
                        break
                    continue  # (a statement known only after an earlier one: `if mask is not None: w = w + mask`)
                result = read_attention(output)
                if best is not None and not _assigns_op(evaluator, statements[start]):
                    break  # (a value from before the computation: where it starts)
                if isinstance(result, Attention):
                    best = (start, result, evaluator)
                elif best is not None:
                    continue  # (k repeated, v not yet: the statement before may repeat it)
                elif (
                    isinstance(output, Op)
                    and output.kind == "out"
                    and result not in VAGUE
                    and (why is None or why[2] == end)
                ):
                    if _assigns_op(evaluator, statements[start], opaque=True):  # (from a step, as a run)
                        why = (result, start, end)  # (the longest run that shows what stops it)
            if best is None:
                continue
            start, attention, evaluator = best
            found = self._escapes(statements, start, end, attention, evaluator)
            if isinstance(found, str):
                return None, found, start
            return found, None, None
        return (None, why[0], why[1]) if why else (None, None, None)

    def _escapes(
        self, statements: list[ast.stmt | None], start: int, end: int, attention: Attention, evaluator: Evaluator
    ) -> _Found | str:
        """The run, if no name it assigns but its result (and the weights) is read after it."""
        last = statements[end]
        target = _target(last)
        assigned = {n for n in evaluator.env}
        after = {
            n.id
            for s in statements[end + 1 :]
            if s is not None
            for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        used = (assigned & after) - {target}
        if any(s is None for s in statements[end + 1 :]):
            return "a statement after it could not be read"
        weights = _weights_name(evaluator, last)
        if used - {weights}:
            return f"`{', '.join(sorted(used - {weights}))}` of the computation are used after it"
        return _Found(start, end, attention, target, weights if weights in used else None)


def _weights_flag(after: list[ast.stmt | None], weights: str, params: dict[str, str | None]) -> str | None:
    """The parameter that asks for the weights, where the function drops them without it: `if not
    output_attentions: attn_weights = None` among the statements after the computation (the fused path runs only
    when they are not asked for, and drops them as the original does)."""
    for statement in after:
        if (
            isinstance(statement, ast.If)
            and not statement.orelse
            and isinstance(statement.test, ast.UnaryOp)
            and isinstance(statement.test.op, ast.Not)
            and isinstance(flag := statement.test.operand, ast.Name)
            and flag.id in params
            and len(statement.body) == 1
            and isinstance(drop := statement.body[0], ast.Assign)
            and _target(drop) == weights
            and isinstance(drop.value, ast.Constant)
            and drop.value.value is None
        ):
            return flag.id
    return None


def _conjunction(tests: list[str]) -> cst.BaseExpression:
    """``a and b``; one test a line in parentheses when they are long (HF's output_attentions test)."""
    if len(tests) == 1 or len(" and ".join(tests)) <= 80:
        return cst.parse_expression(" and ".join(tests))
    lines = "".join(f"    {test}\n" if i == 0 else f"    and {test}\n" for i, test in enumerate(tests))
    statement = cst.ensure_type(cst.parse_statement(f"if (\n{lines}):\n    pass\n"), cst.If)
    return statement.test


def _or(masks: list[str]) -> str:
    return " | ".join(f"({m})" for m in masks)


def _run(evaluator: Evaluator, statements: list[ast.stmt | None]):
    """The value the last statement makes (assigned or returned), or None when a statement is not known."""
    for statement in statements[:-1]:
        if statement is None or not evaluator.statement(statement):
            return None
    last = statements[-1]
    if isinstance(last, ast.Return) and last.value is not None:
        return evaluator.expr(last.value)
    if last is None or not evaluator.statement(last):
        return None
    target = _target(last)
    return evaluator.env[target] if target is not None else None


def _target(statement: ast.stmt | None) -> str | None:
    """The name ``statement`` assigns (`name = ...`), or None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return None


def _outputs(statement: ast.stmt | None) -> bool:
    """`name = <...>` or `return <...>` with a product in it (the candidates for `weights @ v`)."""
    if isinstance(statement, ast.Return) and statement.value is not None:
        value = statement.value
    elif (
        isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
    ):
        value = statement.value
    else:
        return False
    return any(
        isinstance(n, ast.BinOp)
        and isinstance(n.op, ast.MatMult)
        or isinstance(n, ast.Attribute)
        and n.attr == "matmul"
        for n in ast.walk(value)
    )


def _assigns_op(evaluator: Evaluator, statement: ast.stmt | None, *, opaque: bool = False) -> bool:
    """Does ``statement`` (the first of a run) assign a step of the computation (not a value from before it)?
    ``opaque``: or one the evaluator could not read (the name's last value: a step the run then spoiled)."""
    if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
        return isinstance(evaluator.env.get(statement.targets[0].id), (Op, Opaque) if opaque else Op)
    return isinstance(statement, (ast.If, ast.AugAssign, ast.Expr))


def _weights_name(evaluator: Evaluator, last: ast.stmt | None) -> str | None:
    """The name the weights (the softmax, maybe dropped out) have after the run."""
    value = last.value if isinstance(last, (ast.Assign, ast.Return)) else None
    for node in ast.walk(value) if value is not None else ():
        if isinstance(node, ast.Name) and isinstance(term := evaluator.env.get(node.id), Op):
            if term.kind in ("softmax", "dropout", "cast"):
                return node.id
    return None


def _ast_statement(statement: cst.BaseStatement) -> ast.stmt | None:
    try:
        tree = ast.parse(textwrap.dedent(code_of(statement)))
    except SyntaxError:
        return None
    return tree.body[0] if len(tree.body) == 1 else None


def _parameters(fn: cst.FunctionDef) -> dict[str, str | None]:
    p = fn.params
    out: dict[str, str | None] = {}
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        annotation = code_of(param.annotation.annotation).strip() if param.annotation else None
        out[param.name.value] = annotation
    return out

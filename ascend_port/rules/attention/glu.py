"""NPU423, NPU426: the gated linear units of LLM and diffusion code, written out after a chunk, -> torch_npu's fused
kernels: SwiGLU `a, b = t.chunk(2, d)` then `F.silu(a) * b` -> `torch_npu.npu_swiglu(t, dim=d)`, GEGLU `F.gelu(a) * b`
or `a * F.gelu(b)` -> `torch_npu.npu_geglu(t, dim=d, approximate=..., activate_left=...)[0]`.

Both are recognised by structure: the chunk statement followed directly by the product, with `a` and `b` used nowhere
else; the chunk statement is then removed. npu_swiglu computes silu(first half) * second half, so `F.silu(b) * a`
(gate in the second half) does not match; npu_geglu activates either half (`activate_left`). The GELU must be
`F.gelu` with a literal `approximate` ("none": 0, "tanh": 1), or a method of the class that returns nothing but
that GELU of its argument (diffusers' `GEGLU.gelu`, which computes it in float32 on mps): a module's activation
chosen by its config (`self.act_fn`) is not known to be one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, Rule, rule
from ascend_port.python.calls import code_of
from ascend_port.python.device_facts import resolve_ast
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.rules.attention.fused_ops import RotaryMixin, _blocks, _mul, _plain_reference, npu_test

SWIGLU = rule(
    "NPU423",
    "swiglu",
    Confidence.MEDIUM,
    "`a, b = x.chunk(2, -1)` then `F.silu(a) * b` -> `torch_npu.npu_swiglu(x, dim=-1)`.",
    """
    npu_swiglu splits its input in two halves along `dim` and returns silu(first) * second. The chunk statement and
    the product must be adjacent statements of one block and the halves used nowhere else; the chunk statement
    is then removed. `F.silu(b) * a` (gate in the second half) is not this op and is left alone. Medium: the
    values agree within rounding (the op fuses the three steps).

    A module's configured activation of one projection times another projection of the same tensor,
    `self.act_fn(self.gate_proj(x)) * self.up_proj(x)` (transformers' MLPs, `self.act_fn = ACT2FN[config.hidden_act]`,
    or an attribute the class does not assign), becomes `npu_swiglu(torch.cat((gate, up), dim=-1), dim=-1)` under a
    test that the activation is SiLU at run time (`type(self.act_fn) is torch.nn.SiLU`, or transformers' own
    `SiLUActivation`); any other activation runs the original expression (act_swiglu.py).

    In a project that keeps its other devices (the default) the op goes in `if t.device.type == "npu":` and the
    two statements stay in its `else:` (t: the chunked tensor, or the input of the layer that makes it), with
    `import torch_npu` guarded; `--other-devices drop` writes the op alone.

    Before:
        import torch.nn.functional as F


        def forward(self, x):
            gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
            return self.down_proj(F.silu(gate) * up)
    After:
        try:
            import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
        except ImportError:
            pass
        import torch.nn.functional as F


        def forward(self, x):
            if x.device.type == "npu":
                return self.down_proj(torch_npu.npu_swiglu(self.gate_up_proj(x), dim=-1))
            else:
                gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
                return self.down_proj(F.silu(gate) * up)
    """,
    speeds_up=True,
)


GEGLU = rule(
    "NPU426",
    "geglu",
    Confidence.MEDIUM,
    "`a, b = x.chunk(2, -1)` then `F.gelu(a) * b` -> `torch_npu.npu_geglu(x, dim=-1, ...)[0]`.",
    """
    npu_geglu splits its input in two halves along `dim` and returns `(out, gelu)`: with `activate_left=True`
    out = gelu(first half) * second half, with `activate_left=False` (its default) out = first half * gelu(second
    half); `approximate` 0 is the exact (erf) GELU, 1 the tanh one (torch_npu's docstring; CANN's GeGluV2 docs for
    the halves). So `F.gelu(a) * b` becomes `npu_geglu(t, dim=d, approximate=0, activate_left=True)[0]` and `a *
    F.gelu(b)` (diffusers' GEGLU) the same with `activate_left=False`; `F.gelu(b, approximate="tanh")` gives
    `approximate=1`. The chunk statement and the product must be adjacent statements of one block and the halves
    used nowhere else (as NPU423's SwiGLU); the chunk statement is then removed. The GELU must be `F.gelu` with a
    literal `approximate` or none: a module's configured activation (`self.act_fn`) may be any. Written only where
    the target release has npu_geglu with `activate_left` (every covered release, 2.1.0 to 2.14.0, registers it).
    Medium: the values agree within rounding (the op fuses the three steps and returns the input's dtype).

    In a project that keeps its other devices (the default) the op goes in `if t.device.type == "npu":` and the
    two statements stay in its `else:` (t: the chunked tensor, or the input of the layer that makes it), with
    `import torch_npu` guarded; `--other-devices drop` writes the op alone.

    Before:
        import torch.nn.functional as F


        def forward(self, x):
            hidden, gate = self.proj(x).chunk(2, dim=-1)
            return hidden * F.gelu(gate)
    After:
        try:
            import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
        except ImportError:
            pass
        import torch.nn.functional as F


        def forward(self, x):
            if x.device.type == "npu":
                return torch_npu.npu_geglu(self.proj(x), dim=-1, approximate=0, activate_left=False)[0]
            else:
                hidden, gate = self.proj(x).chunk(2, dim=-1)
                return hidden * F.gelu(gate)
    """,
    speeds_up=True,
)


SILU = {"torch.nn.functional.silu"}
GELU = {"torch.nn.functional.gelu"}

# (the name that stands for the chunked tensor in a fused call's template, replaced by its expression)
FUSED_INPUT = "__fused_input__"


@dataclass(frozen=True)
class _Swiglu:
    first: cst.BaseStatement  # `a, b = t.chunk(2, dim=-1)` (original node)
    product: str  # code of `F.silu(a) * b`
    source: cst.BaseExpression  # t
    dim: int
    pair: tuple[str, str]  # code of the two statements, to find them again in the updated tree
    # the fused call ({npu}: torch_npu's local name, FUSED_INPUT: t), its rule and its finding (SwiGLU by default)
    call: str = f"{{npu}}.npu_swiglu({FUSED_INPUT}, dim={{dim}})"
    rule: Rule = SWIGLU
    message: str = "chunk + F.silu(gate) * up -> torch_npu.npu_swiglu"


def _device_reference(source: cst.BaseExpression) -> cst.BaseExpression | None:
    """What tells the device of ``source`` without computing it again: itself when it is a plain reference, the
    input of a module call on one tensor (``self.gate_up_proj(x)``: a layer returns its input's device), else
    None."""
    if _plain_reference(source):
        return source
    if isinstance(source, cst.Call) and len(source.args) == 1 and not source.args[0].keyword:
        argument = source.args[0]
        if not argument.star and _plain_reference(argument.value) and _plain_reference(source.func):
            return argument.value
    return None


def _chunk(statement: cst.BaseStatement, resolve) -> tuple[str, str, cst.BaseExpression, int] | None:
    """`a, b = t.chunk(2, dim=d)` / `torch.chunk(t, 2, d)` -> (a, b, t, d)."""
    pair = _two_name_assignment(statement)
    if pair is None:
        return None
    a, b, call = pair
    if not isinstance(call, cst.Call) or any(arg.star for arg in call.args) or a == b:
        return None
    arguments = _chunk_arguments(call, resolve)
    if arguments is None:
        return None
    source, chunks, dim = arguments
    try:
        chunks_value, dim_value = ast.literal_eval(code_of(chunks)), ast.literal_eval(code_of(dim))
    except (ValueError, SyntaxError):
        return None
    if chunks_value != 2 or not isinstance(dim_value, int):
        return None
    return a, b, source, dim_value


def _two_name_assignment(statement: cst.BaseStatement) -> tuple[str, str, cst.BaseExpression] | None:
    """`a, b = value` (or `[a, b] = value`), alone on its line -> (a, b, value)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
        return None
    target = assign.targets[0].target
    if not (
        isinstance(target, (cst.Tuple, cst.List))
        and len(target.elements) == 2
        and all(isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement) for e in target.elements)
    ):
        return None
    a, b = (e.value.value for e in target.elements if isinstance(e.value, cst.Name))
    return a, b, assign.value


def _chunk_arguments(
    call: cst.Call, resolve
) -> tuple[cst.BaseExpression, cst.BaseExpression, cst.BaseExpression] | None:
    """(t, chunks, dim) of `t.chunk(chunks, dim)` or `torch.chunk(t, chunks, dim)`, by position or keyword; None
    for another call, or when either of chunks and dim is missing or another argument is given."""
    pos = [arg.value for arg in call.args if arg.keyword is None]
    kw = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if resolve(call.func) == "torch.chunk" and pos:
        source, pos = pos[0], pos[1:]
    elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "chunk" and resolve(call.func) is None:
        source = call.func.value
    else:
        return None
    if set(kw) - {"chunks", "dim"} or len(pos) + len(kw) != 2:
        return None
    chunks = pos[0] if pos else kw.get("chunks")
    dim = pos[1] if len(pos) > 1 else kw.get("dim")
    if chunks is None or dim is None:
        return None
    return source, chunks, dim


class _Names(cst.CSTVisitor):
    """Name nodes that are values (not attribute names, keyword names or parameters), and products in lambdas."""

    def __init__(self) -> None:
        self.names: list[cst.Name] = []
        self.skip: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.skip.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.skip.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self.skip.add(id(node.name))

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self.skip:
            self.names.append(node)


def _names(node: cst.CSTNode) -> list[str]:
    visitor = _Names()
    node.visit(visitor)
    return [n.value for n in visitor.names]


class _SwigluFinder:
    def __init__(self, owner: GluMixin) -> None:
        self.owner = owner

    def find(self, fn: cst.FunctionDef) -> list[_Swiglu]:
        resolve = self.owner.ctx.imports.resolve
        self.line = self.owner.ctx.line_of(fn)  # (which class's methods `self.gelu` can name)
        candidates = [
            (first, second, chunk)
            for block in _blocks(fn.body)
            for first, second in zip(block, block[1:])
            if (chunk := _chunk(first, resolve)) is not None
        ]
        if not candidates:
            return []  # the common case, decided without walking the whole function
        counts: dict[str, int] = {}
        for name in _names(fn):
            counts[name] = counts.get(name, 0) + 1
        found: list[_Swiglu] = []
        for first, second, chunk in candidates:
            a, b, source, dim = chunk
            in_first = _names(first)
            if counts.get(a, 0) - in_first.count(a) != 1 or counts.get(b, 0) - in_first.count(b) != 1:
                continue  # a half is used somewhere else: the chunk must stay
            fused = self.fused(second, a, b, _Swiglu(first, "", source, dim, (code_of(first), code_of(second))))
            if fused is not None:
                found.append(fused)
        return found

    def fused(self, statement: cst.BaseStatement, a: str, b: str, match: _Swiglu) -> _Swiglu | None:
        """``match`` completed with the product of the halves in ``statement`` that the fused op computes, or None
        (_GegluFinder reads other products)."""
        product = self._product(statement, a, b)
        return None if product is None else replace(match, product=code_of(product))

    def _product(self, statement: cst.BaseStatement, a: str, b: str) -> cst.BinaryOperation | None:
        """The `F.silu(a) * b` (or `b * F.silu(a)`) in ``statement``, outside lambdas and comprehensions."""
        resolve = self.owner.ctx.imports.resolve
        hits = [
            node
            for node, gate, other in _products(statement)
            if isinstance(gate, cst.Call)
            and resolve(gate.func) in SILU
            and len(gate.args) == 1
            and gate.args[0].keyword is None
            and not gate.args[0].star
            and isinstance(gate.args[0].value, cst.Name)
            and gate.args[0].value.value == a
            and not gate.args[0].value.lpar
            and isinstance(other, cst.Name)
            and other.value == b
        ]
        return hits[0] if len(hits) == 1 else None


def _products(
    statement: cst.BaseStatement,
) -> list[tuple[cst.BinaryOperation, cst.BaseExpression, cst.BaseExpression]]:
    """The products `x * y` of ``statement`` outside lambdas and comprehensions, each once with either factor first."""
    found: list[tuple[cst.BinaryOperation, cst.BaseExpression, cst.BaseExpression]] = []

    class Finder(cst.CSTVisitor):
        def visit_Lambda(self, node) -> bool:
            return False

        visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

        def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
            parts = _mul(node)
            if parts is not None:
                found.extend((node, gate, other) for gate, other in (parts, parts[::-1]))

    statement.visit(Finder())
    return found


class OuterFunctionTransformer(cst.CSTTransformer):
    """Rewrites the statements of the function it is run on, not those of the functions and classes inside it
    (the GLU finders read the outer function alone)."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


class _SwigluApplier(OuterFunctionTransformer):
    def __init__(self, owner: GluMixin, found: list[_Swiglu]) -> None:
        super().__init__()
        self.owner = owner
        self.found = found

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = list(updated.body)
        i = 0
        while i + 1 < len(body):
            match = next((m for m in self.found if (code_of(body[i]), code_of(body[i + 1])) == m.pair), None)
            if match is None:
                i += 1
                continue
            template = cst.parse_expression(match.call.format(npu=self.owner.torch_npu(), dim=match.dim))
            call = template.visit(_FillInput(match.source))
            if not isinstance(call, cst.BaseExpression):
                return updated  # (an expression with a name replaced by an expression is one)
            first, second = body[i], body[i + 1].visit(_ReplaceCode(match.product, call))
            if not isinstance(first, _STATEMENTS) or not isinstance(second, _STATEMENTS):
                return updated  # (a statement of a block: one of these, replaced by one of these)
            if self.owner.dispatches():
                tensor = _device_reference(match.source)
                if tensor is None:
                    i += 1  # (its device would be read by computing it a second time: left as it is)
                    continue
                # `if t.device.type == "npu": <fused> else: <the two statements>` (the other devices' tensors)
                test = npu_test(code_of(tensor))
                plain = [first.with_changes(leading_lines=[]), body[i + 1]]
                ported: cst.BaseStatement = cst.If(
                    test=test,
                    body=cst.IndentedBlock(body=[second.with_changes(leading_lines=[])]),
                    orelse=cst.Else(body=cst.IndentedBlock(body=plain)),
                    leading_lines=first.leading_lines,
                )
            else:
                ported = second.with_changes(leading_lines=[*first.leading_lines, *second.leading_lines])
            fixed = self.owner.fix(match.rule, match.first, ported, match.message, torch_npu_name=True)
            if fixed is None:
                return updated
            body[i : i + 2] = [fixed]
            i += 1
        return updated.with_changes(body=body)


_STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)


class _FillInput(cst.CSTTransformer):
    """The chunked tensor in place of FUSED_INPUT in a fused call's template."""

    def __init__(self, source: cst.BaseExpression) -> None:
        super().__init__()
        self.source = source

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.source if updated.value == FUSED_INPUT else updated


class _ReplaceCode(cst.CSTTransformer):
    def __init__(self, code: str, replacement: cst.BaseExpression) -> None:
        super().__init__()
        self.code, self.replacement = code, replacement

    def leave_BinaryOperation(self, original, updated):
        if code_of(original) == self.code:
            return self.replacement.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        return updated


APPROXIMATE = {"none": 0, "tanh": 1}  # F.gelu's `approximate` -> npu_geglu's


class _GegluFinder(_SwigluFinder):
    """NPU423's finder, reading `F.gelu(a) * b` and `a * F.gelu(b)` (either factor first) for the product."""

    def fused(self, statement: cst.BaseStatement, a: str, b: str, match: _Swiglu) -> _Swiglu | None:
        resolve = self.owner.ctx.imports.resolve
        methods = {
            name: approximate
            for first, last, name, approximate in self.owner.ctx.fact(gelu_methods)
            if first <= self.line <= last
        }
        hits: list[tuple[cst.BinaryOperation, int, bool]] = []
        for node, gate, other in _products(statement):
            for activated, plain, left in ((a, b, True), (b, a, False)):
                approximate = _gelu_of(gate, activated, resolve)
                if approximate is None:
                    approximate = _gelu_method_of(gate, activated, methods)
                if approximate is not None and isinstance(other, cst.Name) and other.value == plain:
                    hits.append((node, approximate, left))
        if len(hits) != 1:
            return None
        product, approximate, left = hits[0]
        call = f"{{npu}}.npu_geglu({FUSED_INPUT}, dim={{dim}}, approximate={approximate}, activate_left={left})[0]"
        side = "gelu(first half) * second" if left else "first half * gelu(second)"
        message = f"chunk + {side} -> torch_npu.npu_geglu(activate_left={left})"
        return replace(match, product=code_of(product), call=call, rule=GEGLU, message=message)


def _gelu_of(node: cst.BaseExpression, name: str, resolve) -> int | None:
    """npu_geglu's `approximate` for `F.gelu(name)` / `F.gelu(name, approximate="none"|"tanh")`, else None."""
    if not (isinstance(node, cst.Call) and resolve(node.func) in GELU and node.args):
        return None
    first, rest = node.args[0], node.args[1:]
    if first.keyword is not None or first.star or not isinstance(first.value, cst.Name) or first.value.lpar:
        return None
    if first.value.value != name or len(rest) > 1:
        return None
    if not rest:
        return APPROXIMATE["none"]
    keyword = rest[0]
    if keyword.keyword is None or keyword.keyword.value != "approximate" or keyword.star:
        return None
    try:
        value = ast.literal_eval(code_of(keyword.value).strip())
    except (ValueError, SyntaxError):
        return None
    return APPROXIMATE.get(value) if isinstance(value, str) else None


def _gelu_method_of(node: cst.BaseExpression, name: str, methods: dict[str, int]) -> int | None:
    """npu_geglu's `approximate` for `self.m(name)`, where `m` is a GELU method of the class (gelu_methods)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and len(node.args) == 1):
        return None
    receiver, (arg,) = node.func.value, node.args
    if not (isinstance(receiver, cst.Name) and receiver.value == "self") or arg.keyword is not None or arg.star:
        return None
    if not (isinstance(arg.value, cst.Name) and arg.value.value == name):
        return None
    return methods.get(node.func.attr.value)


def gelu_methods(facts: ModuleFacts) -> list[tuple[int, int, str, int]]:
    """The methods of the module's classes that return a GELU of their one argument and nothing else, as
    (the class's first line, its last line, the method's name, npu_geglu's `approximate`). diffusers' `GEGLU.gelu`
    returns `F.gelu(gate)`, and on mps `F.gelu(gate.to(dtype=torch.float32)).to(dtype=gate.dtype)`: the same GELU,
    computed in float32 there."""
    if "gelu" not in facts.text and facts.text:
        return []
    found = []
    for cls in facts.statements(ast.ClassDef):
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and (approximate := _gelu_method(fn, facts)) is not None:
                found.append((cls.lineno, cls.end_lineno or cls.lineno, fn.name, approximate))
    return found


def _gelu_method(fn: ast.FunctionDef, facts: ModuleFacts) -> int | None:
    args = fn.args
    if fn.decorator_list or len(args.args) != 2 or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        return None
    param = args.args[1].arg
    body = fn.body[1:] if fn.body and _is_docstring(fn.body[0]) else fn.body
    returns: list[ast.expr | None] = []
    for statement in body:
        if isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1:
            statement = statement.body[0]  # a branch that returns the same GELU another way (mps: in float32)
        if not isinstance(statement, ast.Return):
            return None
        returns.append(statement.value)
    kinds = {_ast_gelu(value, param, facts) if value is not None else None for value in returns}
    return kinds.pop() if len(kinds) == 1 and returns and isinstance(returns[-1], ast.Call) else None


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _ast_gelu(value: ast.expr, param: str, facts: ModuleFacts) -> int | None:
    """`F.gelu(param[, approximate=...])`, or that of `param.to(...)` cast back `.to(...param.dtype)`: its
    `approximate` for npu_geglu."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "to"
        and any(ast.unparse(a) == f"{param}.dtype" for a in [*value.args, *(k.value for k in value.keywords)])
    ):
        value = value.func.value  # the cast back to the argument's dtype
    if not isinstance(value, ast.Call) or resolve_ast(value.func, facts.imports.aliases) not in GELU:
        return None
    if not value.args or any(k.arg != "approximate" for k in value.keywords) or len(value.args) != 1:
        return None
    arg = value.args[0]
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "to":
        arg = arg.func.value  # computed in another dtype (float32)
    if not (isinstance(arg, ast.Name) and arg.id == param):
        return None
    if not value.keywords:
        return APPROXIMATE["none"]
    try:
        approximate = ast.literal_eval(value.keywords[0].value)
    except ValueError:
        return None
    return APPROXIMATE.get(approximate) if isinstance(approximate, str) else None


def target_has_geglu_sides(options) -> bool:
    """Does the target release have npu_geglu, with `activate_left` (which half it activates)?"""
    version = npu_api.target_version(options)
    schema = npu_api.op_schema("npu_geglu", version)
    return "npu_geglu" in npu_api.load_release(version).ops and schema is not None and "activate_left" in schema


class GluMixin(RotaryMixin):
    """NPU423 and NPU426 in NormTransformer: a function's SwiGLUs and GEGLUs, read in the original function and
    written in the updated one (NPU422's rotary rewrites are made by then)."""

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        result = super().leave_FunctionDef(original, updated)
        finders = [_SwigluFinder] + ([_GegluFinder] if target_has_geglu_sides(self.ctx.options) else [])
        found = [match for finder in finders for match in finder(self).find(original)]
        return result.visit(_SwigluApplier(self, found)) if found else result

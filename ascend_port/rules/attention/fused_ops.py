"""NPU422, NPU423: the rotary-embedding and SwiGLU expressions of LLM code -> torch_npu's fused kernels.

Both are recognised by structure. Rotary: `(x * cos) + (rotate_half(x) * sin)` where `rotate_half` is transformers'
own or a function of the module that provably rotates halves (`cat((-x2, x1), -1)` of the two halves of the last
axis: an interleaved "rotate_half", as some libraries name theirs, does not match). SwiGLU: `a, b = t.chunk(2, -1)`
followed directly by `F.silu(a) * b`, with `a` and `b` used nowhere else: npu_swiglu computes silu(first half) *
second half, so `F.silu(b) * a` (gate in the second half) does not match.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.calls import code_of
from ascend_port.python.module_facts import ModuleFacts, last_line, walk_on_lines

# Names by which a module scales its rotary tables beyond [-1, 1] (see _scales_tables).
TABLE_SCALING = ("attention_scaling", "mscale", "_mscale", "attention_factor")

ROTARY_MUL = rule(
    "NPU422",
    "rotary-mul",
    Confidence.MEDIUM,
    "HF rotary embedding `(q * cos) + (rotate_half(q) * sin)` -> `torch_npu.npu_rotary_mul(q, cos, sin)`.",
    """
    npu_rotary_mul in its default "half" mode computes `r1 * x + r2 * cat(-x2, x1)`, which is the HF expression with
    r1 = cos and r2 = sin. `rotate_half` must be a half-mode one of transformers (read from transformers 5.23.0:
    Cohere's, GLM's, Helium's... rotate interleaved pairs under the same name and are not ported) or a function of
    this module that splits the last axis in halves and returns `cat((-x2, x1), dim=-1)`. The op takes 4-D tensors
    only, so `cos` and `sin` must be names the same function provably made 4-D in their last assignment before the
    use: HF's `cos.unsqueeze(unsqueeze_dim)` (transformers documents (batch, seq, dim) tables there), a (seq, dim)
    cache gathered by position ids `cos[position_ids].unsqueeze(1)` (transformers 4.3x), or `cos[None, :, None, :]`;
    a table used as it is, or unsqueezed once from an unknown rank, stays unchanged. The op is documented for
    tables in [-1, 1]: a module that scales them (`attention_scaling`, `mscale`: YaRN, LongRoPE) gets a TODO
    instead. Medium: q/k must be 4-D too (BNSD/BSND, head_dim even, B and N below 1000), which the code does not
    show; the op raises otherwise. With mixed dtypes (a bf16 q under autocast, fp32 tables) the op casts cos/sin to
    q's dtype and returns q's dtype, where the eager sum promoted to fp32; attention under autocast runs in bf16
    either way.

    In a project that keeps its other devices (the default) the op is chosen by the tensor's device, `... if
    q.device.type == "npu" else <the original>`, with `import torch_npu` guarded (a `q` that is not a plain name
    is left as it is: its device would be computed twice); `--other-devices drop` writes the op alone.

    Before:
        from transformers.models.llama.modeling_llama import rotate_half


        def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
            cos = cos.unsqueeze(unsqueeze_dim)
            sin = sin.unsqueeze(unsqueeze_dim)
            q_embed = (q * cos) + (rotate_half(q) * sin)
            k_embed = (k * cos) + (rotate_half(k) * sin)
            return q_embed, k_embed
    After:
        from transformers.models.llama.modeling_llama import rotate_half
        try:
            import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
        except ImportError:
            pass


        def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
            cos = cos.unsqueeze(unsqueeze_dim)
            sin = sin.unsqueeze(unsqueeze_dim)
            q_embed = torch_npu.npu_rotary_mul(q, cos, sin) if q.device.type == "npu" else (q * cos) + (rotate_half(q) * sin)
            k_embed = torch_npu.npu_rotary_mul(k, cos, sin) if k.device.type == "npu" else (k * cos) + (rotate_half(k) * sin)
            return q_embed, k_embed
    """,
    speeds_up=True,
)
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

SILU = {"torch.nn.functional.silu"}


@functools.cache
def half_mode_rotate_halves() -> frozenset[str]:
    """The modules of transformers whose `rotate_half` rotates halves (half mode), read from the library (data file):
    Cohere, GLM, Helium... rotate interleaved pairs under the same name, and an unknown module is not trusted."""
    raw = json.loads(resources.files("ascend_port.data").joinpath(ROTATE_HALF_FILE).read_text("utf-8"))
    return frozenset(raw["half"])


ROTATE_HALF_FILE = "transformers_rotate_half.json"


def _rotate_half_ast(fn: ast.FunctionDef, torch: str) -> bool:
    """Does ``fn`` return cat((-second_half, first_half), dim=-1) of its only argument?"""
    args = fn.args
    if len(args.args) != 1 or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        return False
    p = args.args[0].arg
    body = (
        fn.body[1:]
        if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(getattr(fn.body[0], "value", None), ast.Constant)
        else fn.body
    )
    halves: dict[str, str] = {}
    for statement in body[:-1]:
        named = _named_halves(statement, p, torch)
        if named is None:
            return False
        halves.update(named)
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None or len(halves) != 2:
        return False
    first, second = halves["first"], halves["second"]
    returned = ast.unparse(body[-1].value)
    return returned in {
        f"{torch}.cat({o}-{second}, {first}{c}, {d})" for o, c in (("(", ")"), ("[", "]")) for d in ("dim=-1", "-1")
    }


def _named_halves(statement: ast.stmt, p: str, torch: str) -> dict[str, str] | None:
    """The halves of the last axis of ``p`` that ``statement`` names: {"first": name} for `x1 = p[..., :d // 2]`,
    {"second": name} for `x2 = p[..., d // 2:]`, both for `x1, x2 = p.chunk(2, -1)`; None for any other statement."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target, value = statement.targets[0], ast.unparse(statement.value)
    if isinstance(target, ast.Name) and value == f"{p}[..., :{p}.shape[-1] // 2]":
        return {"first": target.id}
    if isinstance(target, ast.Name) and value == f"{p}[..., {p}.shape[-1] // 2:]":
        return {"second": target.id}
    halves = target.elts if isinstance(target, ast.Tuple) else []
    if (
        len(halves) == 2
        and isinstance(first := halves[0], ast.Name)
        and isinstance(second := halves[1], ast.Name)
        and value
        in (
            f"{p}.chunk(2, dim=-1)",
            f"{p}.chunk(2, -1)",
            f"{torch}.chunk({p}, 2, dim=-1)",
            f"{torch}.chunk({p}, 2, -1)",
        )
    ):
        return {"first": first.id, "second": second.id}
    return None


def _mul(node: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        return node.left, node.right
    return None


@dataclass(frozen=True)
class _Swiglu:
    first: cst.BaseStatement  # `a, b = t.chunk(2, dim=-1)` (original node)
    product: str  # code of `F.silu(a) * b`
    source: cst.BaseExpression  # t
    dim: int
    pair: tuple[str, str]  # code of the two statements, to find them again in the updated tree


def npu_test(tensor: str) -> cst.BaseExpression:
    """``<tensor>.device.type == "npu"``: the test of a fused rewrite's dispatch on the tensor's device (_npu_test
    recognises it)."""
    return cst.parse_expression(f'{tensor.strip()}.device.type == "npu"')


def _npu_test(test: cst.BaseExpression) -> bool:
    """``<x>.device.type == "npu"``: the test of a dispatch on the tensor's device (what the fused rewrites write)."""
    return (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and code_of(test.left).strip().endswith(".device.type")
        and code_of(test.comparisons[0].comparator).strip() in ('"npu"', "'npu'")
    )


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


def _plain_reference(node: cst.BaseExpression) -> bool:
    """A name or an attribute of one (``q``, ``self.x``): reading it again computes nothing."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


class RotarySwigluMixin:
    """The rotary and SwiGLU rewrites of NormTransformer (kept apart to keep modules short)."""

    ctx: Any
    if TYPE_CHECKING:  # (PortTransformer's and NormTransformer's, after this class in NormTransformer's bases)
        todo: Callable[..., None]
        fix: Callable[..., Any]
        torch_npu: Callable[[], str]
        dispatches: Callable[[], bool]

    # --- rotary -----------------------------------------------------------------------------------------------

    def _is_rotate_half(self, func: cst.BaseExpression) -> bool:
        if not isinstance(func, cst.Name):
            return False
        qualified = self.ctx.imports.resolve(func)
        if qualified is not None:
            module, _, name = qualified.rpartition(".")
            return name == "rotate_half" and module in half_mode_rotate_halves()

        def defined(tree: ast.Module | None) -> list[ast.FunctionDef]:
            return [n for n in (tree.body if tree else ()) if isinstance(n, ast.FunctionDef) and n.name == func.value]

        defs = defined(self.ctx.module_head) or defined(self.ctx.module())  # (usually defined above its use)
        torch = self.ctx.imports.local_name_for("torch") or "torch"
        return len(defs) == 1 and _rotate_half_ast(defs[0], torch)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions = [*getattr(self, "_functions", []), node]

    def _four_d(self, operand: cst.BaseExpression) -> bool:
        """Is ``operand`` a name the enclosing function provably made 4-D for broadcasting (see _broadcast_4d), in
        the last of its assignments before the use being visited? npu_rotary_mul takes 4-D cos/sin only; a (seq,
        dim) table used as it is (it broadcasts in the original) would make the op raise. The assignments must be
        straight-line statements of the function's body before the use (one under an ``if`` may not run)."""
        functions = getattr(self, "_functions", [])
        if not isinstance(operand, cst.Name) or not functions or functions[-1] is None:
            return False
        fn = functions[-1]
        assigned = _assignments(fn, operand.value)
        if not assigned:
            return False
        body = list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []
        at = _statement_index(body, self.ctx.enclosing_statements())
        if at is None:
            return False
        top = [
            a
            for st in body[:at]
            if isinstance(st, cst.SimpleStatementLine)
            for a in st.body
            if any(a is b for b in assigned)
        ]
        last = top[-1] if top else None
        if len(top) != len(assigned) or not all(isinstance(a, cst.Assign) for a in top) or last is None:
            return False  # assigned in a nested block, after the use or by another kind of assignment
        params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
        return isinstance(last, cst.Assign) and _broadcast_4d(last.value, params)

    def _scales_tables(self) -> str | None:
        """The name by which this module scales its rotary tables (YaRN's `mscale`, transformers'
        `attention_scaling`, 1.0 for the default rope but above it for YaRN/LongRoPE), or None. npu_rotary_mul is
        documented for cos/sin in [-1, 1]."""
        return self.ctx.fact(_table_scaling)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if _npu_test(node.test):  # `fused if x.device.type == "npu" else original`: the original is the others'
            self._for_others = {*getattr(self, "_for_others", ()), id(node.orelse)}

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation):
        if not isinstance(original.operator, cst.Add) or id(original) in getattr(self, "_for_others", ()):
            return updated
        match = self._rotary_match(original)
        if match is None:
            return updated
        plain_side, rotated_side, pi, ri, x = match
        if scaling := self._scales_tables():
            self.todo(
                ROTARY_MUL,
                original,
                f"npu_rotary_mul takes cos/sin in [-1, 1] and this module scales them ({scaling}, above 1 for "
                "YaRN/LongRoPE): use torch_npu.npu_rotary_mul(x, cos, sin) only where rope scaling is off",
            )
            return updated
        new_plain, new_rotated = _mul(getattr(updated, plain_side)), _mul(getattr(updated, rotated_side))
        if new_plain is None or new_rotated is None:
            return updated
        args = [
            cst.Arg(new_plain[pi].with_changes(lpar=[], rpar=[])),
            cst.Arg(new_plain[1 - pi].with_changes(lpar=[], rpar=[])),
            cst.Arg(new_rotated[1 - ri].with_changes(lpar=[], rpar=[])),
        ]
        call = cst.Call(
            func=cst.parse_expression(f"{self.torch_npu()}.npu_rotary_mul"),
            args=[a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in args[:2]]
            + args[2:],
        )
        replacement: cst.BaseExpression = call.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        if self.dispatches():
            if not _plain_reference(x):
                return updated  # (its device would be read by computing it a second time: left as it is)
            # the original for the other devices' tensors; in parentheses, as a conditional binds loosest, unless it
            # is the whole value of an assignment or a return
            whole = self._whole_value(original)
            replacement = cst.IfExp(
                test=npu_test(code_of(x)),
                body=call,
                orelse=updated.with_changes(lpar=[], rpar=[]),
                lpar=updated.lpar or ([] if whole else [cst.LeftParen()]),
                rpar=updated.rpar or ([] if whole else [cst.RightParen()]),
            )
        return (
            self.fix(
                ROTARY_MUL,
                original,
                replacement,
                f"({code_of(x)} * cos) + (rotate_half({code_of(x)}) * sin) -> torch_npu.npu_rotary_mul",
                torch_npu_name=True,
            )
            or updated
        )

    def _whole_value(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` the whole value of the assignment or the return it is in?"""
        statements = self.ctx.enclosing_statements()
        line = statements[-1] if statements else None
        return isinstance(line, cst.SimpleStatementLine) and any(
            isinstance(small, (cst.Assign, cst.AnnAssign, cst.Return)) and small.value is node for small in line.body
        )

    def _rotary_match(self, original: cst.BinaryOperation) -> tuple[str, str, int, int, cst.BaseExpression] | None:
        """The first reading of ``original`` as `(x * cos) + (rotate_half(x) * sin)`, operands of the sum and of
        each product in either order: (side of the plain product, side of the rotated one, index of x in the plain
        product, index of rotate_half(x) in the rotated one, x)."""
        for plain_side, rotated_side in (("left", "right"), ("right", "left")):
            plain, rotated = _mul(getattr(original, plain_side)), _mul(getattr(original, rotated_side))
            if plain is None or rotated is None:
                continue
            for ri in (0, 1):
                x = self._rotate_half_argument(rotated[ri])
                if x is None:
                    continue
                pi = next((i for i in (0, 1) if code_of(plain[i]).strip() == code_of(x).strip()), None)
                if pi is None or code_of(plain[1 - pi]).strip() == code_of(x).strip():
                    continue
                if not (self._four_d(plain[1 - pi]) and self._four_d(rotated[1 - ri])):
                    continue
                return plain_side, rotated_side, pi, ri, x
        return None

    def _rotate_half_argument(self, call: cst.BaseExpression) -> cst.BaseExpression | None:
        """x of `rotate_half(x)`, where x is a name or an attribute (code that can be compared); else None."""
        if not (
            isinstance(call, cst.Call)
            and len(call.args) == 1
            and not call.args[0].keyword
            and not call.args[0].star
            and self._is_rotate_half(call.func)
        ):
            return None
        x = call.args[0].value
        return x if isinstance(x, (cst.Name, cst.Attribute)) else None

    # --- SwiGLU -----------------------------------------------------------------------------------------------

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self._functions = getattr(self, "_functions", [None])[:-1]
        found = _SwigluFinder(self).find(original)
        if not found:
            return updated
        return updated.visit(_SwigluApplier(self, found))


def _assignments(fn: cst.FunctionDef, name: str) -> list[cst.BaseSmallStatement]:
    """The `name = ...` statements of a function (in any of its blocks, not in nested functions); one augmented or
    annotated assignment alone when there is one (no evidence)."""
    out: list[cst.BaseSmallStatement] = []
    for block in _blocks(fn.body):
        for statement in block:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets
                    ):
                        out.append(small)
                    elif (
                        isinstance(small, (cst.AugAssign, cst.AnnAssign))
                        and isinstance(small.target, cst.Name)
                        and small.target.value == name
                    ):
                        return [small]  # another kind of assignment: no evidence
    return out


def _statement_index(body: list[cst.BaseStatement], enclosing: Sequence[cst.CSTNode]) -> int | None:
    """The index of the statement of ``body`` among the ``enclosing`` statements of a node (PortContext's)."""
    indexes = {id(statement): i for i, statement in enumerate(body)}
    return next((indexes[id(s)] for s in enclosing if id(s) in indexes), None)


def _broadcast_4d(value: cst.BaseExpression, params: set[str]) -> bool:
    """A table provably made 4-D, maybe followed by `.to(...)`: `t[None, :, None, :]` (two new axes on a 2-D
    table); HF's `t.unsqueeze(unsqueeze_dim)` with `unsqueeze_dim` a parameter (transformers documents its cos/sin
    as (batch, seq, head_dim) there); `t[position_ids].unsqueeze(d)` (a (seq, dim) cache gathered by (batch, seq)
    position ids, transformers 4.3x). A single `unsqueeze(1)` of a table of unknown rank is not evidence: on a
    (seq, dim) table it makes 3-D."""
    while (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in ("to", "type_as", "type")
    ):
        value = value.func.value
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if value.func.attr.value != "unsqueeze" or len(value.args) != 1 or value.args[0].keyword:
            return False
        dim, table = value.args[0].value, value.func.value
        if isinstance(dim, cst.Name) and dim.value == "unsqueeze_dim" and dim.value in params:
            return True
        return (
            isinstance(table, cst.Subscript)
            and len(table.slice) == 1
            and isinstance(table.slice[0].slice, cst.Index)
            and isinstance(ids := table.slice[0].slice.value, cst.Name)
            and "position" in ids.value
        )
    if isinstance(value, cst.Subscript) and len(value.slice) == 4:
        kinds = []
        for element in value.slice:
            index = element.slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Name) and index.value.value == "None":
                kinds.append("new")
            elif isinstance(index, cst.Slice) and index.lower is None and index.upper is None and index.step is None:
                kinds.append("all")
            else:
                return False
        return kinds.count("new") == 2
    return False


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
    def __init__(self, owner: RotarySwigluMixin) -> None:
        self.owner = owner

    def find(self, fn: cst.FunctionDef) -> list[_Swiglu]:
        resolve = self.owner.ctx.imports.resolve
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
            product = self._product(second, a, b)
            if product is not None:
                found.append(_Swiglu(first, code_of(product), source, dim, (code_of(first), code_of(second))))
        return found

    def _product(self, statement: cst.BaseStatement, a: str, b: str) -> cst.BinaryOperation | None:
        """The `F.silu(a) * b` (or `b * F.silu(a)`) in ``statement``, outside lambdas and comprehensions."""
        resolve = self.owner.ctx.imports.resolve
        hits: list[cst.BinaryOperation] = []

        class Finder(cst.CSTVisitor):
            def visit_Lambda(self, node) -> bool:
                return False

            visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

            def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
                parts = _mul(node)
                if parts is None:
                    return
                for gate, other in (parts, parts[::-1]):
                    if (
                        isinstance(gate, cst.Call)
                        and resolve(gate.func) in SILU
                        and len(gate.args) == 1
                        and gate.args[0].keyword is None
                        and not gate.args[0].star
                        and isinstance(gate.args[0].value, cst.Name)
                        and gate.args[0].value.value == a
                        and not gate.args[0].value.lpar
                        and isinstance(other, cst.Name)
                        and other.value == b
                    ):
                        hits.append(node)

        statement.visit(Finder())
        return hits[0] if len(hits) == 1 else None


def _blocks(suite: cst.BaseSuite) -> list[list[cst.BaseStatement]]:
    """The statement lists of a function body and its nested blocks, not of nested functions or classes."""
    out: list[list[cst.BaseStatement]] = []
    if not isinstance(suite, cst.IndentedBlock):
        return out
    out.append(list(suite.body))
    for statement in suite.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or not isinstance(
            statement, cst.BaseCompoundStatement
        ):
            continue
        # (the `else` of a dispatch on the tensor's device is the other devices' original: not ported again)
        others = isinstance(statement, cst.If) and _npu_test(statement.test)
        for child in (
            getattr(statement, "body", None),
            None if others else getattr(statement, "orelse", None),
            getattr(statement, "finalbody", None),
            *(h.body for h in getattr(statement, "handlers", ())),
        ):
            if isinstance(child, (cst.Else, cst.Finally)):
                child = child.body
            elif isinstance(child, cst.If):  # elif
                out.extend(_blocks(child.body))
                continue
            if child is not None:
                out.extend(_blocks(child))
    return out


class _SwigluApplier(cst.CSTTransformer):
    def __init__(self, owner: RotarySwigluMixin, found: list[_Swiglu]) -> None:
        super().__init__()
        self.owner = owner
        self.found = found
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = list(updated.body)
        i = 0
        while i + 1 < len(body):
            match = next((m for m in self.found if (code_of(body[i]), code_of(body[i + 1])) == m.pair), None)
            if match is None:
                i += 1
                continue
            call = cst.ensure_type(
                cst.parse_expression(f"{self.owner.torch_npu()}.npu_swiglu(x, dim={match.dim})"), cst.Call
            )
            call = call.with_changes(args=[call.args[0].with_changes(value=match.source), call.args[1]])
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
            fixed = self.owner.fix(
                SWIGLU, match.first, ported, "chunk + F.silu(gate) * up -> torch_npu.npu_swiglu", torch_npu_name=True
            )
            if fixed is None:
                return updated
            body[i : i + 2] = [fixed]
            i += 1
        return updated.with_changes(body=body)


_STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)


class _ReplaceCode(cst.CSTTransformer):
    def __init__(self, code: str, replacement: cst.BaseExpression) -> None:
        super().__init__()
        self.code, self.replacement = code, replacement

    def leave_BinaryOperation(self, original, updated):
        if code_of(original) == self.code:
            return self.replacement.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        return updated


def _table_scaling(facts: ModuleFacts) -> str | None:
    """The first TABLE_SCALING name the module uses (an attribute or a variable), or None."""
    if facts.text and not any(name in facts.text for name in TABLE_SCALING):
        return None  # (the usual case, known without reading the module)
    lines = facts.lines_with(*TABLE_SCALING)
    head = facts.head
    # the head, when every line that can name one is in it (the rest of the module is then not parsed)
    in_head = head is not None and lines is not None and (not lines or lines[-1] <= last_line(head))
    tree = head if in_head else facts.tree
    if tree is None:
        return None
    names = {
        n.attr if isinstance(n, ast.Attribute) else n.id
        for n in walk_on_lines(tree, lines)  # (the statements that can name one)
        if isinstance(n, (ast.Attribute, ast.Name))
    }
    return next((n for n in TABLE_SCALING if n in names), None)

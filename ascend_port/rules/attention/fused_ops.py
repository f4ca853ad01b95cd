"""NPU422: the rotary-embedding expression of LLM code -> torch_npu.npu_rotary_mul; and the helpers of the fused
rewrites that dispatch on the tensor's device (glu.py's SwiGLU and GEGLU use them too).

Recognised by structure: `(x * cos) + (rotate_half(x) * sin)` where `rotate_half` is transformers' own or a function
of the module that provably rotates halves (`cat((-x2, x1), -1)` of the two halves of the last axis: an interleaved
"rotate_half", as some libraries name theirs, does not match).
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Callable, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.calls import code_of
from ascend_port.python.definitions import bound_name
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


def npu_test(tensor: str) -> cst.BaseExpression:
    """``<tensor>.device.type == "npu"``: the test of a fused rewrite's dispatch on the tensor's device (_npu_test
    recognises it)."""
    return cst.parse_expression(f'{tensor.strip()}.device.type == "npu"')


# transformers' own SiLU module (ACT2FN["silu"] before 4.34 and from 5.0 on; an instance in 4.18's table, a class
# after), which computes nn.functional.silu as torch.nn.SiLU does
SILU_CLASS_NAME = "SiLUActivation"


def silu_test(activation: str, torch: str) -> str:
    """``type(<activation>) is torch.nn.SiLU or type(<activation>).__name__ == "SiLUActivation"``: does a module's
    configured activation compute SiLU? An exact type: a subclass may change forward (_silu_test recognises it)."""
    return f'type({activation}) is {torch}.nn.SiLU or type({activation}).__name__ == "{SILU_CLASS_NAME}"'


def _silu_test(test: cst.BaseExpression) -> bool:
    code = code_of(test)
    return f'.__name__ == "{SILU_CLASS_NAME}"' in code and ".nn.SiLU" in code


def _npu_test(test: cst.BaseExpression) -> bool:
    """``<x>.device.type == "npu"`` (and a test of the activation, silu_test): the test of a dispatch on the
    tensor's device (what the fused rewrites write)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _npu_test(test.left) and _silu_test(test.right)
    if _silu_test(test):
        return True  # (an NPU-only port tests the activation alone)
    return (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and code_of(test.left).strip().endswith(".device.type")
        and code_of(test.comparisons[0].comparator).strip() in ('"npu"', "'npu'")
    )


def _npu_call(node: cst.BaseExpression) -> bool:
    """A call of a torch_npu op (`torch_npu.npu_...(...)`)."""
    return (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value.startswith("npu_")
    )


def _plain_reference(node: cst.BaseExpression) -> bool:
    """A name or an attribute of one (``q``, ``self.x``): reading it again computes nothing."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


class TorchNpuName:
    """The fused-op transformers' name for torch_npu in the module they port."""

    ctx: Any

    def torch_npu(self) -> str:
        """How the module spells torch_npu (every import is in its head), or `torch_npu`, which NPU100 imports."""
        head = self.ctx.module_head
        return (bound_name(head, "torch_npu") if head else None) or "torch_npu"


class RotaryMixin:
    """The rotary rewrite of NormTransformer (kept apart to keep modules short)."""

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
        # `fused if x.device.type == "npu" else original` (or `torch_npu.npu_op(...) if <the op takes x> else
        # original`: NPU428's): the original is the other tensors'
        if _npu_test(node.test) or _npu_call(node.body):
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

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self._functions = getattr(self, "_functions", [None])[:-1]
        return updated


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

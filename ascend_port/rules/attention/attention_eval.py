"""Does a run of a function's statements compute attention? A small symbolic evaluation, as norm_match.py does for
RMSNorm: exact or nothing.

Each statement of the function's body is evaluated in order into terms over the values the function had before
(``Leaf``: a name, an attribute, a slice): ``rep`` (KV heads repeated in place: `repeat_kv`, `repeat_interleave(n,
dim=1)`), ``T`` (the last two axes swapped), ``scale`` (times or divided by a scalar), ``scores`` (q @ k^T),
``mask`` (a boolean `masked_fill` with -inf, or an additive float mask), ``softmax`` (over the last axis),
``dropout``, ``cast`` (dtype casts, `.contiguous()`) and ``out`` (weights @ v). A statement the evaluator does not
know ends the run; a value it cannot read is ``Opaque``. ``attention`` then reads an ``out`` term back into the
arguments of npu_fusion_attention, or says why it cannot.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from typing import cast

MATMUL = {"torch.matmul"}
SOFTMAX = {"torch.nn.functional.softmax", "torch.softmax"}
DROPOUT = {"torch.nn.functional.dropout", "torch.dropout"}
REPEAT_INTERLEAVE = {"torch.repeat_interleave"}
MASKED_FILL = {"torch.masked_fill"}
CASTS = {"to", "type_as", "type", "float", "half", "bfloat16", "contiguous"}
# Scalars by name: a parameter annotated float or int, or a name or attribute named as a scale or a head size.
SCALAR_NAME = re.compile(r"scal|temperature|head_dim|d_k|dim_head|norm_factor|sqrt", re.I)
# Fill values that mask out: -inf, the dtype's lowest value, or a literal at most -1e4 (exp() of it is 0).
NEG_INF = re.compile(
    r"^(?:-\s*float\(['\"]inf['\"]\)|float\(['\"]-inf['\"]\)|-\s*(?:math|torch|np|numpy)\.inf"
    r"|(?:torch\.)?finfo\(.*\)\.min|torch\.finfo\(.*\)\.min)$"
)


SCORES_NOT_SEEN = "the softmax is not of q @ k^T (times a scale, plus a mask)"


@dataclass(frozen=True)
class Leaf:
    code: str  # a value from before the run (its code, with names of the run's shape-keeping values replaced)


@dataclass(frozen=True)
class Opaque:
    why: str


@dataclass(frozen=True)
class Op:
    kind: str  # rep, T, scale, scores, mask, softmax, dropout, cast, out
    args: tuple = ()
    data: tuple = ()


Term = Leaf | Opaque | Op


@dataclass
class Attention:
    """npu_fusion_attention's arguments, as code."""

    query: str
    key: str
    value: str
    scale: str
    masks: list[str] = field(default_factory=list)
    keep_prob: str | None = None
    four_d: bool = False  # the code proves q is 4-D (transpose(2, 3), softmax(dim=3))
    gqa: bool = False
    additive: list[str] = field(default_factory=list)  # the code of each additive mask (read as `< 0`)


def qualified(expr: ast.expr, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name) or expr.id not in aliases:
        return None
    return ".".join([aliases[expr.id], *reversed(parts)])


def _int(expr: ast.expr | None) -> int | None:
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = _int(expr.operand)
        return None if inner is None else -inner
    return None


def _arg(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


class Evaluator:
    def __init__(self, aliases: dict[str, str], scalars: set[str]) -> None:
        self.aliases = aliases
        self.scalars = scalars  # names known to hold numbers (float/int parameters, sizes assigned before)
        self.env: dict[str, Term] = {}

    # --- statements ------------------------------------------------------------------------------------------

    def statement(self, node: ast.stmt) -> bool:
        """Evaluate one statement into the environment; False when the evaluator does not know it."""
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.env[node.targets[0].id] = self.expr(node.value)
            return True
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in self.env:
            self.env[node.target.id] = self.binop(node.target, node.op, node.value)
            return True
        if isinstance(node, ast.Expr) and isinstance(call := node.value, ast.Call):
            func = call.func  # `w.masked_fill_(c, v)`, in place
            if isinstance(func, ast.Attribute) and func.attr == "masked_fill_" and isinstance(func.value, ast.Name):
                if func.value.id in self.env:
                    self.env[func.value.id] = self.masked_fill(self.expr(func.value), call.args, call.keywords)
                    return True
            return False
        if _check(node):
            return True  # (`if w.size() != (...): raise ValueError(...)`: on the path that goes on, nothing changes)
        if isinstance(node, ast.If) and not node.orelse:
            return self.optional_mask(node)
        return False

    def optional_mask(self, node: ast.If) -> bool:
        """`if m is not None: w = w + m` (maybe through a slice of m named first): the mask when there is one."""
        test = node.test
        if not (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.IsNot)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
            and test.left.id not in self.env
        ):
            return False
        before = dict(self.env)
        for statement in node.body:
            if _check(statement):
                continue  # (`if m.size() != ...: raise ValueError(...)`: the op raises on a wrong mask too)
            if not self.statement(statement):
                self.env = before
                return False
        changed = [n for n in self.env if self.env[n] is not before.get(n)]
        masked = [n for n in changed if isinstance(t := self.env[n], Op) and t.kind == "mask"]
        if len(masked) != 1 or before.get(masked[0]) is None:
            self.env = before
            return False
        term = self.env[masked[0]]
        assert isinstance(term, Op)
        if term.args[0] is not before[masked[0]] or term.data[0] != "additive":
            self.env = before
            return False
        self.env[masked[0]] = Op("mask", term.args, (*term.data[:2], test.left.id))
        return True

    # --- expressions -----------------------------------------------------------------------------------------

    def expr(self, node: ast.expr) -> Term:
        if isinstance(node, ast.Name) and node.id in self.env:
            return self.env[node.id]
        if isinstance(node, ast.BinOp):
            return self.binop(node.left, node.op, node.right)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute) and node.attr == "mT":
            return Op("T", (self.expr(node.value),), (False,))
        return self.leaf(node)

    def leaf(self, node: ast.expr) -> Term:
        """A value from before the run; the run's own names may appear only as `x.shape[-1]` and the like of a value
        whose last two axes the run kept (a repeated k or v: `key_states.shape[-2]`)."""
        run_names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in self.env}
        if not run_names:
            return Leaf(ast.unparse(node))
        replaced = _SizeOf(self.env).visit(_copy(node))
        if any(isinstance(n, ast.Name) and n.id in self.env for n in ast.walk(replaced)):
            return Opaque(f"`{ast.unparse(node)}` reads a value of the computation")
        return Leaf(ast.unparse(replaced))

    def binop(self, left_node: ast.expr, op: ast.operator, right_node: ast.expr) -> Term:
        if self.scalar(left_node) and self.scalar(right_node):
            return self.leaf(ast.BinOp(left_node, op, right_node))  # (a number: `1.0 / math.sqrt(d)`)
        left, right = self.expr(left_node), self.expr(right_node)
        if isinstance(op, ast.MatMult):
            return self.matmul(left, right)
        if isinstance(op, ast.Mult):
            for tensor, factor, node in ((left, right, right_node), (right, left, left_node)):
                if isinstance(tensor, Op) and isinstance(factor, Leaf) and self.scalar(node):
                    return Op("scale", (tensor,), ("*", ast.unparse(node)))
                if isinstance(tensor, Leaf) and isinstance(factor, Leaf) and self.scalar(node):
                    return Op("scale", (tensor,), ("*", ast.unparse(node)))
        if isinstance(op, ast.Div) and isinstance(left, (Op, Leaf)) and self.scalar(right_node):
            return Op("scale", (left,), ("/", ast.unparse(right_node)))
        if isinstance(op, ast.Add):
            for scores, mask in ((left, right), (right, left)):
                if _scores_like(scores) and isinstance(mask, Leaf):
                    if not re.search(r"mask", mask.code, re.I):
                        # (a bias, ALiBi's or T5's, is not a mask: `< 0` would hide every position it lowers)
                        return Opaque(f"`{mask.code}` is added to the scores: a bias the mask cannot express")
                    return Op("mask", (scores,), ("additive", mask.code, None))
        if isinstance(left, Leaf) and isinstance(right, Leaf):
            return self.leaf(ast.BinOp(left_node, op, right_node))
        return Opaque(f"`{ast.unparse(ast.BinOp(left_node, op, right_node))}` is not part of attention")

    def scalar(self, node: ast.expr) -> bool:
        """Is ``node`` provably a Python number (the op's `scale` is a float)?"""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        if isinstance(node, ast.Name):
            return node.id in self.scalars or (node.id not in self.env and bool(SCALAR_NAME.search(node.id)))
        if isinstance(node, ast.Attribute):
            return isinstance(node.value, ast.Name) and bool(SCALAR_NAME.search(node.attr))
        if isinstance(node, ast.BinOp):
            return self.scalar(node.left) and self.scalar(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.scalar(node.operand)
        if isinstance(node, ast.Subscript):  # x.shape[-1]
            return isinstance(node.value, ast.Attribute) and node.value.attr == "shape" and _int(node.slice) is not None
        if isinstance(node, ast.Call):
            name = qualified(node.func, self.aliases) or ""
            if name in ("math.sqrt", "math.pow") or (isinstance(node.func, ast.Name) and node.func.id == "float"):
                return all(self.scalar(a) for a in node.args) and not node.keywords
            return isinstance(node.func, ast.Attribute) and node.func.attr == "size" and len(node.args) == 1
        return False

    def matmul(self, left: Term, right: Term) -> Term:
        if _kind(_strip(right, "scale", "cast")) == "T" and not _weights(left):
            return Op("scores", (left, right))
        if _weights(left):
            return Op("out", (left, right))
        return Opaque("a product that is neither q @ k^T nor weights @ v")

    def call(self, node: ast.Call) -> Term:
        name = qualified(node.func, self.aliases)
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) and name is None else None
        self_term = self.expr(func.value) if method is not None and isinstance(func, ast.Attribute) else None
        if name in MATMUL and len(node.args) == 2 and not node.keywords:
            return self.matmul(self.expr(node.args[0]), self.expr(node.args[1]))
        if (isinstance(func, ast.Name) and func.id == "repeat_kv") or (name or "").endswith(".repeat_kv"):
            return Op("rep", (self.expr(node.args[0]),)) if len(node.args) == 2 else Opaque("repeat_kv")
        if method == "repeat_interleave" or name in REPEAT_INTERLEAVE:
            return self.repeat_interleave(node, self_term)
        if method == "transpose" and self_term is not None and len(node.args) == 2:
            axes = {_int(node.args[0]), _int(node.args[1])}
            if axes == {-2, -1}:
                return Op("T", (self_term,), (False,))
            if axes == {2, 3}:
                return Op("T", (self_term,), (True,))
        if name in SOFTMAX or method == "softmax":
            return self.softmax(node, self_term if method else None)
        if name in DROPOUT:
            return self.dropout(node, name)
        if method in ("masked_fill",) and self_term is not None:
            return self.masked_fill(self_term, node.args, node.keywords)
        if name in MASKED_FILL and node.args:
            return self.masked_fill(self.expr(node.args[0]), node.args[1:], node.keywords)
        if method in CASTS and self_term is not None and isinstance(self_term, Op):
            return Op("cast", (self_term,))
        if any(not isinstance(self.expr(a), Leaf) for a in [*node.args, *(k.value for k in node.keywords)]) or (
            self_term is not None and not isinstance(self_term, Leaf)
        ):
            return Opaque(f"`{ast.unparse(node.func)}(...)` is not part of attention")
        return self.leaf(node)

    def repeat_interleave(self, node: ast.Call, self_term: Term | None) -> Term:
        args = list(node.args)
        source = self_term if self_term is not None else (self.expr(args.pop(0)) if args else None)
        dim = _arg(ast.Call(func=node.func, args=args[1:], keywords=node.keywords), 0, "dim")
        if source is None or _int(dim) != 1:
            return Opaque("repeat_interleave over an axis other than the heads'")
        return Op("rep", (source,))

    def softmax(self, node: ast.Call, self_term: Term | None) -> Term:
        args = list(node.args)
        source = self_term if self_term is not None else (self.expr(args.pop(0)) if args else None)
        dim = args[0] if args else next((k.value for k in node.keywords if k.arg == "dim"), None)
        extra = {k.arg for k in node.keywords} - {"dim", "dtype"}
        if source is None or extra or _int(dim) not in (-1, 3):
            return Opaque("a softmax over another axis than the last")
        return Op("softmax", (source,), (_int(dim) == 3,))

    def dropout(self, node: ast.Call, name: str) -> Term:
        if not node.args:
            return Opaque("dropout")
        source = self.expr(node.args[0])
        p = _arg(node, 1, "p")
        training = _arg(node, 2, "training" if name.endswith("functional.dropout") else "train")
        if p is None and name.endswith("functional.dropout"):
            p = ast.Constant(0.5)
        inplace = _arg(node, 3, "inplace")
        if p is None or (inplace is not None and not (isinstance(inplace, ast.Constant) and not inplace.value)):
            return Opaque("dropout")
        if not self.scalar(p) and not isinstance(self.leaf(p), Leaf):
            return Opaque("dropout")
        train = ast.unparse(training) if training is not None else "True"
        return Op("dropout", (source,), (ast.unparse(p), train))

    def masked_fill(self, scores: Term, args: list[ast.expr], keywords: list[ast.keyword]) -> Term:
        call = ast.Call(func=ast.Name("masked_fill"), args=args, keywords=keywords)
        condition, value = _arg(call, 0, "mask"), _arg(call, 1, "value")
        if condition is None or value is None:
            return Opaque("masked_fill")
        fill = ast.unparse(value).replace(" ", "")
        number = _number(value)
        if not (NEG_INF.match(fill) or (number is not None and number <= -1e4)):
            return Opaque(f"masked_fill with {ast.unparse(value)} (not -inf or the lowest value): not a mask")
        mask = self.leaf(condition)
        if not isinstance(mask, Leaf):
            return mask
        return Op("mask", (scores,), ("bool", mask.code, None))


def _check(statement: ast.stmt) -> bool:
    """`if <test>: raise ...`: a check that changes no value."""
    return (
        isinstance(statement, ast.If) and not statement.orelse and all(isinstance(s, ast.Raise) for s in statement.body)
    )


def _number(node: ast.expr) -> float | None:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _copy(node: ast.expr) -> ast.expr:
    return copy.deepcopy(node)


_RANDOM = re.compile(r"rand|bernoulli|normal|multinomial|dropout|poisson|uniform|exponential|geometric|cauchy")


class _SizeOf(ast.NodeTransformer):
    """`k_rep.shape[-2]` -> `k.shape[-2]` for a name of the run bound to a repeated (or plain) value from before it:
    the repeat keeps every axis but the heads'; `seq` -> `q.shape[-2]` for a name of the run bound to a size."""

    def __init__(self, env: dict[str, Term]) -> None:
        self.env = env

    def _source(self, node: ast.expr) -> str | None:
        if not isinstance(node, ast.Name) or node.id not in self.env:
            return None
        term = self.env[node.id]
        while isinstance(term, Op) and term.kind in ("rep", "cast"):
            term = term.args[0]
        return term.code if isinstance(term, Leaf) else None

    def visit_Name(self, node: ast.Name) -> ast.expr:
        """A name the run binds to a value of values from before it (`seq = q.shape[-2]`, a causal mask made of
        it): its code, unless that draws random numbers (written twice, it would draw twice)."""
        term = self.env.get(node.id)
        if isinstance(node.ctx, ast.Load) and isinstance(term, Leaf):
            value = ast.parse(term.code, mode="eval").body
            if not _RANDOM.search(term.code):
                return value
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        value = node.value
        if isinstance(value, ast.Attribute) and value.attr == "shape" and _int(node.slice) in (-1, -2, 2, 3):
            source = self._source(value.value)
            if source is not None:
                return ast.parse(f"{source}.shape[{_int(node.slice)}]", mode="eval").body
        return cast(ast.expr, self.generic_visit(node))

    def visit_Call(self, node: ast.Call) -> ast.expr:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "size" and len(node.args) == 1:
            axis = _int(node.args[0])
            source = self._source(func.value) if axis in (-1, -2, 2, 3) else None
            if source is not None:
                return ast.parse(f"{source}.size({axis})", mode="eval").body
        return cast(ast.expr, self.generic_visit(node))


def _strip(term: Term, *kinds: str) -> Term:
    while isinstance(term, Op) and term.kind in kinds:
        term = term.args[0]
    return term


def _kind(term: Term) -> str | None:
    return term.kind if isinstance(term, Op) else None


def _scores_like(term: Term) -> bool:
    return _kind(_strip(term, "scale", "cast", "mask")) == "scores"


def _weights(term: Term) -> bool:
    inner = _strip(term, "cast", "dropout")
    return isinstance(inner, Op) and inner.kind == "softmax"


def _parenthesised(code: str) -> str:
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return f"({code})"
    simple = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)
    return code if isinstance(node, simple) else f"({code})"


def read_attention(term: Term) -> Attention | str:
    """The arguments of the npu_fusion_attention call that computes ``term`` (an ``out``), or why there is none."""
    if not isinstance(term, Op) or term.kind != "out":
        return "not weights @ v"
    weights, value = term.args
    keep_prob = None
    inner = _strip(weights, "cast")
    if isinstance(inner, Op) and inner.kind == "dropout":
        p, training = inner.data
        if _number(ast.parse(p, mode="eval").body) != 0:
            keep_prob = f"1.0 - {_parenthesised(p)}" if training == "True" else f"1.0 - {p} if {training} else 1.0"
        inner = _strip(inner.args[0], "cast")
    if not (isinstance(inner, Op) and inner.kind == "softmax"):
        return "the weights are not a softmax"
    four_d = bool(inner.data[0])
    scores = _strip(inner.args[0], "cast")
    masks: list[tuple[str, str, str | None]] = []
    while isinstance(scores, Op) and scores.kind == "mask":
        masks.append(scores.data)
        scores = _strip(scores.args[0], "cast")
    factors: list[tuple[str, str]] = []
    scores = _factors(scores, factors)
    if not (isinstance(scores, Op) and scores.kind == "scores"):
        return scores.why if isinstance(scores, Opaque) else SCORES_NOT_SEEN
    query_term, key_term = scores.args
    query_term = _factors(query_term, factors)
    transposed = _factors(key_term, factors)
    if not (isinstance(transposed, Op) and transposed.kind == "T"):
        return "k is not transposed on its last two axes"
    if four_d and not transposed.data[0]:
        return "softmax(dim=3) on a tensor not proven 4-D"
    four_d = four_d or bool(transposed.data[0])
    key_term = _factors(transposed.args[0], factors)
    key_rep, key_leaf = _unrepeat(key_term)
    value_rep, value_leaf = _unrepeat(_strip(value, "cast"))
    if not isinstance(query_term, Leaf):
        return "q is not a value from before the computation"
    if not (isinstance(key_leaf, Leaf) and isinstance(value_leaf, Leaf)):
        return "k or v is not a value from before the computation"
    if key_rep != value_rep:
        return "k and v are not repeated alike"
    if any(cond is not None for _, _, cond in masks) and len(masks) > 1:
        return "an optional mask beside another one"
    return Attention(
        query=query_term.code,
        key=key_leaf.code,
        value=value_leaf.code,
        scale=_scale(factors),
        masks=[_atten_mask(kind, code, cond, query_term.code, key_leaf.code) for kind, code, cond in masks],
        keep_prob=keep_prob,
        four_d=four_d,
        gqa=key_rep,
        additive=[code for kind, code, _ in masks if kind == "additive"],
    )


def _factors(term: Term, factors: list[tuple[str, str]]) -> Term:
    term = _strip(term, "cast")
    while isinstance(term, Op) and term.kind == "scale":
        factors.append(term.data)
        term = _strip(term.args[0], "cast")
    return term


def _unrepeat(term: Term) -> tuple[bool, Term]:
    term = _strip(term, "cast")
    if isinstance(term, Op) and term.kind == "rep":
        return True, _strip(term.args[0], "cast")
    return False, term


def _scale(factors: list[tuple[str, str]]) -> str:
    if not factors:
        return "1.0"
    if len(factors) == 1 and factors[0][0] == "*":
        return factors[0][1]
    multiplied = [_parenthesised(code) for op, code in factors if op == "*"]
    divided = [_parenthesised(code) for op, code in factors if op == "/"]
    scale = " * ".join(multiplied) if multiplied else "1.0"
    for d in divided:
        scale = f"{scale} / {d}"
    return scale


def _atten_mask(kind: str, code: str, cond: str | None, query: str, key: str) -> str:
    """npu_fusion_attention's atten_mask (True = masked out) from a masked_fill condition (its polarity already) or
    an additive float mask (HF's: 0 where attended, the dtype's lowest value where not: `< 0`)."""
    if kind == "bool":
        # (broadcast to B1SS: the op takes BNSS, B1SS, 11SS and SS masks only, a (B, 1, 1, S) padding mask raises)
        mask = f"{_parenthesised(code)}.expand({query}.shape[0], 1, {query}.shape[2], {key}.shape[2])"
    else:
        mask = f"{_parenthesised(code)} < 0"
    return mask if cond is None else f"None if {cond} is None else {mask}"

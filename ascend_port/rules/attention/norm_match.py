"""Does a module's forward compute RMSNorm? A small symbolic evaluation of its body.

Each expression becomes a tuple term over the input ("x",), the module's attributes ("self", name) and numbers
("num", text), built with the operations RMSNorm code uses (square, mean over the last axis with keepdim, add,
rsqrt/sqrt, multiply, divide) and dtype casts ("f32", "cast" back to the input dtype, "wcast" to the weight dtype).
``normalize`` drops the casts and flattens products; the result must be exactly x * rsqrt(mean(x^2) + eps) * w (or
* (1 + w)). Any statement or call the evaluator does not know makes the match fail: unknown means "not RMSNorm".
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from ascend_port.python.names import ImportIndex

Term = tuple
X: Term = ("x",)
FLOAT32 = {"torch.float32", "torch.float"}
HALF_DTYPES = {"torch.float16", "torch.half", "torch.bfloat16"}
PARAMETER = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}
FACTORIES = {"torch.ones", "torch.zeros", "torch.empty", "torch.randn", "torch.rand"}
# The term each call of one tensor and nothing else makes: `torch.rsqrt(t)`, and `t.float()`, `t.rsqrt()`.
UNARY_FUNCTIONS = {"torch.rsqrt": "rsqrt", "torch.sqrt": "sqrt", "torch.square": "sq"}
UNARY_METHODS = {"float": "f32", "rsqrt": "rsqrt", "sqrt": "sqrt", "square": "sq"}
CAST_METHODS = ("to", "type_as", "type")


@dataclass(frozen=True)
class RmsNormMatch:
    input: str  # the forward's input parameter
    weight: str  # the weight attribute (self.<weight>)
    eps: str  # the epsilon expression: `self.<attr>` or a number
    gemma: bool  # scale is (1 + weight)
    # the dtype of the forward's result: "input" (cast back to it), "promoted" (of the input and the weight:
    # `weight * x.to(input_dtype)`), "float32" (returned in float32 on purpose) or "weight" (T5: cast to a half weight)
    dtype: str = "promoted"
    # the weight may be None (diffusers' `elementwise_affine=False`): the forward computes RMSNorm in its
    # `if self.<weight> is not None:` branch, and the fused op is for that case only
    optional: bool = False


def _literal(node: cst.BaseExpression) -> object:
    try:
        return ast.literal_eval(cst.Module([]).code_for_node(node).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _split(args: Sequence[cst.Arg]) -> tuple[list[cst.BaseExpression], dict[str, cst.BaseExpression]] | None:
    if any(a.star for a in args):
        return None
    return [a.value for a in args if a.keyword is None], {a.keyword.value: a.value for a in args if a.keyword}


def _single_param(fn: cst.FunctionDef) -> str | None:
    p = fn.params
    if p.posonly_params or p.kwonly_params or not isinstance(p.star_arg, cst.MaybeSentinel) or p.star_kwarg:
        return None
    if len(p.params) != 2 or p.params[0].name.value != "self" or p.params[1].default is not None:
        return None
    return p.params[1].name.value


class _Evaluator:
    def __init__(self, imports: ImportIndex, methods: dict[str, cst.FunctionDef]) -> None:
        self.imports = imports
        self.methods = methods
        self.depth = 0
        self.optional: str | None = None  # the weight of an `if self.<weight> is not None:` branch (see _weight_branch)

    def run(self, fn: cst.FunctionDef, env: dict[str, Term]) -> Term | None:
        if not isinstance(fn.body, cst.IndentedBlock):
            return None
        env = dict(env)
        for i, statement in enumerate(fn.body.body):
            if isinstance(statement, cst.If):
                if not (self._conditional_cast(statement, env) or self._weight_branch(statement, env)):
                    return None
                continue
            if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
                return None
            small = statement.body[0]
            if isinstance(small, cst.Expr) and i == 0 and isinstance(small.value, cst.SimpleString):
                continue  # docstring
            if isinstance(small, cst.Return):
                return self.eval(small.value, env) if small.value is not None else None
            if not self._assign(small, env):
                return None
        return None

    def _assign(self, small: cst.BaseSmallStatement, env: dict[str, Term]) -> bool:
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target, value = small.targets[0].target, small.value
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            target, value = small.target, small.value
        else:
            return False
        term = self.eval(value, env)
        if not isinstance(target, cst.Name) or term is None:
            return False
        env[target.value] = term
        return True

    def _conditional_cast(self, node: cst.If, env: dict[str, Term]) -> bool:
        """T5's `if self.weight.dtype in [torch.float16, torch.bfloat16]: h = h.to(self.weight.dtype)`: a branch
        that only casts names to themselves changes no value, so it is accepted (and has no effect)."""
        if node.orelse is not None or not isinstance(node.body, cst.IndentedBlock):
            return False
        if not self._tests_half_dtype(node.test, env):
            return False
        if not all(self._recasts_unchanged(statement, env) for statement in node.body.body):
            return False
        for statement in node.body.body:  # the value is the same, its dtype is the weight's where that is half
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
            if isinstance(small, cst.Assign) and isinstance(target := small.targets[0].target, cst.Name):
                env[target.value] = ("hcast", env[target.value])
        return True

    def _weight_branch(self, node: cst.If, env: dict[str, Term]) -> bool:
        """diffusers' `if self.weight is not None: <assignments> else: <the no-weight form>`: the branch is evaluated
        (its assignments and conditional casts, nothing else), the other left to the original code, which the fused
        op guarded by the same test does not replace. One such branch per forward."""
        weight = _not_none_attribute(node.test)
        if weight is None or self.optional is not None or self.depth or not isinstance(node.body, cst.IndentedBlock):
            return False
        for statement in node.body.body:
            if isinstance(statement, cst.If):
                if not self._conditional_cast(statement, env):
                    return False
                continue
            if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
                return False
            if not self._assign(statement.body[0], env):
                return False
        self.optional = weight
        return True

    def _tests_half_dtype(self, test: cst.BaseExpression, env: dict[str, Term]) -> bool:
        """`<known term> in [torch.float16, torch.bfloat16]` (a list or tuple of half dtypes, any of them)."""
        return (
            isinstance(test, cst.Comparison)
            and self.eval(test.left, env) is not None
            and all(isinstance(c.operator, cst.In) for c in test.comparisons)
            and all(isinstance(c.comparator, (cst.List, cst.Tuple)) for c in test.comparisons)
            and all(
                self.imports.resolve(e.value) in HALF_DTYPES
                for c in test.comparisons
                if isinstance(c.comparator, (cst.List, cst.Tuple))
                for e in c.comparator.elements
            )
        )

    def _recasts_unchanged(self, statement: cst.BaseStatement, env: dict[str, Term]) -> bool:
        """`name = <term>` where the term, casts dropped, is the value the name already has."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return False
        small = statement.body[0]
        if not (
            isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
        ):
            return False
        name = small.targets[0].target.value
        term = self.eval(small.value, env)
        return name in env and term is not None and normalize(term) == normalize(env[name])

    def eval(self, node: cst.BaseExpression, env: dict[str, Term]) -> Term | None:
        if isinstance(node, cst.Name):
            return env.get(node.value)
        if isinstance(node, (cst.Integer, cst.Float)):
            return ("num", node.value)
        if isinstance(node, cst.Attribute):
            return self._attribute(node, env)
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, env)
        if isinstance(node, cst.Call):
            return self._call(node, env)
        return None

    def _attribute(self, node: cst.Attribute, env: dict[str, Term]) -> Term | None:
        """`self.<name>`, and the dtype of the input (`x.dtype`) or of an attribute (`self.weight.dtype`)."""
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            return ("self", node.attr.value)
        if node.attr.value == "dtype":
            base = self.eval(node.value, env)
            if base == X:
                return ("dtype",)
            if base is not None and base[0] == "self":
                return ("wdtype", base[1])
        return None

    def _binary(self, node: cst.BinaryOperation, env: dict[str, Term]) -> Term | None:
        left, right = self.eval(node.left, env), self.eval(node.right, env)
        if left is None or right is None:
            return None
        op = node.operator
        if isinstance(op, cst.Add):
            return ("add", left, right)
        if isinstance(op, cst.Multiply):
            return ("sq", left) if left == right and left[0] != "num" else ("mul", left, right)
        if isinstance(op, cst.Divide):
            return ("div", left, right)
        if isinstance(op, cst.Power) and right == ("num", "2"):
            return ("sq", left)
        return None

    def _call(self, node: cst.Call, env: dict[str, Term]) -> Term | None:
        split = _split(node.args)
        if split is None:
            return None
        pos, kw = split
        qualified = self.imports.resolve(node.func)
        if qualified is not None:
            return self._function_call(qualified, pos, kw, env)
        if not isinstance(node.func, cst.Attribute):
            return None
        method, receiver = node.func.attr.value, node.func.value
        if isinstance(receiver, cst.Name) and receiver.value == "self" and method in self.methods:
            return self._inline(self.methods[method], pos, kw, env)
        base = self.eval(receiver, env)
        if base is None:
            return None
        return self._method_call(method, base, pos, kw, env)

    def _function_call(
        self, qualified: str, pos: list[cst.BaseExpression], kw: dict[str, cst.BaseExpression], env: dict[str, Term]
    ) -> Term | None:
        """`torch.rsqrt(t)`, `torch.sqrt(t)`, `torch.square(t)`, `torch.pow(t, 2)`, `torch.mean(t, -1, keepdim=True)`;
        the names are mutually exclusive, so each is decided by its own check."""
        if not pos:
            return None
        arg = self.eval(pos[0], env)
        if arg is None:
            return None
        if qualified in UNARY_FUNCTIONS:
            return (UNARY_FUNCTIONS[qualified], arg) if len(pos) == 1 and not kw else None
        if qualified == "torch.pow":
            return ("sq", arg) if len(pos) == 2 and not kw and _literal(pos[1]) == 2 else None
        if qualified == "torch.mean":
            return ("mean", arg) if _last_dim_keepdim(pos[1:], kw) else None
        return None

    def _method_call(
        self,
        method: str,
        base: Term,
        pos: list[cst.BaseExpression],
        kw: dict[str, cst.BaseExpression],
        env: dict[str, Term],
    ) -> Term | None:
        """`base.float()`, `.rsqrt()`, `.sqrt()`, `.square()`, `.pow(2)`, `.mean(-1, keepdim=True)` and the casts;
        the names are mutually exclusive, so each is decided by its own check."""
        if method in UNARY_METHODS:
            return (UNARY_METHODS[method], base) if not pos and not kw else None
        if method == "pow":
            return ("sq", base) if len(pos) == 1 and not kw and _literal(pos[0]) == 2 else None
        if method == "mean":
            return ("mean", base) if _last_dim_keepdim(pos, kw) else None
        if method in CAST_METHODS and len(pos) + len(kw) == 1:
            return self._cast(method, base, pos[0] if pos else kw.get("dtype"), env)
        return None

    def _cast(self, method: str, base: Term, target: cst.BaseExpression | None, env: dict[str, Term]) -> Term | None:
        """`.to(dtype)`, `.type(dtype)`, `.type_as(tensor)`: "f32" to float32, "cast" back to the input's dtype
        (`.to(x.dtype)`, `.type_as(x)`), "wcast" to a weight's (`.to(self.weight.dtype)`); other targets: unknown."""
        if target is None:
            return None
        if self.imports.resolve(target) in FLOAT32 and method != "type_as":
            return ("f32", base)
        dtype = self.eval(target, env)
        if method == "type_as":
            return ("cast", base) if dtype == X else None
        if dtype == ("dtype",):
            return ("cast", base)
        if dtype is not None and dtype[0] == "wdtype":
            return ("wcast", base)
        return None

    def _inline(self, fn: cst.FunctionDef, pos, kw, env: dict[str, Term]) -> Term | None:
        """`self._norm(x.float())`: evaluate the method's body with its parameter bound to the argument."""
        param = _single_param(fn)
        if param is None or len(pos) != 1 or kw or self.depth > 2:
            return None
        arg = self.eval(pos[0], env)
        if arg is None:
            return None
        self.depth += 1
        try:
            return self.run(fn, {param: arg})
        finally:
            self.depth -= 1


def _not_none_attribute(test: cst.BaseExpression) -> str | None:
    """`self.<name> is not None` -> name."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    comparison = test.comparisons[0]
    left = test.left
    if not (isinstance(comparison.operator, cst.IsNot) and isinstance(comparison.comparator, cst.Name)):
        return None
    if comparison.comparator.value != "None" or not isinstance(left, cst.Attribute):
        return None
    return left.attr.value if isinstance(left.value, cst.Name) and left.value.value == "self" else None


def _last_dim_keepdim(pos: list[cst.BaseExpression], kw: dict[str, cst.BaseExpression]) -> bool:
    if set(kw) - {"dim", "keepdim"} or len(pos) > 2:
        return False
    dim = pos[0] if pos else kw.get("dim")
    keepdim = pos[1] if len(pos) > 1 else kw.get("keepdim")
    return dim is not None and keepdim is not None and _literal(dim) in (-1, (-1,), [-1]) and _literal(keepdim) is True


def _factors(term: Term) -> list[Term]:
    """The factors of a product, through casts and nested products."""
    term = normalize(term)
    return list(term[1]) if term[0] == "mul" else [term]


def normalize(term: Term) -> Term:
    """Drop casts, turn a / sqrt(s) into a * rsqrt(s), and sort the operands of products and sums."""
    kind = term[0]
    if kind in ("mul", "add") and len(term) == 2:
        return term  # already normalized: (kind, sorted operands)
    if kind in ("f32", "cast", "wcast", "hcast"):
        return normalize(term[1])
    if kind == "div":
        denominator = normalize(term[2])
        if denominator[0] == "sqrt":
            return normalize(("mul", term[1], ("rsqrt", denominator[1])))
        return ("div", normalize(term[1]), denominator)
    if kind == "mul":
        return ("mul", tuple(sorted(_factors(term[1]) + _factors(term[2]), key=repr)))
    if kind == "add":
        return ("add", tuple(sorted((normalize(term[1]), normalize(term[2])), key=repr)))
    if kind in ("sq", "mean", "rsqrt", "sqrt"):
        return (kind, normalize(term[1]))
    return term


def _is_one(term: Term) -> bool:
    try:
        return term[0] == "num" and float(term[1]) == 1.0
    except ValueError:
        return False


def _classify(term: Term) -> tuple[str, str, bool] | None:
    """(weight attribute, eps code, gemma) when ``term`` is x * rsqrt(mean(x^2) + eps) * w (or * (1 + w))."""
    if term[0] != "mul" or len(term[1]) != 3:
        return None
    factors = list(term[1])
    if X not in factors:
        return None
    factors.remove(X)
    rsqrt = next((f for f in factors if f[0] == "rsqrt"), None)
    if rsqrt is None:
        return None
    factors.remove(rsqrt)
    eps_code = _eps_code(rsqrt[1])
    if eps_code is None:
        return None
    (scale,) = factors
    weight = _scale_weight(scale)
    return None if weight is None else (weight[0], eps_code, weight[1])


def _eps_code(inner: Term) -> str | None:
    """The eps of `mean(x^2) + eps` (the term under the rsqrt) as code: `self.<attr>` or a number."""
    mean = ("mean", ("sq", X))
    if inner[0] != "add" or mean not in inner[1]:
        return None
    eps = next(t for t in inner[1] if t != mean) if inner[1].count(mean) == 1 else None
    if eps is None or eps[0] not in ("self", "num"):
        return None
    return f"self.{eps[1]}" if eps[0] == "self" else eps[1]


def _scale_weight(scale: Term) -> tuple[str, bool] | None:
    """(weight attribute, gemma) when the scale is `self.<weight>` or Gemma's `1 + self.<weight>`."""
    if scale[0] == "self":
        return scale[1], False
    if scale[0] == "add" and any(_is_one(t) for t in scale[1]):
        weight = next((t for t in scale[1] if not _is_one(t)), None)
        if weight is not None and weight[0] == "self":
            return weight[1], True
    return None


def _is_vector_parameter(init: cst.FunctionDef | None, attr: str, imports: ImportIndex) -> bool:
    """``self.<attr> = nn.Parameter(torch.ones(dim))`` (zeros/empty/randn too): a 1-D weight, which is what the
    fused ops expect (their gamma covers the trailing dims it has, so a 2-D weight would normalise two axes)."""
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return False
    values = [v for v in _self_assignments(init.body, attr) if not (isinstance(v, cst.Name) and v.value == "None")]
    return bool(values) and all(_is_vector_parameter_value(v, imports, init) for v in values)


def _self_assignments(body: cst.IndentedBlock, attr: str) -> Iterator[cst.BaseExpression]:
    """The values `self.<attr> = value` statements at the top level of ``body`` assign, in order, and those of the
    branches of its `if` statements (diffusers: `if elementwise_affine: self.weight = ... else: self.weight = None`)."""
    for statement in body.body:
        if isinstance(statement, cst.If):
            branches = [statement.body, statement.orelse.body if statement.orelse is not None else None]
            for branch in branches:
                if isinstance(branch, cst.IndentedBlock):
                    yield from _self_assignments(branch, attr)
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                continue
            target = small.targets[0].target
            if (
                isinstance(target, cst.Attribute)
                and isinstance(target.value, cst.Name)
                and target.value.value == "self"
                and target.attr.value == attr
            ):
                yield small.value


def _is_vector_parameter_value(value: cst.BaseExpression, imports: ImportIndex, init: cst.FunctionDef) -> bool:
    """`nn.Parameter(<factory>(dim))` or `nn.Parameter(<factory>((dim,)))`: one dimension, where `dim` is a size
    (see _is_size), not a shape that may hold several."""
    if not (isinstance(value, cst.Call) and imports.resolve(value.func) in PARAMETER and value.args):
        return False
    factory = value.args[0].value
    if not (isinstance(factory, cst.Call) and imports.resolve(factory.func) in FACTORIES):
        return False
    shape = [a for a in factory.args if a.keyword is None]
    if len(shape) != 1 or shape[0].star:
        return False
    dims = shape[0].value
    if isinstance(dims, (cst.Tuple, cst.List)):
        return len(dims.elements) == 1 and not isinstance(dims.elements[0], cst.StarredElement)
    return _is_size(dims, init)


def _is_size(dims: cst.BaseExpression, init: cst.FunctionDef) -> bool:
    """Is the one argument of the weight's factory an int, not a shape (`torch.ones(shape)` with a 2-D shape makes a
    2-D weight, and the op then normalises over both trailing dims)? An int literal; an ``__init__`` parameter
    annotated ``int`` or with an int default; any other name or attribute unless it reads as a shape
    (`normalized_shape`) or is annotated otherwise (`shape: tuple`). HF's `torch.ones(hidden_size)` is a size."""
    if isinstance(dims, cst.Integer):
        return True
    if isinstance(dims, cst.Attribute):
        return "shape" not in dims.attr.value.lower()
    if not isinstance(dims, cst.Name) or "shape" in dims.value.lower():
        return False
    params = [*init.params.posonly_params, *init.params.params, *init.params.kwonly_params]
    param = next((p for p in params if p.name.value == dims.value), None)
    if param is None or (param.annotation is None and param.default is None):
        return True
    if param.annotation is not None:
        return isinstance(param.annotation.annotation, cst.Name) and param.annotation.annotation.value == "int"
    return isinstance(param.default, cst.Integer)


def match_rms_norm(cls: cst.ClassDef, forward: cst.FunctionDef, imports: ImportIndex) -> RmsNormMatch | None:
    if not isinstance(cls.body, cst.IndentedBlock):
        return None
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    param = _single_param(forward)
    if param is None:
        return None
    evaluator = _Evaluator(imports, {k: v for k, v in methods.items() if k not in ("forward", "__init__")})
    result = evaluator.run(forward, {param: X})
    found = _classify(normalize(result)) if result is not None else None
    if found is None or result is None:
        return None
    weight, eps, gemma = found
    if evaluator.optional not in (None, weight) or not _is_vector_parameter(methods.get("__init__"), weight, imports):
        return None
    dtype = _result_dtype(_dtypes(result, weight))
    return RmsNormMatch(param, weight, eps, gemma, dtype, optional=evaluator.optional is not None)


def _dtypes(term: Term, weight: str) -> frozenset[str]:
    """The dtypes a term's value promotes from: "in" (the input's), "w" (the weight's), "f32"; numbers and other
    attributes (the epsilon) are Python scalars, which do not promote a tensor."""
    kind = term[0]
    if kind == "x":
        return frozenset({"in"})
    if kind == "self":
        return frozenset({"w"}) if term[1] == weight else frozenset()
    if kind in ("f32", "cast", "wcast"):
        return frozenset({{"f32": "f32", "cast": "in", "wcast": "w"}[kind]})
    if kind == "hcast":  # T5: cast to the weight's dtype when it is half, else (a float32 weight) left in float32
        inner = _dtypes(term[1], weight)
        return frozenset({"w"}) if "f32" in inner else inner | {"w"}
    if kind in ("add", "mul", "div"):
        return _dtypes(term[1], weight) | _dtypes(term[2], weight)
    if kind in ("sq", "mean", "rsqrt", "sqrt"):
        return _dtypes(term[1], weight)
    return frozenset()


def _result_dtype(dtypes: frozenset[str]) -> str:
    """float32 absorbs every other float dtype (float64 inputs are not what these modules are written for)."""
    if "f32" in dtypes:
        return "float32"
    if dtypes == {"in"}:
        return "input"
    if dtypes == {"w"}:
        return "weight"
    return "promoted"

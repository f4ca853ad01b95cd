"""What the callers of an attention function pass as its additive mask, in the same module.

NPU425 reads an additive mask as HF builds one (0 / the dtype's lowest value) and gives the op `mask < 0`. Some
transformers models pass a bias through the same parameter instead (granite_speech5 `attention_mask=position_bias`,
swin `relative_position_bias + attention_mask`, SAM's `attention_similarity`, parakeet's `matrix_bd`, doge's
`prepare_dynamic_mask(dt_states)`): for those the port would be wrong. The calls of the function in its module,
directly or through a name bound from an expression that names it (HF's `attention_interface =
ALL_ATTENTION_FUNCTIONS.get_interface(..., eager_attention_forward)`), are read; an argument whose words, or those of
what its caller assigns to it, say bias is reported. Callers in other modules are not seen (medium).
"""

from __future__ import annotations

import ast
import re
import textwrap

import libcst as cst

from ascend_port.python.calls import code_of

# Words of a value that is not a 0 / lowest-value mask.
BIAS_WORDS = re.compile(r"bias|similarit|alibi|dynamic|dt_states|matrix_", re.I)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
MASK_WORD = "mask"


def attention_mask_values(code: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, module: ast.Module | None):
    """What ``fn`` assigns to ``code`` (a name or attribute it passes as a mask), where the code shows it to be an
    attention mask (0 where attended, a large negative where not: read as `< 0`) rather than a bias: its last word
    says mask and no word of it, or of what is assigned to it, says bias; nothing is added to it; and, for a
    parameter (or what is made from one: HF's `causal_mask = attention_mask`), no caller in the module passes a bias
    (``bias_passed``). None where it is not shown to be one."""
    words = code.replace(".", " ").split()
    if MASK_WORD not in words[-1].lower() or any(BIAS_WORDS.search(w) for w in words):
        return None
    values = _assigned(fn, code)
    if values is None:
        return None
    for value in values:
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            return None  # (a mask something is added to: a bias)
        if any(BIAS_WORDS.search(w) for w in _words(value)):
            return None
    sources = {code} | {n.id for v in values for n in ast.walk(v) if isinstance(n, ast.Name)}
    if any(not _no_bias_passed(fn, module, name) for name in sources):
        return None
    return values


def function_ast(function: cst.FunctionDef) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """A LibCST function as Python's ``ast`` reads it (alone, dedented)."""
    try:
        tree = ast.parse(textwrap.dedent(code_of(function.with_changes(decorators=[], leading_lines=[]))))
    except SyntaxError:
        return None
    fn = tree.body[0] if tree.body else None
    return fn if isinstance(fn, FUNCTIONS) else None


def _no_bias_passed(fn: ast.FunctionDef | ast.AsyncFunctionDef, module: ast.Module | None, code: str) -> bool:
    """For a mask that is a parameter of ``fn``: no caller in the module passes a bias to it."""
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    keyword = [a.arg for a in fn.args.kwonlyargs]
    if code not in positional and code not in keyword:
        return True
    index = positional.index(code) if code in positional else 1 << 30
    return bias_passed(module, fn.name, code, index) is None


def _assigned(fn: ast.FunctionDef | ast.AsyncFunctionDef, code: str) -> list[ast.expr] | None:
    """What ``fn`` assigns to ``code`` (a name or attribute); None where it adds to it in place (`mask += bias`)."""
    values: list[ast.expr] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.AugAssign) and ast.unparse(node.target) == code:
            return None
        if isinstance(node, ast.Assign) and any(ast.unparse(t) == code for t in node.targets):
            values.append(node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and ast.unparse(node.target) == code:
            values.append(node.value)
    return values


def bias_passed(module: ast.Module | None, function: str, parameter: str, index: int) -> str | None:
    """The code of an argument a caller in ``module`` passes to ``function``'s ``parameter`` (position ``index``)
    that reads as a bias, not a mask; None when there is none."""
    if module is None:
        return None
    aliases = {function} | {
        target.id
        for node in ast.walk(module)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _names(node.value, function)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    for caller in ast.walk(module):
        if not isinstance(caller, FUNCTIONS):
            continue
        for call in ast.walk(caller):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in aliases):
                continue
            argument = next((k.value for k in call.keywords if k.arg == parameter), None)
            if argument is None and len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args):
                argument = call.args[index]
            if argument is not None and _reads_as_bias(argument, caller):
                return ast.unparse(argument)
    return None


def _names(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _words(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def _reads_as_bias(argument: ast.expr, caller: ast.AST) -> bool:
    words = _words(argument)
    if isinstance(argument, ast.Name):  # (and what the caller assigns to it)
        for node in ast.walk(caller):
            if isinstance(node, ast.Assign) and any(_names(t, argument.id) for t in node.targets):
                words |= _words(node.value)
    return any(BIAS_WORDS.search(word) for word in words)

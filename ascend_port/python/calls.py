"""Call shapes in LibCST trees: binding a call's arguments to parameter names, literal values, keyword arguments
and the commas between arguments after a rewrite changed them."""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst

UNSET = object()  # what literal() returns for an expression that is not a literal
NO_SPACE = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def code_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def literal(node: cst.BaseExpression) -> object:
    """The Python value of a literal expression (`(-1, -1)`, `0.0`, `None`), else UNSET."""
    try:
        return ast.literal_eval(code_of(node).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return UNSET


def keyword_arg(name: str, arg: cst.Arg) -> cst.Arg:
    """``arg`` passed as ``name=...``, keeping its value, comma and the whitespace around it."""
    if arg.keyword is not None and arg.keyword.value == name:
        return arg
    return arg.with_changes(keyword=cst.Name(name), equal=arg.equal if arg.keyword is not None else NO_SPACE)


def bind(call: cst.Call, params: Sequence[str], extra: Sequence[str]) -> tuple[dict[str, cst.Arg], list[str]]:
    """Map the call's arguments to parameter names, or list why that cannot be done safely.

    Positional arguments are taken only up to the end of ``params``; keywords may also name ``extra``.
    """
    bound: dict[str, cst.Arg] = {}
    problems: list[str] = []
    positional = 0
    for arg in call.args:
        if arg.star:
            problems.append(f"{arg.star}{code_of(arg.value)} cannot be checked")
        elif arg.keyword is None:
            if positional < len(params):
                bound[params[positional]] = arg
            positional += 1
        elif arg.keyword.value in params or arg.keyword.value in extra:
            bound[arg.keyword.value] = arg
        else:
            problems.append(f"argument {arg.keyword.value} is unknown")
    if positional > len(params):
        problems.insert(
            0, f"positional arguments after `{params[-1]}` changed meaning between releases (pass them by keyword)"
        )
    return bound, problems


def finish_args(updated: cst.Call, args: list[cst.Arg]) -> list[cst.Arg]:
    """Place commas again after arguments were dropped, moved or added, in the call's own style: the last argument
    gets the call's trailing comma (if it had one), the others the comma that separated its arguments."""
    old = updated.args
    trailing = old[-1].comma if old and isinstance(old[-1].comma, cst.Comma) else None
    inner = (
        old[-2].comma
        if len(old) >= 2 and isinstance(old[-2].comma, cst.Comma)
        else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    out: list[cst.Arg] = []
    for i, a in enumerate(args):
        if i == len(args) - 1:
            out.append(a.with_changes(comma=trailing or cst.MaybeSentinel.DEFAULT))
        elif not isinstance(a.comma, cst.Comma) or a.comma is trailing:
            out.append(a.with_changes(comma=inner))
        else:
            out.append(a)
    return out


def unbind_arg(arg: cst.Arg, dim: int) -> cst.Arg:
    """``qkv`` -> ``*qkv.unbind(dim)``: the packed tensor's parts as separate positional arguments."""
    value = arg.value
    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    unbound = cst.Call(func=cst.Attribute(value=value, attr=cst.Name("unbind")), args=[cst.Arg(cst.Integer(str(dim)))])
    return cst.Arg(value=unbound, star="*", comma=arg.comma)

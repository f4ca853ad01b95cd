"""Device strings in the shapes real code gives them (`"cuda:0"`, `f"cuda:{rank}"`, `"cuda:%d" % i`, `choices=[...]`),
rewritten to the NPU's. The device rules use them, and so do the precision and distributed rules."""

from __future__ import annotations

import re

import libcst as cst

# A name that holds a device (a variable, a keyword, an option); a device string itself.
DEVICE_NAME = re.compile(r"(?i)device|^dev$|accelerator")
DEVICE_STRING = re.compile(r"^cuda(:\d+)?$")
# Format templates that build a device string: "cuda:%d" % i, "cuda:{}".format(i), "cuda:" + str(i).
DEVICE_TEMPLATE = re.compile(r"^cuda:(%[ds]|\{\w*\}|)$")


def _replace_cuda_in_token(node: cst.SimpleString) -> cst.SimpleString:
    return node.with_changes(value=node.value.replace("cuda", "npu", 1))


def rewrite_device_expr(expr: cst.BaseExpression, containers: bool = True) -> cst.BaseExpression | None:
    """The expression with every device string in it turned to npu, or None when there is none.

    Follows the shapes device expressions take in real code; anything else (calls, names) is left alone.
    ``containers`` allows tuples, lists, sets and dicts (`choices=[...]`, `map_location={...}`): right for
    arguments, wrong for settings, where a dict of devices is usually a dispatch table keyed by device type.
    """
    if isinstance(expr, cst.SimpleString):
        return _rewrite_device_string(expr)
    if isinstance(expr, cst.FormattedString):
        return _rewrite_device_fstring(expr)
    if isinstance(expr, cst.BinaryOperation):
        return _rewrite_device_template_operation(expr)
    if isinstance(expr, cst.Call):
        return _rewrite_device_format_call(expr)
    if isinstance(expr, cst.IfExp):
        return _rewrite_device_if_exp(expr, containers)
    if isinstance(expr, cst.BooleanOperation):
        return _rewrite_device_boolean(expr, containers)
    if not containers:
        return None
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return _rewrite_device_elements(expr)
    if isinstance(expr, cst.Dict):
        return _rewrite_device_dict(expr)
    return None


def _rewrite_device_string(expr: cst.SimpleString) -> cst.SimpleString | None:
    """`"cuda"`, `"cuda:0"`."""
    value = expr.evaluated_value
    if isinstance(value, str) and DEVICE_STRING.match(value):
        return _replace_cuda_in_token(expr)
    return None


def _rewrite_device_fstring(expr: cst.FormattedString) -> cst.FormattedString | None:
    """`f"cuda:{rank}"`: only the literal text before the first placeholder names the device type."""
    parts = expr.parts
    if parts and isinstance(parts[0], cst.FormattedStringText) and parts[0].value in ("cuda", "cuda:"):
        first = parts[0].with_changes(value=parts[0].value.replace("cuda", "npu", 1))
        return expr.with_changes(parts=[first, *parts[1:]])
    return None


def _rewrite_device_template_operation(expr: cst.BinaryOperation) -> cst.BinaryOperation | None:
    """`"cuda:" + str(i)`, `"cuda:%d" % i`."""
    if not isinstance(expr.operator, (cst.Add, cst.Modulo)):
        return None
    left = expr.left
    if isinstance(left, cst.SimpleString) and DEVICE_TEMPLATE.match(str(left.evaluated_value)):
        return expr.with_changes(left=_replace_cuda_in_token(left))
    return None


def _rewrite_device_format_call(expr: cst.Call) -> cst.Call | None:
    """`"cuda:{}".format(i)`; any other call is left alone."""
    if not (isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format"):
        return None
    template = expr.func.value
    if isinstance(template, cst.SimpleString) and DEVICE_TEMPLATE.match(str(template.evaluated_value)):
        return expr.with_changes(func=expr.func.with_changes(value=_replace_cuda_in_token(template)))
    return None


def _rewrite_device_if_exp(expr: cst.IfExp, containers: bool) -> cst.IfExp | None:
    """`"cuda" if gpu else "cpu"`: either branch (the condition is not a device)."""
    body, orelse = rewrite_device_expr(expr.body, containers), rewrite_device_expr(expr.orelse, containers)
    if body is None and orelse is None:
        return None
    return expr.with_changes(body=body or expr.body, orelse=orelse or expr.orelse)


def _rewrite_device_boolean(expr: cst.BooleanOperation, containers: bool) -> cst.BooleanOperation | None:
    """`args.device or "cuda"`: either operand."""
    left, right = rewrite_device_expr(expr.left, containers), rewrite_device_expr(expr.right, containers)
    if left is None and right is None:
        return None
    return expr.with_changes(left=left or expr.left, right=right or expr.right)


def _rewrite_device_elements(expr: cst.Tuple | cst.List | cst.Set) -> cst.Tuple | cst.List | cst.Set | None:
    """`choices=["cuda", "cpu"]`: each element (not `*rest`); nested containers are followed."""
    changed = False
    elements = []
    for element in expr.elements:
        new = rewrite_device_expr(element.value) if isinstance(element, cst.Element) else None
        changed |= new is not None
        elements.append(element.with_changes(value=new) if new is not None else element)
    return expr.with_changes(elements=elements) if changed else None


def _rewrite_device_dict(expr: cst.Dict) -> cst.Dict | None:
    """`map_location={"cuda:0": "cuda:1"}`: keys and values (not `**rest`)."""
    changed = False
    elements = []
    for element in expr.elements:
        if isinstance(element, cst.DictElement):
            key, value = rewrite_device_expr(element.key), rewrite_device_expr(element.value)
            if key is not None or value is not None:
                changed = True
                element = element.with_changes(key=key or element.key, value=value or element.value)
        elements.append(element)
    return expr.with_changes(elements=elements) if changed else None


def names_device_option(call: cst.Call, names: re.Pattern[str] = DEVICE_NAME) -> bool:
    """``add_argument("--device", ...)`` (or ``dest="device"``): an option that holds a device, not a
    ``--backend``/``--impl`` whose choices merely include "cuda"."""
    for arg in call.args:
        if (arg.keyword is None or arg.keyword.value == "dest") and isinstance(arg.value, cst.SimpleString):
            value = arg.value.evaluated_value
            if isinstance(value, str) and names.search(value.lstrip("-")):
                return True
    return False

"""NPU103 (and NPU101, NPU104, NPU105 where they are calls): `.cuda()` and the device arguments of calls."""

from __future__ import annotations

import ast
import re

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import dotted
from ascend_port.rules.device.settings import DEVICE_COMPARISON, DEVICE_SETTING, SettingRules
from ascend_port.rules.device.strings import names_device_option, rewrite_device_expr
from ascend_port.rules.device.torch_cuda import CUDA_METHOD
from ascend_port.rules.libraries import library_class, library_objects

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW
# unittest's equality assertions (and numpy.testing's, pytest-style helpers of the same name)
_EQUALITY_ASSERTIONS = frozenset({"assertEqual", "assertEquals", "assertNotEqual", "assertNotEquals", "assert_equal"})
_STRINGS = (cst.SimpleString, cst.FormattedString)


DEVICE_ARGUMENT = rule(
    "NPU103",
    "device-string-argument",
    HIGH,
    "Device strings passed as devices (`torch.device`, `device=`, `map_location=`, `.to()`) -> `npu`.",
    """
    `"cuda"`, `"cuda:N"`, `f"cuda:{i}"`, `"cuda:" + str(i)` and `"cuda:{}".format(i)` become their `npu` forms
    where they are passed as a device: the first argument of `torch.device`, `torch.cuda.set_device`,
    `torch.set_default_device`, `.to()`, the second of `torch.load`, the keyword arguments `device=`,
    `device_type=`, `device_map=` and `map_location=` of any call, and a positional argument of a function of the
    module (defined once at its top) whose parameter there is named for a device (`def tables(seq, device)` called
    as `tables(128, "cuda")`). Conditional expressions and dicts
    (`map_location={"cuda:0": "cuda:1"}`) are followed. Other strings are never touched.

    Before:
        import torch
        device = torch.device("cuda", local_rank)
        state = torch.load(path, map_location=f"cuda:{rank}")
    After:
        import torch
        device = torch.device("npu", local_rank)
        state = torch.load(path, map_location=f"npu:{rank}")
    Stays (another device's string, and a message that names CUDA):
        import torch
        x = torch.zeros(3, device="xpu")
        message = "moved to cuda:0"
    """,
)


# Functions whose first positional argument is a device.
DEVICE_FIRST_ARG = {
    "torch.device",
    "torch.set_default_device",
    "torch.get_device_module",
    "torch.Generator",
    "torch.cuda.set_device",
    "torch.cuda.device",
    "torch.npu.set_device",
    "torch.npu.device",
}


DEVICE_KEYWORDS = {"device", "device_type", "device_map", "map_location"}


CUDA_METHOD_KEYWORDS = {"device", "non_blocking", "memory_format"}
# Decorators that keep a function's positional parameters where they are.
_SIGNATURE_KEEPING = frozenset({"no_grad", "inference_mode", "cache", "lru_cache", "wraps", "enable_grad"})


def module_functions(facts: ModuleFacts) -> dict[str, tuple[str, ...]]:
    """The module's own functions by name, each with its positional parameters' names: the functions `def`ined
    at the module's top, once, under no decorator that could change their signature. A name the module's top binds
    otherwise too (an import, an assignment, a second `def`) is left out: which function a call reaches is not
    known."""
    tree = facts.tree
    if tree is None:
        return {}
    bound: dict[str, int] = {}
    functions: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        names: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [(a.asname or a.name).split(".")[0] for a in node.names]
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        for name in names:
            bound[name] = bound.get(name, 0) + 1
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and all(
            _keeps_signature(d) for d in node.decorator_list
        ):
            functions[node.name] = tuple(a.arg for a in (*node.args.posonlyargs, *node.args.args))
    return {name: params for name, params in functions.items() if bound.get(name) == 1}


def _keeps_signature(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
    return name in _SIGNATURE_KEEPING


def _has_cuda_signature(call: cst.Call) -> bool:
    """Could this be `Tensor.cuda`/`Module.cuda`? A user's own `.cuda(x, meta=...)` method is not ours to rename."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return len(positional) <= 1 and keywords <= CUDA_METHOD_KEYWORDS


class CallRules(SettingRules):
    """NPU103 (and NPU101, NPU104, NPU105 in calls): `.cuda()`, device arguments, `add_argument("--device")`."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self._keep_depth:
            if id(original) in self._kept_calls:
                self._keep_depth -= 1
            return updated  # a CUDA guard (or inside one), kept as it is
        func = original.func
        qualified = self.ctx.imports.resolve(func)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method == "cuda" and self.ctx.claimed_by(original) is not None:
                pass  # made device-neutral by NPU122 (rules/islands.py)
            elif method == "cuda" and qualified is None and self._reaches_user_cuda(func.value, original):
                pass  # the class's own cuda() (NPU113): there is no npu() on it
            elif method == "cuda" and qualified is None and self._library_object(func.value, original):
                pass  # `Params4bit(...).cuda()` quantizes on CUDA: CUDA-only, as the library's TODO says (NPU504)
            elif method == "cuda" and qualified is None and _has_cuda_signature(original):
                new_func = updated.func.with_changes(attr=cst.Name("npu"))
                updated = (
                    self.fix(CUDA_METHOD, original, updated.with_changes(func=new_func), ".cuda() -> .npu()") or updated
                )
            elif method == "to" and qualified is None:
                updated = self._device_positional(original, updated, 0)
            elif method == "startswith" and self._device_context(func.value):
                updated = self._rewrite_args(original, updated, DEVICE_COMPARISON, positions={0})
            elif method in _EQUALITY_ASSERTIONS and (at := self._compares_device_string(original)) is not None:
                # `self.assertEqual(prior.loc.device.type, "cuda")`: a device comparison, as `==` is
                updated = self._rewrite_args(original, updated, DEVICE_COMPARISON, positions={at})
            elif method == "add_argument" and names_device_option(original, self._device_name):
                updated = self._rewrite_args(original, updated, DEVICE_SETTING, keywords={"default", "choices"})
        if qualified in DEVICE_FIRST_ARG or (qualified or "").replace(".npu.", ".cuda.") in DEVICE_FIRST_ARG:
            updated = self._device_positional(original, updated, 0)
            if qualified == "torch.device":
                updated = self._rewrite_args(original, updated, DEVICE_ARGUMENT, keywords={"type"})
        elif qualified == "torch.load":
            updated = self._device_positional(original, updated, 1)
        elif qualified == "pytest.mark.parametrize" and self._parametrizes_device(original):
            # `@pytest.mark.parametrize("device", ["cpu", "cuda"])`: the guard that skips "cuda" is ported with it
            updated = self._rewrite_args(original, updated, DEVICE_SETTING, positions={1}, keywords={"argvalues"})
        elif qualified is None and isinstance(func, cst.Name) and (indexes := self._device_parameters(original, func)):
            updated = self._rewrite_args(original, updated, DEVICE_ARGUMENT, positions=indexes)
        updated = self._rewrite_args(original, updated, DEVICE_ARGUMENT, keywords=DEVICE_KEYWORDS)
        return self._rewrite_args(original, updated, DEVICE_SETTING, keyword_filter=self._device_name)

    def _library_object(self, receiver: cst.BaseExpression, call: cst.Call) -> bool:
        """Is ``receiver`` (statically) an object of a CUDA-only library's class (libraries.library_objects):
        `bnb.nn.Params4bit(...)` itself, or what the module assigned one to before ``call`` in the same function?
        Its `.cuda()` stays: moved to the NPU, it would run none of the library's CUDA code there."""
        if isinstance(receiver, cst.Call):
            return library_class(self.ctx.imports.resolve(receiver.func))
        code = dotted(receiver)
        held = self.ctx.fact(library_objects).get(code) if code is not None else None
        if not held:
            return False
        line = self.ctx.line_of(call)
        return any(first < line <= last for first, last, _ in held)

    def _device_parameters(self, call: cst.Call, function: cst.Name) -> frozenset[int]:
        """The positions of the device parameters of the module's own function ``function`` (module_functions),
        asked only where the call passes a CUDA device string by position."""
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if not any(rewrite_device_expr(value) is not None for value in positional):
            return frozenset()
        params = self.ctx.fact(module_functions).get(function.value, ())
        return frozenset(i for i, name in enumerate(params) if self._device_name.search(name))

    def _parametrizes_device(self, call: cst.Call) -> bool:
        """Does ``pytest.mark.parametrize`` give a test one argument, named for a device (`"device"`)?"""
        names = call.args[0].value if call.args and call.args[0].keyword is None else None
        value = names.evaluated_value if isinstance(names, cst.SimpleString) else None
        return isinstance(value, str) and "," not in value and bool(self._device_name.search(value.strip()))

    def _device_positional(self, original: cst.Call, updated: cst.Call, index: int) -> cst.Call:
        return self._rewrite_args(original, updated, DEVICE_ARGUMENT, positions={index})

    def _compares_device_string(self, call: cst.Call) -> int | None:
        """The position of the device string an equality assertion compares with a device (`assertEqual(x.device.type,
        "cuda")`: 1), else None."""
        first, second = ([a.value for a in call.args if a.keyword is None and not a.star] + [None, None])[:2]
        for at, string, other in ((0, first, second), (1, second, first)):
            if isinstance(string, _STRINGS) and other is not None and not isinstance(other, _STRINGS):
                if self._device_context(other):
                    return at
        return None

    def _rewrite_args(
        self,
        original: cst.Call,
        updated: cst.Call,
        rule,
        *,
        positions=frozenset(),
        keywords=frozenset(),
        keyword_filter: re.Pattern | None = None,
    ) -> cst.Call:
        args = list(updated.args)
        changed = False
        positional = 0
        for i, arg in enumerate(args):
            if arg.star or (i < len(original.args) and self.ctx.claimed_by(original.args[i].value) is not None):
                continue  # (claimed: a later rule ports this argument, e.g. NPU806's lm-eval device "npu:0")
            if arg.keyword is None:
                selected = positional in positions
                positional += 1
            else:
                name = arg.keyword.value
                selected = name in keywords or (
                    keyword_filter is not None and name not in DEVICE_KEYWORDS and bool(keyword_filter.search(name))
                )
            if selected and (new := rewrite_device_expr(arg.value)) is not None:
                args[i] = arg.with_changes(value=new)
                changed = True
        if not changed:
            return updated
        return self.fix(rule, original, updated.with_changes(args=args), "device string cuda -> npu") or updated

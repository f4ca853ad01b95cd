"""NPU104, NPU105, NPU111: where code sets a device (`device = "cuda"`, defaults, `--device` options), compares one
(`x.device.type == "cuda"`) or names a CUDA environment variable."""

from __future__ import annotations

import ast

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.device_facts import Around, dotted_ast
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.rules.device.base import _descendants, switches_cuda_only_feature
from ascend_port.rules.device.methods import MethodRules
from ascend_port.rules.device.strings import rewrite_device_expr

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

DEVICE_SETTING = rule(
    "NPU104",
    "device-string-setting",
    MEDIUM,
    "Device strings stored in device settings (variables, defaults, argparse, dict keys) -> `npu`.",
    """
    A device string assigned to a name that says it holds a device (`device`, `self.device`, `DEVICE_TYPE`,
    `accelerator`), a parameter default of such a parameter, the `default=`/`choices=` of an argparse option that
    names a device (`--device`, `--accelerator`; not `--backend` or `--impl`), a dict entry whose key names a
    device, the devices a test is parametrized with (`@pytest.mark.parametrize("device", ["cpu", "cuda"])`) or a
    loop runs over (`for device in ["cpu", "cuda"]:`), or the value a function returns when its name says it
    returns a device (`get_device`, `resolve_device`) or CUDA is asked for it (`return "cuda" if
    torch.cuda.is_available() else "cpu"`, a return under `if device == "cuda":`, also as the device of a returned
    tuple: `return "cuda", torch.bfloat16`): the test is ported with it, and
    an NPU host must not be handed "cuda". A value computed from Triton's target name
    (`get_current_target().backend`) stays. The name is the evidence, hence medium confidence: review the diff.

    Before:
        parser.add_argument("--device", default="cuda")
        def run(device: str = "cuda:0"): ...
    After:
        parser.add_argument("--device", default="npu")
        def run(device: str = "npu:0"): ...
    Stays (a --backend option names an implementation, not a device):
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--backend", default="cuda", choices=["cuda", "triton"])
    """,
)


DEVICE_COMPARISON = rule(
    "NPU105",
    "device-string-comparison",
    HIGH,
    "Comparisons and membership tests against device strings -> `npu`.",
    """
    `x.device.type == "cuda"`, `"cuda" in str(device)`, `device in ("cuda", "cpu")`,
    `device.startswith("cuda")` and unittest's `assertEqual(x.device.type, "cuda")` compare a device type; on an NPU
    host the type is `npu`. The other side must hold
    a device: its code says device, dev or accelerator, or reads `.type`. Any other "cuda" is not a device and
    stays: a library's backend or implementation name (`backend == "cuda"`, `impl == "cuda"`, ONNX Runtime's
    provider), and Triton's target name (`get_current_target().backend == "cuda"`, and the variables and functions
    of the module that hold it, even one called `device_platform`). In an `and`/`or` chain, or an early exit
    (`assert`, `if ...: return/raise`), that guards a CUDA capability check left as it is (NPU108), the device
    test stays "cuda" too. So does a test that switches a CUDA-only feature: the `if` (its test and its branches) or
    the statement around it names FP8, CUDA graphs, bitsandbytes, nvFuser, TensorRT, Triton, CUTLASS, Hopper...
    (`if device != "cuda": warn("fp8 needs CUDA")`): ported, it would turn the feature on exactly on the NPU.

    Before:
        import torch
        if x.device.type == "cuda":
            x = x.half()
    After:
        import torch
        if x.device.type == "npu":
            x = x.half()
    Stays (another device's branch):
        import torch
        def sync(device):
            if device.type == "xpu":
                torch.xpu.synchronize()
    """,
)


CUDA_ENV_VAR = rule(
    "NPU111",
    "cuda-env-var",
    HIGH,
    "CUDA environment variable names in Python strings -> their Ascend names.",
    """
    A string that is exactly the name of a CUDA runtime variable, read or set from Python (`os.environ[...]`,
    `os.getenv(...)`, an `env={...}` dict), becomes the Ascend name: `CUDA_VISIBLE_DEVICES` ->
    `ASCEND_RT_VISIBLE_DEVICES`, `CUDA_LAUNCH_BLOCKING` -> `ASCEND_LAUNCH_BLOCKING`, `PYTORCH_CUDA_ALLOC_CONF` ->
    `PYTORCH_NPU_ALLOC_CONF`, `PYTORCH_NO_CUDA_MEMORY_CACHING` -> `PYTORCH_NO_NPU_MEMORY_CACHING`. Docstrings stay,
    and so does a function that runs `nvidia-smi` (python/device_model.py keeps it whole): there
    `CUDA_VISIBLE_DEVICES` filters the NVIDIA GPUs nvidia-smi lists, which no Ascend variable names.

    Before:
        os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
    After:
        os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"
    Stays (a build variable, not a runtime one):
        import os
        home = os.environ.get("CUDA_HOME")
    """,
)


# The questions whose answer chooses CUDA (`"cuda" if torch.cuda.is_available() else "cpu"`).
CUDA_AVAILABILITY = {"torch.cuda.is_available", "torch.npu.is_available"}

CUDA_ENV_VARS = {
    "CUDA_VISIBLE_DEVICES": "ASCEND_RT_VISIBLE_DEVICES",
    "CUDA_LAUNCH_BLOCKING": "ASCEND_LAUNCH_BLOCKING",
    "PYTORCH_CUDA_ALLOC_CONF": "PYTORCH_NPU_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "PYTORCH_NO_NPU_MEMORY_CACHING",
}


class SettingRules(MethodRules):
    """NPU104, NPU105, NPU111: device settings, comparisons and environment variables."""

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        if id(original) in self._off:
            return self._turned_off(original, updated)  # an SM gate (NPU112)
        if (
            self._keep_depth
            or id(original) in self._kept_comparisons
            or switches_cuda_only_feature(original, self._statements[-1] if self._statements else None)
        ):
            return updated
        operands = [original.left, *(t.comparator for t in original.comparisons)]
        new_operands: list[cst.BaseExpression] = [updated.left, *(t.comparator for t in updated.comparisons)]
        changed = False
        for i, target in enumerate(original.comparisons):
            if not isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
                continue
            # the string on either side of the operator (a container only on the right: `device in ("cuda", ...)`)
            for index, other, kinds in (
                (i, operands[i + 1], (cst.SimpleString, cst.FormattedString)),
                (i + 1, operands[i], (cst.SimpleString, cst.FormattedString, cst.Tuple, cst.List, cst.Set)),
            ):
                if not isinstance(operands[index], kinds) or isinstance(other, kinds):
                    continue
                if (new := rewrite_device_expr(new_operands[index])) is not None and self._device_context(other):
                    new_operands[index] = new
                    changed = True
        if not changed:
            return updated
        targets = [t.with_changes(comparator=c) for t, c in zip(updated.comparisons, new_operands[1:])]
        replacement = updated.with_changes(left=new_operands[0], comparisons=targets)
        return self.fix(DEVICE_COMPARISON, original, replacement, "device comparison cuda -> npu") or updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if any(self._names_device(t.target) for t in original.targets) and not self._holds_triton_target(
            original.value
        ):
            if (new := rewrite_device_expr(updated.value, containers=False)) is not None:
                return (
                    self.fix(DEVICE_SETTING, original, updated.with_changes(value=new), "device setting cuda -> npu")
                    or updated
                )
        return updated

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign:
        if updated.value is not None and self._names_device(original.target):
            if (new := rewrite_device_expr(updated.value, containers=False)) is not None:
                return (
                    self.fix(DEVICE_SETTING, original, updated.with_changes(value=new), "device setting cuda -> npu")
                    or updated
                )
        return updated

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        """`for device in ["cpu", "cuda"]:`: a loop over devices, each a device setting."""
        if (
            isinstance(original.target, cst.Name)
            and self._device_name.search(original.target.value)
            and isinstance(updated.iter, (cst.List, cst.Tuple))
            and (new := rewrite_device_expr(updated.iter)) is not None
        ):
            return (
                self.fix(DEVICE_SETTING, original, updated.with_changes(iter=new), "device setting cuda -> npu")
                or updated
            )
        return updated

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        if updated.value is None or original.value is None:
            return updated
        line = self.ctx.line_of(original)
        definitions = self._definitions()
        around = definitions.around(line) if definitions is not None else []
        # A tuple is the device with what was chosen beside it (`return "cuda", torch.bfloat16`), where a CUDA test
        # chose it: a function named for a device may return ("cuda", major) as a description of the host.
        tuple_ = isinstance(updated.value, cst.Tuple)
        if tuple_:
            chosen = (
                self._in_cuda_branch(line, around)
                and not self._test_kept()
                and not self._holds_triton_target(original.value)
            )
        else:
            chosen = self._returns_device(original.value, line, around)
        if not chosen:
            return updated
        if (new := rewrite_device_expr(updated.value, containers=tuple_)) is not None:
            return (
                self.fix(DEVICE_SETTING, original, updated.with_changes(value=new), "device returned cuda -> npu")
                or updated
            )
        return updated

    def _returns_device(self, value: cst.BaseExpression, line: int, around: Around) -> bool:
        """Does `return <value>` on ``line``, inside the definitions ``around`` it, hand back a device: the
        function's name says it returns one (`get_device`, `_resolve_device_map`), or the value is chosen by asking
        CUDA (`"cuda" if torch.cuda.is_available() else "cpu"`)? A value built from Triton's target name is not."""
        if self._holds_triton_target(value):
            return False
        if (
            isinstance(value, cst.IfExp)
            and isinstance(value.test, cst.Call)
            and self.ctx.imports.resolve(value.test.func) in CUDA_AVAILABILITY
        ):
            return True
        if around and self._reads_triton and (facts := self._facts()) is not None:
            if facts.triton_target(set(), {around[-1][0].name}, line):
                return False  # a function that returns Triton's target name ("cuda" its fallback) returns no device
        if around and self._device_name.search(around[-1][0].name):
            return True
        return self._in_cuda_branch(line, around)

    def _test_kept(self) -> bool:
        """Does the innermost `if` around hold its CUDA test on CUDA (a kept capability probe inside it): its
        `return ("cuda", major, minor)` stays with it."""
        test = next((s.test for s in reversed(self._statements) if isinstance(s, cst.If)), None)
        return test is not None and any(
            id(node) in self._kept_comparisons
            or (isinstance(node, cst.Call) and id(node.func) in self._kept_attributes)
            for node in _descendants(test)
        )

    def _in_cuda_branch(self, line: int, around: Around) -> bool:
        """Is the `return` on ``line`` in the body of an `if` that asks CUDA, within its own function (the innermost
        of the definitions ``around`` it)?"""
        return _under_cuda_test(self.ctx.facts(), line, around[-1][0].lineno if around else 0)

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        if updated.default is not None and self._device_name.search(original.name.value):
            if (new := rewrite_device_expr(updated.default, containers=False)) is not None:
                return (
                    self.fix(DEVICE_SETTING, original, updated.with_changes(default=new), "device default cuda -> npu")
                    or updated
                )
        return updated

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        key = original.key
        if isinstance(key, cst.SimpleString) and self._device_name.search(str(key.evaluated_value)):
            if (new := rewrite_device_expr(updated.value, containers=False)) is not None:
                return (
                    self.fix(DEVICE_SETTING, original, updated.with_changes(value=new), "device setting cuda -> npu")
                    or updated
                )
        return updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        if id(original) in self._docstrings:
            return updated
        value = original.evaluated_value
        if isinstance(value, str) and value in CUDA_ENV_VARS:
            new = updated.with_changes(value=updated.value.replace(value, CUDA_ENV_VARS[value]))
            return self.fix(CUDA_ENV_VAR, original, new, f"{value} -> {CUDA_ENV_VARS[value]}") or updated
        return updated


def _under_cuda_test(facts: ModuleFacts, line: int, function: int) -> bool:
    """Is the `return` on ``line`` in the body of an `if` that asks CUDA (`torch.cuda.is_available()` or a
    comparison with "cuda") inside its own function, the innermost around the line, which starts on line
    ``function``? (Read from the module's statements: no walk of its expressions.)"""
    return any(
        test.lineno > function
        and test.body[0].lineno <= line <= (test.body[-1].end_lineno or test.body[-1].lineno)
        and _asks_cuda(test.test)
        for test in facts.statements(ast.If)
    )


def _asks_cuda(test: ast.expr) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and any(
            isinstance(c, ast.Constant) and c.value == "cuda" for c in (node.left, *node.comparators)
        ):
            return True
        if isinstance(node, ast.Call) and (dotted_ast(node.func) or "").endswith("cuda.is_available"):
            return True
    return False

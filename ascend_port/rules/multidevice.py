"""NPU120, NPU121: code that serves several devices gains an NPU path beside its CUDA one instead of losing it.

python/device_model.py reads each module's devices before any rewrite; every other rule leaves the code it keeps
alone (another vendor's, or a dispatch that already handles the NPU). This module acts on the rest of a multi-device
dispatch: where the CUDA branch of an if/elif chain, or the ``"cuda"`` entry of a device-keyed table, can be ported
by the other rules, the ported copy is added beside the untouched original (NPU120); where it cannot (a conditional
expression, a ``match``, a test the rules cannot turn into an NPU test, the CUDA member of a per-device family
without an NPU member), a TODO says so (NPU121).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Sequence

import libcst as cst

from ascend_port.core import library_support
from ascend_port.core.catalogue import Confidence, Rule, rule
from ascend_port.core.findings import Finding
from ascend_port.core.sources import python_lines
from ascend_port.python import device_model
from ascend_port.python.calls import code_of
from ascend_port.python.device_facts import DEVICE_OPERAND
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import ImportIndex
from ascend_port.python.parsing import parse_quietly
from ascend_port.python.scopes import Trigger, statement
from ascend_port.python.transformer import ALL_OTHERS, PortContext, PortTransformer
from ascend_port.rules.device.base import switches_cuda_only_feature
from ascend_port.rules.device.strings import DEVICE_NAME, names_device_option

NPU_BESIDE_CUDA = rule(
    "NPU120",
    "npu-beside-cuda",
    Confidence.MEDIUM,
    "A multi-device if/elif chain or device-keyed table without an NPU path gains one beside its CUDA path.",
    """
    Code that already serves several devices (CUDA and MPS, XPU, HPU, ...) keeps them all: the CUDA branch of an
    if/elif chain whose tests name CUDA and another accelerator stays as it is, and its port (by the other rules:
    the test and the body) is added as an `elif` right after it; a dict keyed by device names with a `"cuda"` key and
    no `"npu"` key gains an `"npu"` entry right after the CUDA one, its value ported. Other devices' branches and
    entries, and the fallback `else`, are never edited. The code still runs where torch_npu is not installed: an
    NPU test or entry that reads `torch.npu` is guarded by `hasattr(torch, "npu")` (the entry is then None, as
    tables spell "not on this device"), and `import torch_npu` by `try`/`except ImportError`. Medium: the NPU
    branch is the CUDA one ported, so it is as right as those rewrites; a chain also counts when its `if`
    statements are the statements of one block (`if xpu: return ...` / `if cuda: return ...`).
    In a module that gains NPU branches, the checks on the way to them accept "npu" too: a literal list of devices
    with `"cuda"` and another device gets `"npu"` after `"cuda"` in a membership test of a device
    (`assert device in [...]`, `if device not in (...): raise`), the `choices=` of a `--device` option and the
    `Literal[...]` of a device parameter (a `None` in the list is no device: `accelerator not in ["auto", "cuda",
    "mps", None]` is widened too); never in a test that switches a CUDA-only feature (FP8, mxfp4, CUDA graphs, ...:
    it stays off on the NPU), nor Lightning's `accelerator` names, which reject "npu". In any module (of a project
    that does not support the NPU on its own: there such a list is its choice), the test of a branch that serves
    the listed devices by the value's name (`elif accelerator in ["cuda", "mps"]:` whose body reads `accelerator`
    and names no device: `f"{accelerator}:{i}"`) gets "npu" too, wherever the value comes from.
    A function of the module that counts the NVIDIA GPUs by running nvidia-smi (it runs it itself and returns only
    `len(...)` or an integer: LitServe's `check_cuda_with_nvidia_smi`) is the project's own CUDA count probe: in the
    NPU branch beside a CUDA branch that calls it (`if check_cuda_with_nvidia_smi() > 0: return "cuda"`), the call
    becomes `_npu_device_count()`, which the port writes once after that function (the NPUs torch_npu sees, 0
    without it; its imports are its own, for a module that imports torch only where it needs it). The probe itself
    and the CUDA branch keep their calls.
    A name bound once to `torch.cuda.is_available()` (`HAS_CUDA = ...`) keeps its meaning on both sides: where
    such chains are its only uses, its binding stays CUDA's and the NPU branch beside `if HAS_CUDA:` asks
    `torch.npu.is_available()` itself; where other code uses it too (and the port moves that code and the binding
    to the NPU), the branch it tests moves with them, in place.

    Before:
        import torch

        if torch.cuda.is_available():
            device = torch.device("cuda")
        elif torch.backends.mps.is_available():
            device = torch.device("mps")
        else:
            device = torch.device("cpu")
        EMPTY_CACHE = {
            "cuda": torch.cuda.empty_cache,
            "mps": torch.mps.empty_cache,
            "cpu": None,
        }
    After:
        import torch

        if torch.cuda.is_available():
            device = torch.device("cuda")
        elif hasattr(torch, "npu") and torch.npu.is_available():
            device = torch.device("npu")
        elif torch.backends.mps.is_available():
            device = torch.device("mps")
        else:
            device = torch.device("cpu")
        EMPTY_CACHE = {
            "cuda": torch.cuda.empty_cache,
            "npu": torch.npu.empty_cache if hasattr(torch, "npu") else None,
            "mps": torch.mps.empty_cache,
            "cpu": None,
        }
    Stays (a chain that has its NPU branch already):
        import torch

        if torch.cuda.is_available():
            device = "cuda"
        elif hasattr(torch, "npu") and torch.npu.is_available():
            device = "npu"
        else:
            device = "cpu"
    """,
    follows=("NPU1",),
    writes=("_npu_device_count",),  # (NPU_COUNT, below)
)
MULTI_DEVICE_BY_HAND = rule(
    "NPU121",
    "multi-device-by-hand",
    Confidence.LOW,
    "Multi-device code the port cannot give an NPU path (left unchanged): add one by hand.",
    """
    Where code serves CUDA and other devices but not the NPU, and no NPU path can be added mechanically, the code is
    left as it is (porting its CUDA part in place would break CUDA and leave a half-NPU path) with this TODO: a
    conditional expression or `match` over devices, a CUDA branch whose test the rules cannot turn into an NPU test
    (`if device.type == "cuda"` with the device built elsewhere), and the CUDA member of a family of per-device modules
    (`cuda_accelerator.py` beside `hpu_accelerator.py`, ...) without an NPU member, which is reported, not edited.

    Before:
        dtype = torch.float16 if device == "cuda" else torch.float32 if device == "mps" else torch.bfloat16
    After:
        # TODO(ascend-port): NPU121 [low] a choice between CUDA and other devices, without the NPU: add an NPU case
        dtype = torch.float16 if device == "cuda" else torch.float32 if device == "mps" else torch.bfloat16
    """,
)


def _fork_scope(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The whole if/elif chain when a CUDA match is in a multi-device chain (its NPU branch is built from all of it),
    else the statement."""
    for parent, node in zip([None, *path], path):
        if isinstance(node, ast.If) and device_model.is_dispatch(node, parent):
            return node
    return statement(path, imports)


def _branches(node: cst.If) -> tuple[list[cst.If], cst.Else | None]:
    branches = [node]
    while isinstance(node.orelse, cst.If):
        node = node.orelse
        branches.append(node)
    return branches, node.orelse


def _is_chunk_wrapper(node: cst.If) -> bool:
    """``if 1:``: the wrapper the port parses an indented chunk in (port/python.py), no device chain. Its line is
    the line above the chunk, which may be a device chain's: it must not be taken for that chain."""
    return isinstance(node.test, cst.Integer) and node.test.value == "1" and not node.orelse


# What a test that names CUDA says, as the device model reads it (device_model.words, _string_device), or an escape
# that may spell it in a string.
_MAY_NAME_CUDA = re.compile(r"cuda|nccl|nvidia|\\", re.IGNORECASE)


class MultiDeviceTransformer(PortTransformer):
    # It builds an NPU branch from what all the others made of a CUDA branch, the try statements of
    # KernelTransformer included.
    RUNS_AFTER = (ALL_OTHERS, "KernelTransformer")
    # A fork's test or a choice names CUDA as the device model reads names (in any case, inside identifiers), in a
    # module whose text names another device: what the model forks or leaves by hand names one.
    TRIGGERS = (Trigger(r"(?i:cuda|nccl|nvidia)", _fork_scope, when=device_model.may_keep_anything),)
    RULES = (NPU_BESIDE_CUDA, MULTI_DEVICE_BY_HAND)
    SEES_KEPT_CODE = True

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # In a module that imports Lightning, `accelerator` is Lightning's accelerator name, which rejects "npu".
        lightning = library_support.imports_lightning(ctx.imports.aliases)
        self._device_name = library_support.DEVICE_NAME_IN_LIGHTNING if lightning else DEVICE_NAME
        self._device_operand = library_support.DEVICE_OPERAND_IN_LIGHTNING if lightning else DEVICE_OPERAND
        self._elifs: set[int] = set()
        self._findings_at: dict[int, int] = {}
        self._by_hand_lines: set[int] = set()  # (a nested conditional expression is one choice)

    def visit_If(self, node: cst.If) -> None:
        if id(node) not in self._elifs:
            self._findings_at[id(node)] = len(self.ctx.findings)
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.BaseStatement:
        if id(original) in self._elifs or _is_chunk_wrapper(original):
            return updated
        old, old_final = _branches(original)
        # (a fork is a branch whose test names CUDA, or a final block that does: the model is not even read)
        if not any(_MAY_NAME_CUDA.search(code_of(branch.test)) for branch in old) and not (
            old_final is not None and _MAY_NAME_CUDA.search(code_of(old_final.body))
        ):
            return updated
        model = self.ctx.devices()
        if model is None or not model.forks:
            return updated  # (no fork in the module: its lines are not even computed)
        new, final = _branches(updated)
        lines = [self.ctx.line_of(branch) for branch in old]
        final_line = self.ctx.line_of(old_final.body.body[0]) if old_final is not None else None
        final_fork = (
            final_line is not None and model.fallback_at(final_line) is not None and not model.keeps(final_line)
        )
        if not final_fork and not any(model.fork_at(line) and not model.keeps(line) for line in lines):
            return updated
        chain: list[cst.If] = []
        for before, after, line in zip(old, new, lines):
            span = model.fork_at(line)
            if span is None or model.keeps(line):
                chain.append(after)
                continue
            after = self._counting_npus(after)  # (a call of the project's nvidia-smi count: the NPU count)
            if (
                isinstance(before.test, cst.Name)
                and before.test.value in model.cuda_predicates
                and code_of(before.body) != code_of(after.body)
            ):
                # `if HAS_CUDA:` with `HAS_CUDA = torch.cuda.is_available()` kept: the NPU branch asks the NPU
                chain.append(before)
                if self.fix(NPU_BESIDE_CUDA, before, True, "an NPU branch added beside the CUDA one"):
                    test = self._asks_npu()
                    chain.append(_npu_branch(after, test))
            elif code_of(before.test) == code_of(after.test) or code_of(before.body) == code_of(after.body):
                chain.append(before)  # no NPU test to derive (or nothing to port): the CUDA branch as it was
                self._unport(original, span)
                self.todo(
                    MULTI_DEVICE_BY_HAND,
                    original,
                    "a CUDA branch of a multi-device chain whose test or body has no NPU form: add an NPU branch "
                    "beside it",
                )
            else:
                chain.append(before)
                message = "an NPU branch added beside the CUDA one"
                if NPU_COUNT_CALL in code_of(after.test) + code_of(after.body):
                    message += f" (nvidia-smi's count of NVIDIA GPUs -> {NPU_COUNT_CALL}: {_NPU_COUNT_SAYS})"
                if self.fix(NPU_BESIDE_CUDA, before, True, message):
                    test = self._where_npu(after.test, lambda code: f"{self._has_npu()} and {code}")
                    chain.append(_npu_branch(after, test))
        node: cst.If | cst.Else | None = final
        if final_fork and old_final is not None and final is not None:
            node = self._npu_before_fallback(original, old_final, final)
        for branch in reversed(chain[1:]):
            node = branch.with_changes(orelse=node)
        return chain[0].with_changes(orelse=node)

    def _counting_npus(self, branch: cst.If) -> cst.If:
        """The ported CUDA branch with each call of the module's nvidia-smi count (device_model.nvidia_smi_counts)
        in its test and body made a call of the NPU count (``_npu_device_count()``, which finish() writes): the NPU
        form of a CUDA count or availability probe, in the NPU branch only (the CUDA one keeps its call)."""
        probes = self.ctx.fact(_nvidia_smi_counts)
        if not probes:
            return branch
        counts = _CountsNpus(probes)
        return branch.with_changes(test=branch.test.visit(counts), body=branch.body.visit(counts))

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        """The NPU count that NPU branches call (_counting_npus), written after the nvidia-smi count it stands
        beside, once."""
        if not any(f.rule is NPU_BESIDE_CUDA and NPU_COUNT_CALL in f.message for f in ctx.findings):
            return text
        if f"def {NPU_COUNT}(" in text:
            return text
        module = tree()
        probes = nvidia_smi_counts_of(module)
        after = next((n.end_lineno for n in module.body if isinstance(n, _FUNCTIONS) and n.name in probes), None)
        if after is None:
            return text
        lines = python_lines(text)
        newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
        if not lines[after - 1].endswith(("\n", "\r")):
            lines[after - 1] += newline
        lines.insert(after, newline.join(["", "", *_NPU_COUNT_HELPER.splitlines()]) + newline)
        return "".join(lines)

    def _npu_before_fallback(self, original: cst.If, old: cst.Else, new: cst.Else) -> cst.If | cst.Else:
        """`if xpu: ... else: <cuda>`: the CUDA fallback stays, and its port goes in an `elif` that asks the NPU
        before it (the final block as it was when nothing in it was ported)."""
        if code_of(old.body) == code_of(new.body):
            return new
        if not self.fix(NPU_BESIDE_CUDA, original, True, "an NPU branch added before the CUDA fallback"):
            return old
        test = self._asks_npu()
        return _npu_branch(cst.If(test=test, body=new.body), test).with_changes(orelse=old)

    def _has_npu(self) -> str:
        return f'hasattr({self.ctx.torch_name()}, "npu")'

    def _asks_npu(self) -> cst.BaseExpression:
        """The test of an NPU branch that no CUDA test can be ported into (`if HAS_CUDA:`, a final `else`)."""
        return cst.parse_expression(f"{self._has_npu()} and {self.ctx.torch_name()}.npu.is_available()")

    def _where_npu(self, expr: cst.BaseExpression, guard) -> cst.BaseExpression:
        """``expr``, guarded by ``guard`` when it reads ``torch.npu``: the code also runs where torch_npu is not
        installed (the other devices'), and evaluates the NPU test or table entry there too."""
        code = code_of(expr)
        if f"{self.ctx.torch_name()}.npu." not in code:
            return expr
        return cst.parse_expression(guard(f"({code})" if isinstance(expr, cst.BooleanOperation) else code))

    def _unport(self, top: cst.If, span: device_model.Span) -> None:
        """Drop the findings of rewrites made inside a CUDA branch that stays as it was."""
        start = self._findings_at.get(id(top), len(self.ctx.findings))
        kept = [f for f in self.ctx.findings[start:] if not span.first <= f.line <= span.last]
        del self.ctx.findings[start:]
        self.ctx.findings.extend(kept)
        # `import torch_npu` only if a rewrite is left that needs it (the findings of the file so far)
        self.ctx.uses_npu = any(f.kind == "rewrite" for f in self.ctx.findings)

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict) -> cst.BaseExpression:
        model = self.ctx.devices()
        if (
            model is None
            or not model.forks
            or model.fork_at(self.ctx.line_of(original)) is None
            or self.ctx.keeps(original)
        ):
            return original if model is not None and self.ctx.keeps(original) else updated
        keys = [_key(e) for e in original.elements]
        if keys.count("cuda") != 1 or "npu" in keys or len(updated.elements) != len(original.elements):
            return updated
        i = keys.index("cuda")
        cuda = original.elements[i]
        ported = updated.elements[i]
        assert isinstance(cuda, cst.DictElement) and isinstance(ported, cst.DictElement)
        quote = cuda.key.value[0] if isinstance(cuda.key, cst.SimpleString) else '"'
        value = self._where_npu(ported.value, lambda code: f"{code} if {self._has_npu()} else None")
        entry = ported.with_changes(key=cst.SimpleString(f"{quote}npu{quote}"), value=value)
        if isinstance(cuda.comma, cst.Comma):
            entry = entry.with_changes(comma=cuda.comma)
            if i == len(keys) - 1:
                # the last entry, with a trailing comma: the line break before `}` is the brace's, and the cuda
                # entry's comma gets the one before the cuda entry (the new entry on a line of its own)
                before = original.elements[i - 1].comma if i else None
                space = before.whitespace_after if isinstance(before, cst.Comma) else original.lbrace.whitespace_after
                cuda = cuda.with_changes(comma=cuda.comma.with_changes(whitespace_after=space))
        else:  # the last entry: it gets a comma, the new one none
            cuda = cuda.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            entry = entry.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        elements = [*original.elements[:i], cuda, entry, *original.elements[i + 1 :]]
        return (
            self.fix(NPU_BESIDE_CUDA, original, original.with_changes(elements=elements), "an npu entry added")
            or original
        )

    # --- the checks on the way to the NPU branch: allow-lists of devices accept "npu" beside "cuda" ------------------

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        """``assert device in ["cuda", "mps", "cpu"]``, ``if device not in (...): raise``; in a module without NPU
        branches, the test of a branch that serves the listed devices alike, by the value (_serves_by_name)."""
        if not self._device_operand.search(code_of(original.left)):
            return updated
        statements = self.ctx.enclosing_statements()
        by_name = not self._forks()
        # (in a project that supports the NPU on its own, a list without it is its authors' choice: kept)
        if by_name and (
            self.ctx.reports_only() or not _serves_by_name(original, statements[-1] if statements else None)
        ):
            return updated
        if switches_cuda_only_feature(original, statements[-1] if statements else None):
            return updated  # the feature stays off on the NPU (as NPU105 keeps such a test)
        targets = list(updated.comparisons)
        changed = False
        for i, target in enumerate(targets):
            if isinstance(target.operator, (cst.In, cst.NotIn)):
                widened = _with_npu(target.comparator)
                if widened is not None:
                    targets[i] = target.with_changes(comparator=widened)
                    changed = True
        if not changed:
            return updated
        if by_name:
            message = '"npu" accepted beside "cuda" (the branch serves each listed device by its name)'
            return self.fix(NPU_BESIDE_CUDA, original, updated.with_changes(comparisons=targets), message) or updated
        return self._accepts(original, updated.with_changes(comparisons=targets)) or updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``parser.add_argument("--device", choices=["cuda", "mps", "cpu"])``."""
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument") or not self._forks():
            return updated
        if not names_device_option(original, self._device_name):
            return updated
        args = list(updated.args)
        for i, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "choices" and (new := _with_npu(arg.value)):
                args[i] = arg.with_changes(value=new)
                return self._accepts(original, updated.with_changes(args=args)) or updated
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        """``def run(device: Literal["cuda", "mps", "cpu"])``: the annotation of a parameter that holds a device."""
        annotation = updated.annotation
        if annotation is None or not self._device_name.search(original.name.value) or not self._forks():
            return updated
        literal = annotation.annotation
        if not isinstance(literal, cst.Subscript) or self.ctx.imports.resolve(literal.value) not in _LITERALS:
            return updated
        values = [e.slice.value if isinstance(e.slice, cst.Index) else None for e in literal.slice]
        at = _cuda_at(values)
        if at is None:
            return updated
        items = _with_npu_after(list(literal.slice), at, cst.SubscriptElement(cst.Index(_npu_twin(values[at]))))
        new = updated.with_changes(annotation=annotation.with_changes(annotation=literal.with_changes(slice=items)))
        return self._accepts(original, new) or updated

    def _forks(self) -> bool:
        """Does the port add NPU branches to this module's dispatch (its device model forks)?"""
        model = self.ctx.devices()
        return model is not None and bool(model.forks)

    def _accepts(self, original: cst.CSTNode, replacement: cst.CSTNode):
        message = '"npu" accepted beside "cuda" (an NPU branch is added or marked beside its CUDA one)'
        return self.fix(NPU_BESIDE_CUDA, original, replacement, message)

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        self._by_hand(original, "a choice")
        return updated

    def leave_Match(self, original: cst.Match, updated: cst.Match) -> cst.BaseStatement:
        self._by_hand(original, "a match")
        return updated

    def _by_hand(self, node: cst.CSTNode, what: str) -> None:
        model = self.ctx.devices()
        if model is None or not model.todo:
            return
        line = self.ctx.line_of(node)
        if line in model.todo and line not in self._by_hand_lines:
            self._by_hand_lines.add(line)
            self.todo(
                MULTI_DEVICE_BY_HAND,
                node,
                f"{what} between CUDA and other devices, without the NPU: add an NPU case",
            )


# The NPU count that the NPU branch beside a call of a project's nvidia-smi count calls instead: imports of its own
# (the module may import torch only where it needs it: LitServe's connector), 0 where torch_npu is not installed.
NPU_COUNT = "_npu_device_count"
NPU_COUNT_CALL = f"{NPU_COUNT}()"
_NPU_COUNT_SAYS = "the NPUs torch_npu sees"
_NPU_COUNT_HELPER = f'''def {NPU_COUNT}() -> int:
    """NPU counterpart of the nvidia-smi count above (by ascend-port): {_NPU_COUNT_SAYS}, 0 without it."""
    try:
        import torch
        import torch_npu  # noqa: F401
    except ImportError:
        return 0
    return torch.npu.device_count()'''
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def nvidia_smi_counts_of(module: ast.Module | None) -> frozenset[str]:
    return device_model.nvidia_smi_counts(module) if module is not None else frozenset()


def _nvidia_smi_counts(facts: ModuleFacts) -> frozenset[str]:
    """(a module fact: read once per module; a module whose text never says nvidia-smi runs none)"""
    if facts.text and device_model.NVIDIA_SMI not in facts.text:
        return frozenset()
    return nvidia_smi_counts_of(facts.tree)


class _CountsNpus(cst.CSTTransformer):
    """``check_cuda_with_nvidia_smi()`` -> ``_npu_device_count()`` (a call with no arguments of a name in
    ``probes``)."""

    def __init__(self, probes: frozenset[str]) -> None:
        super().__init__()
        self.probes = probes

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if isinstance(updated.func, cst.Name) and updated.func.value in self.probes and not updated.args:
            return updated.with_changes(func=cst.Name(NPU_COUNT))
        return updated


# The devices an allow-list names beside CUDA's (what makes a list of strings a list of devices).
_OTHER_DEVICE_TYPES = frozenset({"cpu", "mps", "xpu", "hpu", "mlu", "musa", "xla", "tpu", "ipu", "meta"})
_LITERALS = {"typing.Literal", "typing_extensions.Literal"}


def _npu_branch(ported: cst.If, test: cst.BaseExpression) -> cst.If:
    """The NPU branch: the ported CUDA branch under ``test``, without the comments of the CUDA one's line (`if
    torch.cuda.is_available():  # Works for both Nvidia and AMD` says nothing of the NPU)."""
    body = ported.body
    if isinstance(body, cst.IndentedBlock):
        body = body.with_changes(header=cst.TrailingWhitespace())
    return ported.with_changes(test=test, body=body, leading_lines=[])


def _string(node: cst.BaseExpression) -> str | None:
    value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    return value if isinstance(value, str) else None


def _npu_twin(cuda: cst.BaseExpression | None) -> cst.SimpleString:
    """``"npu"`` in the quotes of ``cuda``, a ``"cuda"`` string (where _cuda_at found it)."""
    assert isinstance(cuda, cst.SimpleString)
    return cuda.with_changes(value=cuda.value.replace("cuda", "npu", 1))


def _cuda_at(values: Sequence[cst.BaseExpression | None]) -> int | None:
    """Where "cuda" is in a literal list of device names with another device but no "npu", else None. A `None` in
    the list is no name (`accelerator not in ["auto", "cuda", "mps", None]`: the value may be left unset)."""
    names = [_string(v) if v is not None else None for v in values if not _is_none(v)]
    if None in names or names.count("cuda") != 1 or "npu" in names or not _OTHER_DEVICE_TYPES & set(names):
        return None
    return next(i for i, v in enumerate(values) if v is not None and _string(v) == "cuda")


def _is_none(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _with_npu_after(elements: list, at: int, npu):
    """``elements`` (list or subscript elements) with ``npu`` after the one at ``at``, the commas right: the new
    one takes that one's comma (none when it was the last), and that one gets one."""
    cuda = elements[at]
    npu = npu.with_changes(comma=cuda.comma if isinstance(cuda.comma, cst.Comma) else cst.MaybeSentinel.DEFAULT)
    cuda = cuda.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return [*elements[:at], cuda, npu, *elements[at + 1 :]]


def _with_npu(container: cst.BaseExpression) -> cst.BaseExpression | None:
    """A literal list, tuple or set of device names with "cuda" and another device but no "npu", with "npu" after
    "cuda" (in its quotes); None for anything else."""
    if not isinstance(container, (cst.List, cst.Tuple, cst.Set)):
        return None
    elements = list(container.elements)
    at = _cuda_at([e.value if isinstance(e, cst.Element) else None for e in elements])
    if at is None:
        return None
    npu = cst.Element(_npu_twin(elements[at].value))
    return container.with_changes(elements=_with_npu_after(elements, at, npu))


def _serves_by_name(test: cst.Comparison, statement: cst.CSTNode | None) -> bool:
    """``elif accelerator in ["cuda", "mps"]: devices = [f"{accelerator}:{i}" for i in ...]``: an `if` whose test
    is ``test``, a membership test of the value, and whose body reads the value and names no device itself serves
    each listed device by its name, as it would serve "npu" (LitServe's server.py builds its workers' device strings
    so): "npu" may join the list wherever the value may come from. A body that names a device (`torch.cuda...`,
    `"cuda"`) does that device's work, and a body that does not read the value sets something for those devices
    alone (`pin_memory = True`): neither says what the NPU needs."""
    if not isinstance(statement, cst.If) or statement.test is not test or len(test.comparisons) != 1:
        return False
    if not isinstance(test.comparisons[0].operator, cst.In):
        return False
    tree = parse_quietly("if 1:" + code_of(statement.body))  # (the body alone, in a wrapper that names nothing)
    value = code_of(test.left)
    return (
        tree is not None
        and not device_model.devices_in(tree)
        and any(ast.unparse(n) == value for n in ast.walk(tree) if isinstance(n, (ast.Name, ast.Attribute)))
    )


def _key(element: cst.BaseDictElement) -> str | None:
    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
        value = element.key.evaluated_value
        return value if isinstance(value, str) else None
    return None


def kept_module_findings(family: str) -> list[Finding]:
    """The finding for a module the port leaves whole because of its family, when it is work for a human."""
    members = device_model.cuda_member_without_npu(family)
    if members is None:
        return []
    message = (
        f"the CUDA member of a per-device family ({members}) without an NPU member is left as it is: add an NPU "
        "member beside it (its port is the CUDA one with the device rules applied)"
    )
    return [Finding(MULTI_DEVICE_BY_HAND, 1, message, applied=False)]


def keeps_other_devices(
    findings: list[Finding], model: device_model.DeviceModel | None, dispatched: Collection[Rule] = ()
) -> bool:
    """Did the port of a module only add NPU paths beside the other devices' (NPU120, the rewrites inside the CUDA
    copies it added, and those of the ``dispatched`` rules, which keep the original for the other devices'
    tensors)? Then its ``import torch_npu`` is guarded: the module must still import on those devices."""
    if model is None:
        return False
    rewrites = [f for f in findings if f.applied and f.rewrites and not f.rule.line_in_new_text]
    return bool(rewrites) and all(
        f.rule is NPU_BESIDE_CUDA
        or f.rule in dispatched
        or any(span.first <= f.line <= span.last for span in model.forks)
        for f in rewrites
    )

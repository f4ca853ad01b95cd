"""The helper functions the attention rules call, and their insertion into a ported module.

A rewritten call site reads `_npu_flash_attn(q, k, v, causal=True)`; the expanded npu_fusion_attention call (scale,
layout, head count, compressed causal mask cached per device, varlen lists) lives once in the module, in front of the
first top-level statement that uses it. Insertion happens after every statement is ported (PortTransformer.finish),
so it works however the module was split into chunks, and it is idempotent: a helper already defined at the top
level of the module is never written again (python/definitions.py).

The flash helper is right for training too (tests/test_training_equivalence.py, forward and backward): the cached
mask is built under `inference_mode(False)`, since npu_fusion_attention saves it for backward and a mask first made
during a validation or sampling pass under `torch.inference_mode()` would be an inference tensor; a varlen batch of
more than 1024 sequences (the op's documented limit) is attended 1024 sequences at a time; in a bottom-right causal
call with more queries than keys, the first rows see no key (flash-attn writes 0, the op documents nothing): they
are zeros, left out of the op's call (in a varlen batch: NotImplementedError); and the MindIE-SD backend serves
only calls that need no backward (its runtime may pick an inference-only kernel) with a float scale (it rejects
others).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Mapping
from pathlib import Path

import libcst as cst

from ascend_port.core.options import ATTENTION_BACKENDS
from ascend_port.python.definitions import bound_name, insert_definitions
from ascend_port.rules.attention.helper_names import DEPENDS, FLASH_HELPER, MASK_CACHE, PRIVATE_TORCH

BACKENDS = ATTENTION_BACKENDS

# The helpers' code, a Python module of its own (helper_code/npu_attention.py): each is copied from there and adapted
# to the module it is written into (HelperAdapter).
SOURCE = Path(__file__).with_name("helper_code") / "npu_attention.py"
CREDIT = "CREDIT"  # the word of a helper's docstring that names the rules that wrote it


@functools.cache
def _source() -> cst.Module:
    return cst.parse_module(SOURCE.read_text("utf-8"))


@functools.lru_cache(maxsize=64)  # (the same few helpers, names and credits, file after file)
def helper_source(name: str, torch: str | None, torch_npu: str, backend: str, credit: str) -> str:
    """The source of one helper; ``torch`` is the module's name for torch (None: it does not import torch at its
    top level, so the helper imports it, under a private name: a plain `import torch`, even in a function, would
    make the module's other `torch.cuda...` code resolve on the next run and the port not idempotent),
    ``torch_npu`` its name for torch_npu (NPU100 adds `import torch_npu`); ``credit`` names the rules that wrote it
    in its docstring."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown attention backend {backend!r}: use {' or '.join(BACKENDS)}")
    module = _source()
    copied = [s for s in module.body if _defines(s, name) or (name == FLASH_HELPER and _defines(s, MASK_CACHE))]
    if not any(isinstance(s, cst.FunctionDef) for s in copied):
        raise KeyError(f"{SOURCE.name} defines no helper {name!r}")
    adapter = HelperAdapter(torch, torch_npu, backend == "mindiesd", credit)
    adapted: list[cst.CSTNode] = []
    for statement in copied:
        new = statement.visit(adapter)
        assert isinstance(new, cst.BaseStatement)  # (the adapter removes no top-level statement)
        adapted.append(new if adapted else new.with_changes(leading_lines=()))
    return "".join(module.code_for_node(s) for s in adapted)


def _defines(statement: cst.BaseStatement, name: str) -> bool:
    """`def name(...)` or `name = ...` (the mask cache). (Plain checks: libcst.matchers costs 0.2 s to import.)"""
    if isinstance(statement, cst.FunctionDef):
        return statement.name.value == name
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    assign = statement.body[0]
    return (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
        and assign.targets[0].target.value == name
    )


class HelperAdapter(cst.CSTTransformer):
    """A helper of helper_code/npu_attention.py adapted to the module it is written into (see helper_source)."""

    def __init__(self, torch: str | None, torch_npu: str, mindiesd: bool, credit: str) -> None:
        self.names = {"torch_npu": torch_npu} if torch is None else {"torch_npu": torch_npu, PRIVATE_TORCH: torch}
        self.mindiesd = mindiesd
        self.credit = credit

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body, dropped = [], False
        for before, statement in zip(original.body, updated.body):
            if self._drops(before):  # (matched as written in helper_code: the names are adapted by now)
                dropped = True
                continue
            body.append(statement.with_changes(leading_lines=()) if dropped else statement)  # (the import's blank)
            dropped = False
        return updated.with_changes(body=body)

    def _drops(self, statement: cst.BaseStatement) -> bool:
        if isinstance(statement, cst.If):  # the MindIE-SD branch: the `if` whose body imports mindiesd
            return not self.mindiesd and any(_imports(s, "mindiesd") for s in _statements_of(statement.body))
        return PRIVATE_TORCH in self.names and _imports(statement, "torch", PRIVATE_TORCH)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.names.get(updated.value, updated.value))

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        return updated.with_changes(value=updated.value.replace(CREDIT, self.credit, 1))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        # arguments on continuation lines stay aligned under the open parenthesis of a renamed callee
        shift = len(cst.Module([]).code_for_node(updated.func)) - len(cst.Module([]).code_for_node(original.func))
        if not shift:
            return updated
        return updated.with_changes(args=[_shifted(arg, shift) for arg in updated.args])


def _statements_of(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else []


def _imports(statement: cst.CSTNode, module: str, asname: str | None = None) -> bool:
    """`from <module> import ...`, or `import <module> as <asname>` (one simple statement)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if asname is None:
        return isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == module
    if not isinstance(small, cst.Import) or len(small.names) != 1:
        return False
    alias = small.names[0]
    return (
        isinstance(alias.name, cst.Name)
        and alias.name.value == module
        and alias.asname is not None
        and isinstance(alias.asname.name, cst.Name)
        and alias.asname.name.value == asname
    )


def _shifted(arg: cst.Arg, shift: int) -> cst.Arg:
    comma = arg.comma
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        after = comma.whitespace_after
        last = cst.SimpleWhitespace(" " * max(len(after.last_line.value) + shift, 0))
        return arg.with_changes(comma=comma.with_changes(whitespace_after=after.with_changes(last_line=last)))
    return arg


def insert_helpers(text: str, parse: Callable[[], ast.Module], backend: str, credits: Mapping[str, str]) -> str:
    """``text`` with the definitions of the helpers it calls but does not define at its top level, in dependency
    order (``parse()`` is its ``ast``; ``credits``: the helpers the caller writes, each with its rules, named in its
    docstring)."""

    def block(tree: ast.Module, missing: list[str]) -> str:
        torch, torch_npu = bound_name(tree, "torch"), bound_name(tree, "torch_npu") or "torch_npu"
        return "\n\n".join(helper_source(n, torch, torch_npu, backend, credits[n]) for n in DEPENDS if n in missing)

    return insert_definitions(text, parse, list(credits), block, requires=DEPENDS)

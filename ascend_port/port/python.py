"""The port of one Python module.

Speed comes from parsing only what can change. The transformers' triggers (literal text first, see literals.py)
reject most files without parsing them. For the rest, Python's ``ast`` (a C parser) gives the imports and the
statements around each trigger; only the statements each trigger's scope asks for are parsed with LibCST,
transformed, checked to parse on their own, and spliced back into the untouched text byte for byte, so the
module is not parsed again. The whole-module path (``port_module``) is what LibCST's own runner uses, and the
fallback for sources this interpreter's ``ast`` cannot read.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, cast

import libcst as cst

from ascend_port.core.findings import Finding
from ascend_port.core.options import DEFAULT, PortOptions
from ascend_port.core.porting import PortError
from ascend_port.core.selection import Selection
from ascend_port.core.sources import python_lines, python_syntax_error
from ascend_port.core.suppression import Suppressions, from_python
from ascend_port.port.transformers import TRANSFORMERS
from ascend_port.python import device_model
from ascend_port.python.chunks import Chunk, Splice, hot_chunks, splice, wrap
from ascend_port.python.docstrings import inside, triple_quoted_spans
from ascend_port.python.literals import TriggerFilter
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.python.names import ImportIndex
from ascend_port.python.parsing import PORT_DOES_NOT_PARSE, parse_or_fail, parse_quietly
from ascend_port.python.scopes import Scope
from ascend_port.python.transformer import PortContext, PortTransformer, run_transformers
from ascend_port.rules.kernels.kernel_tests import CUDA_KERNEL_TEST, keep_kernel_tests
from ascend_port.rules.multidevice import keeps_other_devices, kept_module_findings
from ascend_port.rules.torch_npu_import import (
    IMPORT_TORCH_NPU,
    spliced_statements,
    statements_from_cst,
    top_statements,
    with_torch_npu_import,
)


@dataclass
class PortOutcome:
    new_text: str | None
    findings: list[Finding] = field(default_factory=list)


def active_transformers(selection: Selection) -> tuple[type[PortTransformer], ...]:
    return _active(TRANSFORMERS, selection)


@lru_cache(maxsize=64)
def _active(transformers: tuple[type[PortTransformer], ...], selection: Selection) -> tuple[type[PortTransformer], ...]:
    return tuple(cls for cls in transformers if cls.active(selection))


@lru_cache(maxsize=64)
def trigger_patterns(classes: tuple[type[PortTransformer], ...]) -> tuple[tuple[re.Pattern[str], Scope], ...]:
    """One pattern per scope over the triggers with that scope (what a caller without a TriggerFilter runs)."""
    by_scope: dict[Scope, list[str]] = {}
    for cls in classes:
        for trigger in cls.triggers():
            by_scope.setdefault(trigger.scope, []).append(trigger.pattern)
    return tuple((re.compile("|".join(f"(?:{f})" for f in fragments)), scope) for scope, fragments in by_scope.items())


@lru_cache(maxsize=64)
def trigger_filter(classes: tuple[type[PortTransformer], ...]) -> TriggerFilter:
    """Finds the triggers' matches in a text (each fragment on its own: the matches of trigger_patterns and more,
    since one alternation's matches never overlap), faster than running trigger_patterns. Each match names the
    transformer whose trigger it is."""
    return TriggerFilter((t, cls) for cls in classes for t in cls.triggers())


def port_source(text: str, selection: Selection, options: PortOptions = DEFAULT) -> PortOutcome:
    """Port one module's source text. Raises PortError when it cannot be parsed."""
    try:
        return _port_source(text, selection, options)
    except RecursionError:
        # LibCST's visitors recurse once per level: thousands of implicitly concatenated strings or nested
        # brackets (generated tables such as pydoc_data/topics.py) exceed Python's recursion limit.
        raise PortError(
            "a statement is nested too deeply for LibCST (Python's recursion limit); the file is left unchanged"
        ) from None


def _port_source(text: str, selection: Selection, options: PortOptions) -> PortOutcome:
    classes = active_transformers(selection)
    matches = _trigger_matches(text, classes, options)
    if not matches:
        return PortOutcome(None)
    family = options.family
    if device_model.family_reason(family):  # another device's module, or one the NPU already has a member for
        return PortOutcome(None, [f for f in kept_module_findings(family) if selection.enabled(f.rule)])
    cut = _cut(text, matches[-1][0])
    tree = parse_quietly(text[:cut]) if cut is not None else None
    whole = tree if cut is None else None
    if tree is None:
        whole = tree = parse_quietly(text)
        if tree is None:
            return _port_whole_source(text, selection, options, classes)
    imports = ImportIndex.from_ast(tree)
    module_ast = whole if whole is not None else cache(lambda: _whole_module(text, cut, tree))
    lines = python_lines(text)
    facts = ModuleFacts(module_ast, imports, text, head=tree, lines=lines)
    # (the model reads `tree`, the head: it ends where the text is cut)
    suppressions = from_python(text, tree)
    devices = cache(
        lambda: _device_model(facts, options, selection, suppressions, len(text) if whole is not None else cut)
    )
    ctx_args: dict[str, Any] = dict(
        imports=imports,
        module_facts=facts,
        selection=selection,
        options=options,
        module_ast=module_ast,
        module_head=tree,
        device_model=devices,
        source=text,
        suppressions=suppressions,
    )
    findings: list[Finding] = []
    uses_npu = uses_torch_npu_name = False
    splices: list[Splice] = []
    for chunk in hot_chunks(lines, tree, matches, imports):
        if splices and chunk.first <= splices[-1].last:
            continue  # already ported as part of an enclosing statement (see the fallback below)
        first, last, chunk_text, prefix, module = _parse_hot_chunk(lines, chunk)
        ctx = PortContext(line_offset=first - 1 - (1 if prefix else 0), findings=findings, **ctx_args)
        recorded = len(findings)
        # Only the transformers whose triggers made the chunk hot run on it: what a transformer changes contains
        # one of its triggers (PortTransformer.TRIGGERS). (A chunk widened to its top-level statement holds other
        # chunks' matches too: there, all of them.)
        widened = (first, last) != (chunk.first, chunk.last)
        ported = run_transformers(module, ctx, classes if widened else [c for c in classes if c in chunk.owners])
        # (every change is reported: a chunk whose port recorded nothing is not printed again, see test_chunks)
        new_code = (
            _keep_final_cr(chunk_text, _unwrapped(ported.code, prefix, chunk_text))
            if len(findings) != recorded
            else chunk_text
        )
        uses_npu |= ctx.uses_npu
        uses_torch_npu_name |= ctx.uses_torch_npu_name
        if new_code != chunk_text:
            splices.append(Splice(first, last, new_code, _checked_body(chunk_text, new_code, prefix)))
    if not splices:
        return PortOutcome(None, _unsuppressed(findings, suppressions))
    new_text = splice(lines, splices)
    parsed = _Parsed(new_text)
    new_text = _finish(classes, parsed, PortContext(findings=findings, **ctx_args))
    if uses_npu and _adds_import(selection, suppressions, uses_torch_npu_name):
        statements = top_statements(parsed.tree.body) if parsed.known else spliced_statements(tree.body, splices)
        guarded = keeps_other_devices(findings, devices(), _dispatched(options))
        new_text = with_torch_npu_import(new_text, statements, uses_torch_npu_name, findings, guarded)
    return PortOutcome(new_text, _unsuppressed(findings, suppressions))


def _dispatched(options: PortOptions) -> frozenset:
    """The rules whose rewrites keep the other devices' code (PortTransformer.DISPATCHES_ON_DEVICE), in a project
    that keeps its other devices."""
    if options.other_devices != "keep":
        return frozenset()
    return frozenset(rule for cls in TRANSFORMERS if cls.DISPATCHES_ON_DEVICE for rule in cls.RULES)


def _adds_import(selection: Selection, suppressions: Suppressions, needs_name: bool) -> bool:
    """May the port add ``import torch_npu`` (a line of its own: only ``ignore-file[NPU100]`` suppresses it)? Where
    a rewrite calls ``torch_npu.`` (``needs_name``) it must, whatever the selection or a suppression says: the
    module would raise NameError at its first call otherwise. ``torch.npu`` alone needs no import to parse and
    bind, and torch_npu's autoload provides it."""
    if needs_name:
        return True
    return selection.enabled(IMPORT_TORCH_NPU) and not suppressions.suppresses(IMPORT_TORCH_NPU.id)


def _unsuppressed(findings: list[Finding], suppressions: Suppressions) -> list[Finding]:
    """The findings less those a suppression comment covers. The rules ask before they change anything
    (PortContext.suppressed); this catches what a file-level step or a report-only rule recorded on such a line.
    (A finding on a line the port adds, NPU100's, is never on a user's line.)"""
    if not suppressions:
        return findings
    return [f for f in findings if f.rule.line_in_new_text or not suppressions.suppresses(f.rule.id, f.line)]


def _trigger_matches(
    text: str, classes: tuple[type[PortTransformer], ...], options: PortOptions
) -> list[tuple[int, Scope, Hashable]]:
    """The triggers' matches (start offset, scope, transformer) in ``text``, less those in triple-quoted strings
    (usage examples in docstrings). A transformer's ``option_triggers(text, options)`` adds matches that no fixed
    pattern can find (the calls of names a module imports from the project's CUDA extensions)."""
    # (each match's scope is its Trigger's: a Scope)
    matches = cast(list[tuple[int, Scope, Hashable]], trigger_filter(classes).matches(text))
    extra = [
        (offset, scope, cls)
        for cls in classes
        if (more := getattr(cls, "option_triggers", None))
        for offset, scope in more(text, options)
    ]
    if extra:
        matches = sorted({*matches, *extra}, key=lambda item: item[0])
    if matches and (strings := triple_quoted_spans(text)):
        matches = [m for m in matches if not inside(strings, m[0])]
    return matches


def _parse_hot_chunk(lines: list[str], chunk: Chunk) -> tuple[int, int, str, str, cst.Module]:
    """The span (first, last) that ``chunk`` ports, its text, the prefix that wraps an indented chunk (empty for a
    top-level one) and the parsed LibCST module (of the wrapped text)."""
    first, last = chunk.first, chunk.last
    chunk_text = "".join(lines[first - 1 : last])
    parse_text, prefix = wrap(chunk_text) if chunk.nested else (chunk_text, "")
    try:
        return first, last, chunk_text, prefix, cst.parse_module(parse_text)
    except cst.ParserSyntaxError as error:
        if not chunk.nested:
            raise PortError(f"LibCST cannot parse line {first + error.raw_line - 1}: {error.message}") from None
    # A statement that only parses with its context: take the whole top-level statement instead.
    first, last = chunk.top
    chunk_text = "".join(lines[first - 1 : last])
    return first, last, chunk_text, "", _parse_chunk(chunk_text, first)


# A line that starts a top-level function or class (where a module can be cut), and one that starts a top-level
# statement that may bind names or continue a statement above it (where it cannot).
_TOP_DEFINITION = re.compile(r"^(?:def |class |@|async def )", re.M)
_MODULE_LEVEL = re.compile(r"^(?:if|try|with|for|while|else|elif|except|finally|async|match|case)\b", re.M)
_IMPORT = re.compile(r"^[ \t]*(?:import|from)[ \t]", re.M)  # at any depth: the imports of a module are all read


def _cut(text: str, last_match: int) -> int | None:
    """Where the module can be cut after its last trigger, so that only the head is parsed (half of a module, on
    average): at the next top-level def or class, when only defs, classes and simple statements follow and no
    import at any depth, so that the head holds every import and means what it means in the whole module. Its
    ``ast`` parsing is the check: a cut inside a string or a bracket does not parse, and then the whole module is
    parsed. Rules that need the rest (a definition, the uses of a name) parse it: PortContext.module(). None: no
    cut."""
    if "\r" in text:
        return None  # (lines end at \n only in the patterns above)
    end = text.find("\n", last_match)
    found = _TOP_DEFINITION.search(text, end + 1) if end >= 0 else None
    if found is None or _MODULE_LEVEL.search(text, found.start()) or _IMPORT.search(text, found.start()):
        return None
    return found.start()


class _Parsed:
    """The ported text and its ``ast``, parsed only when a step asks for it (most files never need it: every
    changed statement was checked on its own, see _checked_body)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._tree: ast.Module | None = None

    @property
    def known(self) -> bool:
        return self._tree is not None

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            self._tree = parse_or_fail(self.text)
        return self._tree

    def update(self, text: str) -> None:
        """A step changed the text: parse it at once, since what it wrote must parse."""
        self.text, self._tree = text, parse_or_fail(text)


def _checked_body(old: str, new: str, prefix: str) -> list[ast.stmt] | None:
    """Check that the ported chunk parses where it goes; the new top-level statements of a top-level chunk.

    A chunk replaces whole statements at their own indentation, so a chunk that parses on its own (inside the same
    ``if 1:`` wrapper for an indented one) and starts at the same indentation parses in the module too: the
    module is never parsed again."""
    tree = parse_or_fail(prefix + new)
    if _indentation(new) != _indentation(old):
        raise PortError(PORT_DOES_NOT_PARSE)
    return tree.body if not prefix else None


def _unwrapped(code: str, prefix: str, old: str) -> str:
    """The ported chunk without its ``if 1:`` wrapper. A rule that puts a TODO above the statement around what it
    saw finds the wrapper itself for a statement of an indented chunk: its comment lines go above the chunk's first
    statement, at the chunk's indentation."""
    if code.startswith(prefix):
        return code[len(prefix) :]
    head, found, body = code.partition(prefix)
    if not found:
        raise PortError(PORT_DOES_NOT_PARSE)
    indent = _indentation(old)
    return "".join(indent + line.lstrip() if line.strip() else line for line in head.splitlines(True)) + body


def _indentation(code: str) -> str:
    """The indentation of the first line that is neither blank nor a comment."""
    for line in code.splitlines():
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            return line[: len(line) - len(stripped)]
    return ""


def _finish(classes, parsed: _Parsed, ctx: PortContext) -> str:
    """Run each transformer's file-level step (PortTransformer.finish) on the ported text."""
    for cls in classes:
        new_text = cls.finish(parsed.text, lambda: parsed.tree, ctx)
        if new_text != parsed.text:
            parsed.update(new_text)
    return parsed.text


def _whole_module(text: str, cut: int | None, head: ast.Module) -> ast.Module | None:
    """The ``ast`` of the whole module, from its head (``text[:cut]``, parsed) and the rest parsed on its own: only
    definitions and simple statements follow a cut (see _cut), and blank lines in front keep the rest's line
    numbers. The whole module is parsed again if the rest does not parse alone."""
    if cut is None:
        return parse_quietly(text)
    rest = parse_quietly("\n" * text.count("\n", 0, cut) + text[cut:])
    if rest is None:
        return parse_quietly(text)
    return ast.Module(body=[*head.body, *rest.body], type_ignores=[*head.type_ignores, *rest.type_ignores])


def _parse_chunk(text: str, first: int) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise PortError(f"LibCST cannot parse line {first + error.raw_line - 1}: {error.message}") from None


def _device_model(
    facts: ModuleFacts,
    options: PortOptions,
    selection: Selection,
    suppressions: Suppressions,
    head_end: int | None = None,
) -> device_model.DeviceModel | None:
    """What the module's devices allow; None (port everything) when the module cannot be read whole. With NPU517
    selected, it keeps the module's tests of CUDA-only kernels too (rules/kernels/kernel_tests.py), but those where
    a comment suppresses it."""
    model = _devices(facts, options.family, options.npu_aware, head_end, frozenset(options.shared_cuda_predicates))
    if model is None or not selection.enabled(CUDA_KERNEL_TEST):
        return model
    return keep_kernel_tests(model, facts.text, options, suppressions)


def _devices(
    facts: ModuleFacts,
    family: str,
    aware: bool = False,
    head_end: int | None = None,
    shared: frozenset[str] = frozenset(),
) -> device_model.DeviceModel | None:
    """The module's device model (python/device_model.py). A module whose words name no device but CUDA's has an
    empty model, known from its source without its tree. ``head_end``: where the module's head ends in its text
    (the whole text by default)."""
    text = facts.text
    head_text = text[:head_end] if head_end is not None and head_end < len(text) else text
    # (the whole text's answer is often known already, from the trigger filter; a head keeps no more than its module)
    if text and not aware and not family and not all(map(device_model.may_keep_anything, (text, head_text))):
        return device_model.DeviceModel().finish()
    # The head holds every statement the rules port, each top-level statement whole (see _cut): what the model
    # says of them does not depend on the rest.
    tree = facts.head
    if tree is None:
        return None
    return device_model.read(tree, family, aware, head_text or None, facts.line_starts, shared)


def port_module(
    module: cst.Module,
    selection: Selection,
    options: PortOptions = DEFAULT,
) -> tuple[cst.Module, list[Finding]]:
    """Port a whole parsed module (LibCST's runner and the fallback path)."""
    classes = active_transformers(selection)
    tree = parse_quietly(module.code)
    imports = ImportIndex.from_ast(tree) if tree is not None else ImportIndex.from_cst(module)
    facts = ModuleFacts(tree, imports, module.code)
    suppressions = from_python(module.code, tree)
    devices = _device_model(facts, options, selection, suppressions)
    ctx = PortContext(
        imports=imports,
        module_facts=facts,
        selection=selection,
        options=options,
        module_ast=tree,
        module_head=tree,
        device_model=devices,
        source=module.code,
        suppressions=suppressions,
    )
    new_module = run_transformers(module, ctx, classes)
    if tree is not None:  # else this interpreter cannot read the module: the file-level steps are skipped
        new_text = _finish(classes, _Parsed(new_module.code), ctx)
        if new_text != new_module.code:
            new_module = cst.parse_module(new_text)
    if ctx.uses_npu and _adds_import(selection, ctx.suppressions, ctx.uses_torch_npu_name):
        statements = statements_from_cst(new_module)
        guarded = keeps_other_devices(ctx.findings, devices, _dispatched(options))
        new_text = with_torch_npu_import(new_module.code, statements, ctx.uses_torch_npu_name, ctx.findings, guarded)
        if new_text != new_module.code:
            new_module = cst.parse_module(new_text)
    return new_module, _unsuppressed(ctx.findings, ctx.suppressions)


def _port_whole_source(text, selection, options, classes) -> PortOutcome:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        python = python_syntax_error(text)
        raise PortError(f"cannot parse: {python or f'{error.message} (line {error.raw_line})'}") from None
    new_module, findings = port_module(module, selection, options)
    new_text = _keep_final_cr(text, new_module.code)
    if new_text == text:
        return PortOutcome(None, findings)
    try:
        cst.parse_module(new_text)
    except cst.ParserSyntaxError:
        raise PortError(PORT_DOES_NOT_PARSE) from None
    return PortOutcome(new_text, findings)


def _keep_final_cr(old: str, new: str) -> str:
    """LibCST drops the lone ``\r`` (classic Mac line ending) that ends a module; put it back."""
    if old.endswith("\r") and not new.endswith(("\r", "\n")):
        return new + "\r"
    return new

"""YAML and JSON configs: keys that name a device or a distributed backend (NPU620-NPU623).

ruamel.yaml (round-trip) reads YAML and gives the position of every value; the JSON reader in ``jsonspan`` does the
same for JSON. Only the bytes of the changed scalar are replaced, so comments, quoting, key order, indentation and
flow style stay; the result is read again and must equal the original data with exactly the intended changes.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable
from typing import Any

from ascend_port.core.catalogue import Confidence, Rule, rule
from ascend_port.core.findings import todo_comment
from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Ported, PortError
from ascend_port.core.selection import Selection
from ascend_port.core.sources import SourceError, decode_text
from ascend_port.formats.jsonspan import JNode, parse
from ascend_port.formats.textedit import Edit, LineIndex, TextPort, newline_of
from ascend_port.rules.project import switches
from ascend_port.rules.project.switches import CUDA_KERNEL_SWITCH, Switch

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

# --- configs: YAML and JSON ----------------------------------------------------------------------------------------

CONFIG_DEVICE = rule(
    "NPU620",
    "config-device",
    MEDIUM,
    "Config keys that name a device (`device: cuda`, `device_type`) -> `npu` in YAML/JSON.",
    """
    A mapping key containing `device` whose value is `cuda` or `cuda:N`. The key is the evidence, hence medium
    confidence. (`accelerator: cuda` is Lightning's, which rejects `npu`: NPU623.) YAML keeps its comments,
    quoting and layout (only the value is replaced, and an aligned end-of-line comment keeps its column); JSON
    keeps its formatting byte for byte.

    Before:
        device: cuda          # "cuda" or "cpu"
    After:
        device: npu           # "cuda" or "cpu"
    """,
    example_file="config.yaml",
)
CONFIG_BACKEND = rule(
    "NPU621",
    "config-backend",
    MEDIUM,
    "Config keys that name a distributed backend (`backend`, `dist_backend`, `ddp_backend`) with `nccl` -> `hccl`.",
    """
    A mapping key containing `backend` whose value is `nccl` (or a `cuda:nccl,cpu:gloo` list) in YAML or JSON.

    Before:
        dist_backend: nccl
    After:
        dist_backend: hccl
    """,
    example_file="config.yaml",
)
ACCELERATE_MULTI_GPU = rule(
    "NPU622",
    "accelerate-multi-gpu",
    MEDIUM,
    "Hugging Face accelerate configs: `distributed_type: MULTI_GPU` -> `MULTI_NPU`.",
    """
    accelerate has a distributed type of its own for Ascend (`DistributedType.MULTI_NPU`, backend hccl).

    Before:
        distributed_type: MULTI_GPU
    After:
        distributed_type: MULTI_NPU
    """,
    example_file="config.yaml",
)
LIGHTNING_GPU_ACCELERATOR = rule(
    "NPU623",
    "lightning-gpu-accelerator",
    LOW,
    "`accelerator: gpu`/`cuda`/`auto` (PyTorch Lightning): TODO, Lightning has no built-in Ascend accelerator.",
    """
    Lightning accepts `npu` only once a custom Accelerator is registered (upstream support was proposed in
    Lightning-AI/pytorch-lightning#19498 and not merged: `accelerator: npu` is rejected as an invalid accelerator
    name), so `gpu` and `cuda` are not rewritten, and `auto`, which picks the CPU on an NPU host, gets the same TODO.
    YAML gets a TODO comment; JSON has no comments, so the finding is only reported.

    Before:
        accelerator: gpu
    After:
        # TODO(ascend-port): NPU623 [low] accelerator 'gpu': Lightning has no built-in Ascend accelerator ...
        accelerator: gpu
    """,
    example_file="config.yaml",
)

_PREFILTER = re.compile(r"cuda|nccl|MULTI_GPU|\bgpu\b|accelerator\W+auto\b")
_DEVICE_VALUE = re.compile(r"cuda(?::\d+)?")
_LIGHTNING_MESSAGE = (
    "accelerator {value!r}: Lightning has no built-in Ascend accelerator (npu works only once a "
    "custom Accelerator is registered); port the Trainer set-up by hand"
)


def config_change(key: Any, value: Any) -> tuple[Rule, str | None, str] | None:
    """(rule, new value or None for a TODO, message) for one mapping entry, or None when it stays."""
    if not isinstance(key, str) or not isinstance(value, str):
        return None
    k = key.lower()
    if k == "accelerator" and (value.lower() in ("gpu", "auto") or _DEVICE_VALUE.fullmatch(value)):
        # Lightning's name: "npu" is rejected there (see library_support.json), and "auto" picks the CPU.
        auto = " ('auto' picks the CPU on an NPU host)" if value.lower() == "auto" else ""
        return LIGHTNING_GPU_ACCELERATOR, None, _LIGHTNING_MESSAGE.format(value=value) + auto
    if "device" in k and _DEVICE_VALUE.fullmatch(value):
        new = "npu" + value[4:]
        return CONFIG_DEVICE, new, f"{key}: {value} -> {new}"
    if "backend" in k:
        items = value.split(",")
        new_items = [{"nccl": "hccl", "cuda:nccl": "npu:hccl"}.get(i.strip(), i) for i in items]
        if new_items != items:
            new = ",".join(new_items)
            return CONFIG_BACKEND, new, f"{key}: {value} -> {new}"
    if k == "distributed_type" and value == "MULTI_GPU":
        return ACCELERATE_MULTI_GPU, "MULTI_NPU", f"{key}: MULTI_GPU -> MULTI_NPU"
    return None


def _set_path(data: Any, path: tuple, value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


# --- YAML -----------------------------------------------------------------------------------------------------------


def _yaml():
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.Constructor = _last_key_wins()
    return yaml


@functools.cache
def _last_key_wins() -> type:
    """ruamel's round-trip constructor, reading a mapping with a key twice as PyYAML does, which is how the
    projects' own code reads it (Megatron-LM has such configs): the last one counts, its value and its place, so
    that an edit goes where the value that counts is written. (ruamel refuses such a file, or keeps the first.)"""
    from ruamel.yaml.constructor import RoundTripConstructor

    class LastKeyWins(RoundTripConstructor):
        def check_mapping_key(self, node: Any, key_node: Any, mapping: Any, key: Any, value: Any) -> bool:
            return True  # (set again: the value and the line and column of the last one)

    return LastKeyWins


def _load_yaml(text: str) -> list[Any]:
    from ruamel.yaml.error import YAMLError

    try:
        return list(_yaml().load_all(text))
    except YAMLError as error:
        if re.search(r"\{\{|\{%", text):
            # Helm/Jinja templates are not YAML until rendered: skipped with the reason, not a failed run.
            raise SourceError("a YAML template (Jinja/Helm `{{ }}`), not YAML: not ported", binary=True) from None
        raise PortError(f"invalid YAML: {str(error).splitlines()[0] if str(error) else type(error).__name__}") from None


def _plain(node: Any) -> Any:
    """Plain data of what the text says: merged keys (``<<: *anchor``) are left out, their anchor is compared."""
    if isinstance(node, dict):
        own = node.lc.data if hasattr(node, "lc") else node
        return {str(k): _plain(v) for k, v in node.items() if k in own}
    if isinstance(node, (list, tuple)):
        return [_plain(v) for v in node]
    if isinstance(node, str):
        return str(node)
    return node


def _scalar_span(text: str, offset: int, value: str) -> tuple[int, int] | None:
    """The span of the scalar's characters (inside its quotes) when it is written exactly as ``value``."""
    if offset >= len(text):
        return None
    quote = text[offset]
    if quote in "\"'":
        if text.startswith(value + quote, offset + 1):
            return offset + 1, offset + 1 + len(value)
        return None
    if text.startswith(value, offset):
        end = offset + len(value)
        if end == len(text) or text[end] in " \t\r\n,]}#":
            return offset, end
    return None


def port_yaml(text: str, selection: Selection) -> TextPort:
    port = TextPort(text, selection)
    if not _PREFILTER.search(text):
        return port
    documents = _load_yaml(text)
    lines = LineIndex(text)
    changes: dict[tuple, Any] = {}
    switched_on: list[tuple[Any, str, Switch, tuple]] = []  # (mapping, key, switch, path): NPU624, done last

    def visit(node: Any, path: tuple) -> None:
        if isinstance(node, dict):
            own = node.lc.data if hasattr(node, "lc") else {}
            for key, value in node.items():
                if key not in own:
                    continue  # merged in by `<<: *anchor`: ported where the anchor is written
                found = config_change(key, value)
                if found is not None:
                    _yaml_edit(port, lines, node, key, value, found, path + (key,), changes)
                elif value is True and (switch := switches.switch_for_key(key)):
                    switched_on.append((node, key, switch, path + (key,)))
                visit(value, path + (key,))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                visit(value, path + (i,))

    for index, document in enumerate(documents):
        visit(document, (index,))
    if port.edits:  # a config the port leaves alone is not edited for a switch alone (NPU624)
        for node, key, switch, path in switched_on:
            _yaml_switch_off(port, lines, node, key, switch, path, changes)
    new_text = port.result()
    if new_text is not None:
        expected = copy.deepcopy(documents)
        for path, value in changes.items():
            _set_path(expected, path, value)
        if _plain(_load_yaml(new_text)) != _plain(expected):
            raise PortError(
                "internal error: the edited YAML would not hold the intended values; the file is left unchanged"
            )
    return port


def _yaml_edit(
    port: TextPort, lines: LineIndex, node, key, value: str, found, path: tuple, changes: dict[tuple, Any]
) -> None:
    rule, new, message = found
    key_line, key_col = node.lc.key(key)
    key_offset = lines.starts[key_line] + key_col
    if new is None:
        port.todo(rule, key_offset, message)
        return
    value_line, value_col = node.lc.value(key)
    span = _scalar_span(port.text, lines.starts[value_line] + value_col, value)
    if span is None:
        port.report(rule, key_offset, f"{message}: the value is written in a form edited only by hand")
        return
    if port.fix(rule, key_offset, [Edit(span[0], span[1], new), *_keep_comment_column(port.text, span, new)], message):
        changes[path] = new


def _yaml_switch_off(
    port: TextPort, lines: LineIndex, node, key: str, switch: Switch, path: tuple, changes: dict[tuple, Any]
) -> None:
    """NPU624: `key: true` -> `false` in the file's spelling, with the note at the end of the line (above the key
    where the line has a comment already). Block mappings only: a comment inside a flow mapping may end it."""
    key_line, key_col = node.lc.key(key)
    key_offset = lines.starts[key_line] + key_col
    value_line, value_col = node.lc.value(key)
    start = lines.starts[value_line] + value_col
    spelled = next((s for s in switches.OFF if _scalar_span(port.text, start, s) == (start, start + len(s))), None)
    if spelled is None or node.fa.flow_style() or value_line != key_line:
        message = switches.note(switch, f"{key}: true -> false")
        port.report(CUDA_KERNEL_SWITCH, key_offset, f"{message}; turn it off by hand (a flow mapping or another form)")
        return
    off = switches.OFF[spelled]
    message = switches.note(switch, f"{key}: {spelled} -> {off}")
    span = (start, start + len(spelled))
    edits = [Edit(start, span[1], off)]
    comment = todo_comment(CUDA_KERNEL_SWITCH, message)
    line_end = lines.line_end(start)
    if "#" in port.text[span[1] : line_end]:
        edits += _keep_comment_column(port.text, span, off)
        line_start = lines.starts[key_line]
        edits.append(Edit(line_start, line_start, lines.indent_at(line_start) + comment + newline_of(port.text)))
    else:
        edits.append(Edit(line_end, line_end, "  " + comment))
    if port.fix(CUDA_KERNEL_SWITCH, key_offset, edits, message):
        changes[path] = False


def _keep_comment_column(text: str, span: tuple[int, int], new: str) -> list[Edit]:
    """Aligned end-of-line comments stay aligned: the blanks before the comment absorb the change of length."""
    token_end = span[1] + (1 if text[span[1] : span[1] + 1] in ("'", '"') else 0)
    after = token_end
    while text.startswith(" ", after):
        after += 1
    blanks = text[token_end:after]
    width = len(blanks) + (span[1] - span[0]) - len(new)
    if len(blanks) < 2 or not text.startswith("#", after) or width < 2:
        return []
    return [Edit(token_end, after, " " * width)]


# --- JSON -----------------------------------------------------------------------------------------------------------


def port_json(text: str, selection: Selection) -> TextPort:
    port = TextPort(text, selection)
    if not _PREFILTER.search(text):
        return port
    try:
        data = json.loads(text)
    except ValueError as error:
        raise PortError(f"invalid JSON: {error}") from None
    changes: dict[tuple, Any] = {}
    switched_on: list[tuple[JNode, JNode, Switch, tuple]] = []  # NPU624, done last

    def visit(node: JNode, path: tuple) -> None:
        if node.kind == "object":
            for key_node, value_node in node.members:
                key = key_node.value
                if value_node.kind == "string":
                    found = config_change(key, value_node.value)
                    if found is not None:
                        _json_edit(port, key_node, value_node, found, path + (key,), changes)
                elif value_node.raw == "true" and (switch := switches.switch_for_key(key)):
                    switched_on.append((key_node, value_node, switch, path + (key,)))
                visit(value_node, path + (key,))
        elif node.kind == "array":
            for i, item in enumerate(node.items):
                visit(item, path + (i,))

    visit(parse(text), ())
    if port.edits:  # a config the port leaves alone is not edited for a switch alone (NPU624)
        for key_node, value_node, switch, path in switched_on:
            message = switches.note(switch, f"{key_node.value}: true -> false")  # (JSON has no comments)
            if port.fix(CUDA_KERNEL_SWITCH, key_node.start, [Edit(value_node.start, value_node.end, "false")], message):
                changes[path] = False
    new_text = port.result()
    if new_text is not None:
        expected = copy.deepcopy(data)
        for path, value in changes.items():
            _set_path(expected, path, value)
        if json.loads(new_text) != expected:
            raise PortError(
                "internal error: the edited JSON would not hold the intended values; the file is left unchanged"
            )
    return port


def _json_edit(
    port: TextPort, key_node: JNode, value_node: JNode, found, path: tuple, changes: dict[tuple, Any]
) -> None:
    rule, new, message = found
    if new is None:
        port.report(rule, key_node.start, f"{message} (JSON has no comments: nothing written)")
        return
    if "\\" in value_node.raw:
        port.report(rule, key_node.start, f"{message}: the value is escaped; edit it by hand")
        return
    if port.fix(rule, key_node.start, [Edit(value_node.start + 1, value_node.end - 1, new)], message):
        changes[path] = new


# --- handlers ---------------------------------------------------------------------------------------------------------


def _handler(port_text: Callable[[str, Selection], TextPort]):
    class _Handler:
        def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported:
            source = decode_text(data)
            port = port_text(source.text, selection)
            return Ported(source, port.result(), port.findings)

    return _Handler


YamlHandler = _handler(port_yaml)
JsonHandler = _handler(port_json)

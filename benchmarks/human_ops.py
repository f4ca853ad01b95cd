"""The Ascend ops a Python module uses, function by function (benchmarks/bench_human_ports.py).

An "op" is a use of a torch_npu kernel or fused optimizer, or of torchair's compile backend, found through the
module's imports: ``torch_npu.npu_fusion_attention``, ``from torch_npu import npu_rms_norm``, the torch_npu 1.x
spelling ``torch.npu_confusion_transpose``, ``torch_npu.optim.NpuFusedAdamW`` and Ascend's apex
``apex.optimizers.NpuFusedAdamW`` (both ``NpuFusedAdamW``: the same kernel, and so is a project's copy of it
imported from its own module), ``torch_npu.contrib`` helpers, ``torchair.get_npu_backend``, and
``torch.compile(backend="npu")``, and torch's own fused optimizers, ``torch.optim.AdamW(..., fused=...)`` (op
``torch.optim.AdamW(fused)``: torch_npu registers their kernels, which is how the tool ports an optimizer). The
device API (``torch_npu.npu.synchronize``) is not an op. Each use is counted
in the innermost function that holds it (``Class.method``, nested functions joined by dots; ``<module>`` for the
top level).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field

MODULE = "<module>"

# (construct, fused): what the humans' op replaces. Not fused: the torch_npu 1.x "affinity" ops (a matmul, a
# transpose written as an NPU call) and the NZ format casts, counted apart so that the fused fraction is not
# diluted by layout tweaks that today's torch_npu no longer needs.
_CONSTRUCTS: tuple[tuple[str, str, bool], ...] = (
    (
        r"npu_(fusion_attention|flash_attention|prompt_flash_attention|incre_flash_attention|fused_infer_attention_score|multi_head_attention|fused_attention)\w*",
        "attention",
        True,
    ),
    (r"npu_(rotary_mul|rotary_position_embedding|apply_rotary_pos_emb|mrope)\w*", "RoPE", True),
    (r"npu_(add_)?rms_norm\w*", "RMSNorm", True),
    (r"npu_swiglu\w*", "SwiGLU", True),
    (r"npu_geglu\w*", "GEGLU", True),
    (r"npu_(scaled_masked_softmax|dropout_with_add_softmax|softmax_cross_entropy)\w*", "masked softmax", True),
    (
        r"NpuFused\w+|npu_(bert_)?apply_adam\w*|npu_fused_(adam|sgd)\w*|torch\.optim\.\w+\(fused\)",
        "fused optimizer",
        True,
    ),
    (r"torchair\.\w+|compile\(backend=npu\)", "torch.compile backend", True),
    (r"npu_(fast_)?gelu\w*", "GELU", True),
    (r"npu_layer_norm\w*", "LayerNorm", True),
    (r"npu_(drop_path|dropout)\w*|\w*Drop(out|Path)\w*", "dropout", True),
    (r"npu_format_cast\w*", "format cast (layout, not fused)", False),
    (r"npu_(linear|bmm|confusion_transpose|transpose)\w*", "1.x affinity op (not fused)", False),
)


def construct_of(op: str) -> tuple[str, bool]:
    """(construct, fused) of an op name; unknown ops are fused kernels of their own name."""
    for pattern, construct, fused in _CONSTRUCTS:
        if re.fullmatch(pattern, op):
            return construct, fused
    return f"other ({op})", True


@dataclass
class ModuleOps:
    uses: Counter[tuple[str, str]] = field(default_factory=Counter)  # (function, op) -> uses
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # function -> (first line, last line)
    sources: dict[str, str] = field(default_factory=dict)  # function -> its source text
    calls: dict[str, set[str]] = field(default_factory=dict)  # function -> the names it calls bare

    def in_function(self, function: str, op: str) -> int:
        return self.uses[(function, op)]

    def in_module(self, op: str) -> int:
        return sum(n for (_, o), n in self.uses.items() if o == op)

    def through_helpers(self) -> ModuleOps:
        """These ops, each function also credited with the ops of the module-level functions it calls by name
        (transitively): the tool writes one helper (``_npu_flash_attn``) and calls it where the attention was."""
        helpers = {f for f in self.spans if "." not in f}
        uses: Counter[tuple[str, str]] = Counter(self.uses)
        for function in self.spans:
            seen, todo = set(), [c for c in self.calls.get(function, ()) if c in helpers]
            while todo:
                helper = todo.pop()
                if helper in seen or helper == function:
                    continue
                seen.add(helper)
                todo += [c for c in self.calls.get(helper, ()) if c in helpers]
            for (f, op), n in self.uses.items():
                if f in seen:
                    uses[(function, op)] += n
        return ModuleOps(uses, self.spans, self.sources, self.calls)


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it was imported as (module-level and function-level imports alike)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    names[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def op_of(qualified: str) -> str | None:
    """The op a resolved dotted name uses, or None."""
    parts = qualified.split(".")
    root, last = parts[0], parts[-1]
    if root in ("torch_npu", "torch") and len(parts) >= 2 and parts[1].startswith("npu_"):
        return parts[1]  # torch_npu.npu_x, and torch_npu 1.x's torch.npu_x
    if parts[:3] == ["torch", "ops", "npu"] and len(parts) >= 4:
        return parts[3]
    if last.startswith("NpuFused"):  # torch_npu.optim's, Ascend's apex, or a project's vendored copy of one
        return last
    if parts[:2] == ["torch_npu", "contrib"]:  # torch_npu.contrib[.function|.module].name
        names = [p for p in parts[2:] if p not in ("function", "module")]
        return names[0] if names else None
    if root == "torchair" and len(parts) >= 2:
        return f"torchair.{last}"
    if "torchair" in parts[:-1]:  # torch_npu.dynamo.torchair.get_npu_backend
        return f"torchair.{last}"
    return None


TORCH_FUSED_OPTIMIZERS = ("Adam", "AdamW", "SGD")


def _torch_fused_optimizer(node: ast.Call, aliases: dict[str, str]) -> str | None:
    """``torch.optim.AdamW(fused=X)`` with X not a literal None or False -> ``torch.optim.AdamW(fused)``."""
    parts = _dotted(node.func)
    if parts is None:
        return None
    qualified = ".".join([aliases.get(parts[0], parts[0]), *parts[1:]])
    name = qualified.rsplit(".", 1)[-1]
    if qualified not in (f"torch.optim.{name}", f"torch.optim.{name.lower()}.{name}"):
        return None
    if name not in TORCH_FUSED_OPTIMIZERS:
        return None
    for k in node.keywords:
        if k.arg == "fused" and not (isinstance(k.value, ast.Constant) and k.value.value in (None, False)):
            return f"torch.optim.{name}(fused)"
    return None


def _is_npu_compile(node: ast.Call, aliases: dict[str, str]) -> bool:
    parts = _dotted(node.func)
    if parts is None or ".".join([aliases.get(parts[0], parts[0]), *parts[1:]]) != "torch.compile":
        return False
    return any(
        k.arg == "backend" and isinstance(k.value, ast.Constant) and "npu" in str(k.value.value) for k in node.keywords
    )


class _Collector(ast.NodeVisitor):
    def __init__(self, aliases: dict[str, str], text: str) -> None:
        self.aliases = aliases
        self.text = text
        self.stack: list[str] = []
        self.ops = ModuleOps()

    @property
    def where(self) -> str:
        return ".".join(self.stack) or MODULE

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.stack.append(node.name)
        if not isinstance(node, ast.ClassDef):
            self.ops.spans[self.where] = (node.lineno, node.end_lineno or node.lineno)
            self.ops.sources[self.where] = ast.get_source_segment(self.text, node) or ""
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Import(self, node: ast.Import) -> None:  # an import is not a use
        pass

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        pass

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name):
            self.ops.calls.setdefault(self.where, set()).add(node.func.id)
        if _is_npu_compile(node, self.aliases):
            self.ops.uses[(self.where, "compile(backend=npu)")] += 1
        fused = _torch_fused_optimizer(node, self.aliases)
        if fused is not None:
            self.ops.uses[(self.where, fused)] += 1
        self.generic_visit(node)

    def _name(self, node: ast.Attribute | ast.Name) -> None:
        parts = _dotted(node)
        if parts is not None and parts[0] in self.aliases:
            qualified = ".".join([self.aliases[parts[0]], *parts[1:]])
            op = op_of(qualified)
            if op is not None:
                self.ops.uses[(self.where, op)] += 1
                return  # the chain is one use: not its prefixes again
        if isinstance(node, ast.Attribute):
            self.generic_visit(node)

    visit_Attribute = visit_Name = _name


def module_ops(text: str) -> ModuleOps:
    tree = ast.parse(text)
    collector = _Collector(_aliases(tree), text)
    collector.visit(tree)
    return collector.ops


_TODO = re.compile(r"TODO\(ascend-port\): (NPU\d+)")


def todo_rules(text: str, span: tuple[int, int] | None) -> list[str]:
    """The rule IDs of the ascend-port TODOs between the lines of ``span`` (the whole text when None)."""
    lines = text.splitlines()
    first, last = span if span is not None else (1, len(lines))
    return sorted({m.group(1) for line in lines[first - 1 : last] for m in _TODO.finditer(line)})


def attention_kind(upstream_source: str) -> str:
    """What the humans' attention op replaced, read from the upstream function's text."""
    if "scaled_dot_product_attention" in upstream_source:
        return "attention (SDPA)"
    if re.search(r"flash_attn|xformers|memory_efficient_attention", upstream_source):
        return "attention (flash-attn/xformers)"
    return "attention (hand-written)"

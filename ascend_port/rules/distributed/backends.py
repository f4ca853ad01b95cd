"""NPU200, NPU201, NPU202: `"nccl"` as a process-group backend (an argument, a setting, a comparison), each
string marked top-down by where it stands. The strings' hooks are here: they hand the names of environment
variables to the layer below."""

from __future__ import annotations

import ast
import re

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.device_facts import dotted_ast
from ascend_port.python.module_facts import ModuleFacts
from ascend_port.rules.distributed.base import _literal, _string_leaves, _subscript_key, _target_name
from ascend_port.rules.distributed.env_vars import EnvVarRules

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


BACKEND_ARGUMENT = rule(
    "NPU200",
    "nccl-backend-argument",
    HIGH,
    '`"nccl"` passed as a process-group backend, and `Backend.NCCL` -> `"hccl"`, `Backend.HCCL`.',
    """
    The backend argument of `init_process_group`, `new_group`, `new_subgroups`,
    `new_subgroups_by_enumeration`, `Backend(...)`, `is_backend_available` and DeepSpeed's `init_distributed`
    (positional or keyword), and any keyword whose name ends in `backend` (`dist_backend=`, `ddp_backend=`),
    when its value is `"nccl"`. A per-device string such as `"cpu:gloo,cuda:nccl"` becomes
    `"cpu:gloo,npu:hccl"`. Conditional values (`"nccl" if cuda else "gloo"`) are followed.
    `torch.distributed.Backend.NCCL` becomes `Backend.HCCL`, which torch_npu registers.

    Before:
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        group = dist.new_group(ranks, backend="cpu:gloo,cuda:nccl")
    After:
        dist.init_process_group("hccl", rank=rank, world_size=world_size)
        group = dist.new_group(ranks, backend="cpu:gloo,npu:hccl")
    Stays (a backend for the CPU):
        import torch.distributed as dist
        dist.init_process_group(backend="gloo")
    """,
)
BACKEND_STRING = rule(
    "NPU201",
    "nccl-backend-string",
    MEDIUM,
    'Any other string that is exactly a backend name `"nccl"` (settings, defaults, argparse, dicts) -> `"hccl"`.',
    """
    A string literal that is exactly `"nccl"` (or `"NCCL"`, or a per-device backend string) outside a backend
    argument or a comparison: a variable or dataclass default, a parameter default, argparse's `default=` and
    `choices=`, a dict value, a `return`. Such a string names the NCCL backend in practice; the rule is medium
    because the evidence is the literal alone. Where the setting's name says it is no process-group backend (a MoE
    token dispatcher, a KV-cache or weight transfer backend, Transformer Engine's userbuffers bootstrap, symmetric
    memory: names with `dispatch`, `transfer`, `bootstrap`, `a2a`, `symm`, `ub_`), `"nccl"` stays, also in
    NPU200's `*backend=` keywords, NPU202's comparisons and the setting's `Literal[...]` annotation; so do the
    member values of an enum of implementations (`class GradSyncImpl(str, Enum): nccl = "nccl"`), the names
    configurations choose them by. A device-to-backend table entry `"cuda": "nccl"` becomes
    `"npu": "hccl"`. A list, tuple, set or dict that already names `"hccl"` is left alone (it knows about Ascend,
    and a second `"hccl"` would be a mistake). Docstrings are never touched.

    Before:
        parser.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
        backend: str = "nccl"
    After:
        parser.add_argument("--backend", default="hccl", choices=["hccl", "gloo"])
        backend: str = "hccl"
    Stays (a setting whose name says it is no process-group backend):
        from dataclasses import dataclass


        @dataclass
        class Config:
            tp_comm_bootstrap_backend: str = "nccl"
    """,
)
BACKEND_COMPARISON = rule(
    "NPU202",
    "nccl-backend-comparison",
    HIGH,
    'Comparisons and membership tests against `"nccl"` -> `"hccl"`.',
    """
    `backend == "nccl"`, `backend != "nccl"`, `backend in ("nccl", "gloo")` and `"nccl" in backend` test which
    backend is in use; after the port it is `hccl`. A membership test that already lists `"hccl"` is left alone
    (it already knows about Ascend, and `("hccl", "hccl")` would read as a mistake).

    Before:
        import torch.distributed as dist
        if dist.get_backend() == "nccl":
            dist.barrier()
    After:
        import torch.distributed as dist
        if dist.get_backend() == "hccl":
            dist.barrier()
    Stays (the comparison of a setting that is no process-group backend):
        def all_to_all(a2a_backend):
            return a2a_backend == "nccl"
    """,
)


# --- tables -----------------------------------------------------------------------------------------------------

# Positional index of the backend argument of the functions that take one (qualified names).
BACKEND_POSITION = {
    "torch.distributed.init_process_group": 0,
    "torch.distributed.distributed_c10d.init_process_group": 0,
    "torch.distributed.new_group": 2,
    "torch.distributed.distributed_c10d.new_group": 2,
    "torch.distributed.new_subgroups": 3,
    "torch.distributed.distributed_c10d.new_subgroups": 3,
    "torch.distributed.new_subgroups_by_enumeration": 2,
    "torch.distributed.distributed_c10d.new_subgroups_by_enumeration": 2,
    "torch.distributed.Backend": 0,
    "torch.distributed.distributed_c10d.Backend": 0,
    "torch.distributed.is_backend_available": 0,
    "deepspeed.init_distributed": 0,
    "deepspeed.comm.init_distributed": 0,
}
BACKEND_KEYWORD = re.compile(r"(?i)backend$")
# Names of settings where "nccl" is not a process-group backend: a MoE token dispatcher, a KV-cache or weight
# transfer backend, Transformer Engine's userbuffers bootstrap, symmetric memory. HCCL is no answer there.
NON_PROCESS_GROUP = re.compile(r"(?i)dispatch|transfer|bootstrap|a2a|all_?to_?all|symm|kv_?conn|userbuf|(^|_)ub_")
BACKEND_NAMES = {"nccl": "hccl", "NCCL": "HCCL"}
# An enum class named for implementations (`GradSyncImpl`, `CommImplementation`), and an enum base class.
IMPLEMENTATION_ENUM = re.compile(r"Impl(?:ementation)?s?(?:[A-Z_]|$)")
ENUM_BASE = re.compile(r"(?:^|\.)(?:Str|Int)?Enum$")
# "cpu:gloo,cuda:nccl": comma-separated device:backend pairs.
PER_DEVICE_BACKEND = re.compile(r"^[a-z]+:[a-z]+(,[a-z]+:[a-z]+)*$")


def implementation_enum_lines(facts: ModuleFacts) -> frozenset[int]:
    """The lines of the member values of the module's enums of implementations (`class GradSyncImpl(str, Enum):
    nccl = "nccl"`): a value there is the name a configuration chooses the member by, not a backend handed to a
    process group, and renaming it would reject the configurations that name it."""
    lines: set[int] = set()
    for node in facts.statements(ast.ClassDef):
        if not IMPLEMENTATION_ENUM.search(node.name) or not any(
            ENUM_BASE.search(dotted_ast(base) or "") for base in node.bases
        ):
            continue
        for statement in node.body:
            if isinstance(statement, ast.Assign):
                lines.update(range(statement.value.lineno, (statement.value.end_lineno or statement.lineno) + 1))
    return frozenset(lines)


def _annotation_strings(annotation: cst.BaseExpression) -> list[cst.SimpleString]:
    """The strings of the ``Literal[...]`` subscripts in an annotation (``Literal["nccl", "mpi"] | None``)."""
    found: list[cst.SimpleString] = []
    for node in _walk_subscripts(annotation):
        if isinstance(node.value, (cst.Name, cst.Attribute)) and _code(node.value).rsplit(".", 1)[-1] == "Literal":
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    found += _string_leaves(element.slice.value, containers=True)
    return found


def _walk_subscripts(node: cst.CSTNode) -> list[cst.Subscript]:
    found = [node] if isinstance(node, cst.Subscript) else []
    for child in node.children:
        found += _walk_subscripts(child)
    return found


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _backend_string(value: str) -> str | None:
    """The HCCL form of a backend-name string, or None when it names no NCCL backend."""
    if value in BACKEND_NAMES:
        return BACKEND_NAMES[value]
    if PER_DEVICE_BACKEND.match(value) and "nccl" in value:
        pairs = (p.split(":") for p in value.split(","))
        return ",".join(f"{'npu' if d == 'cuda' else d}:{'hccl' if b == 'nccl' else b}" for d, b in pairs)
    return None


class BackendRules(EnvVarRules):
    """NPU200-NPU202: where each backend string stands (an argument, a comparison, a setting, a name that says it
    is no process-group backend), and its rewrite."""

    def _not_backends(
        self, name: str, value: cst.BaseExpression | None, annotation: cst.Annotation | None = None
    ) -> bool:
        """Keep the strings of ``value`` (and of its ``Literal[...]`` annotation) when ``name`` says they are not
        process-group backends."""
        if value is None or not NON_PROCESS_GROUP.search(name):
            return False
        self._kept_strings.update(id(s) for s in _string_leaves(value, containers=True))
        if annotation is not None:  # `bootstrap_backend: Literal["nccl", "mpi"] = "nccl"`: both sides stay
            self._kept_strings.update(id(s) for s in _annotation_strings(annotation.annotation))
        return True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:  # env["NCCL_X"] = value
            if (key := _subscript_key(target.target)) is not None:
                self._env_values[id(key)] = node.value
            self._not_backends(_target_name(target.target), node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._not_backends(_target_name(node.target), node.value, node.annotation)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if isinstance(node.key, cst.SimpleString):
            self._not_backends(str(_literal(node.key)), node.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._non_references.add(id(node.keyword))
            if self._not_backends(node.keyword.value, node.value):
                return
            if BACKEND_KEYWORD.search(node.keyword.value):
                self._argument_strings.update(id(s) for s in _string_leaves(node.value, containers=False))

    def visit_Param(self, node: cst.Param) -> None:
        self._non_references.add(id(node.name))
        self._not_backends(node.name.value, node.default, node.annotation)

    def _visit_backend_call(self, node: cst.Call) -> None:
        index = BACKEND_POSITION.get(self.ctx.imports.resolve(node.func) or "")
        if index is None:
            return
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if index < len(positional):
            self._argument_strings.update(id(s) for s in _string_leaves(positional[index].value, containers=False))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        strings = [s for operand in operands for s in _string_leaves(operand, containers=True)]
        values = {_literal(s) for s in strings}
        names = (_target_name(operand) for operand in operands)
        if "hccl" in values or "HCCL" in values or any(NON_PROCESS_GROUP.search(n) for n in names if n):
            self._kept_strings.update(id(s) for s in strings)  # already knows about Ascend
            return
        self._comparison_strings.update(id(s) for s in strings)

    def _visit_collection(self, strings: list[cst.SimpleString]) -> None:
        # `choices=["nccl", "gloo", "hccl"]` already offers HCCL: turning "nccl" into a second "hccl" is wrong.
        if any(_literal(s) in ("hccl", "HCCL") for s in strings):
            self._kept_strings.update(id(s) for s in strings)

    def visit_List(self, node: cst.List) -> None:
        self._visit_collection(_string_leaves(node, containers=True))

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._visit_collection(_string_leaves(node, containers=True))

    def visit_Set(self, node: cst.Set) -> None:
        self._visit_collection(_string_leaves(node, containers=True))

    def visit_Dict(self, node: cst.Dict) -> None:
        for element in node.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                self._env_values[id(element.key)] = element.value
        self._visit_collection(
            [e.key for e in node.elements if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)]
        )

    # --- strings: backends and environment variables ---------------------------------------------------------

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        if "ccl" not in original.value.lower():
            return updated  # every backend name and variable these rules know contains "ccl"
        if id(original) in self._docstrings or id(original) in self._kept_strings:
            return updated
        value = original.evaluated_value
        if not isinstance(value, str) or not value or "\n" in value:
            return updated
        if (backend := _backend_string(value)) is not None:
            if self.ctx.line_of(original) in self.ctx.fact(implementation_enum_lines):
                return updated
            return self._rewrite_backend(original, updated, value, backend)
        if "CCL" in value.upper():
            return self._rewrite_env_name(original, updated, value)
        return updated

    def _rewrite_backend(self, original, updated, value: str, backend: str) -> cst.SimpleString:
        if id(original) in self._argument_strings:
            rule_ = BACKEND_ARGUMENT
        elif id(original) in self._comparison_strings:
            rule_ = BACKEND_COMPARISON
        else:
            rule_ = BACKEND_STRING
        new = updated.with_changes(value=updated.value.replace(value, backend))
        return self.fix(rule_, original, new, f"backend {value!r} -> {backend!r}") or updated

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        """``{"cuda": "nccl", "cpu": "gloo"}`` maps device types to backends: the entry becomes ``"npu": "hccl"``
        (the value is rewritten by leave_SimpleString, and reported there)."""
        if id(original.value) in self._value_rewrites:
            return updated.with_changes(value=self._value_rewrites[id(original.value)])
        key, value = original.key, original.value
        if (
            isinstance(key, cst.SimpleString)
            and _literal(key) == "cuda"
            and isinstance(value, cst.SimpleString)
            and _literal(value) in BACKEND_NAMES
            and id(value) not in self._kept_strings
            and isinstance(updated.key, cst.SimpleString)
            and self.enabled(BACKEND_STRING)
        ):
            return updated.with_changes(key=updated.key.with_changes(value=updated.key.value.replace("cuda", "npu")))
        return updated

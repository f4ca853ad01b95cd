"""NPU203, NPU204: the names of NCCL's process groups (`is_nccl_available`, `ProcessGroupNCCL`, NCCL symmetric
memory), and NPU200's `Backend.NCCL`. The calls' marks are here, those of the layers below with them."""

from __future__ import annotations

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.names import dotted
from ascend_port.rules.distributed.backends import BACKEND_ARGUMENT, BackendRules
from ascend_port.rules.distributed.base import _literal, _string_leaves

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


IS_NCCL_AVAILABLE = rule(
    "NPU203",
    "is-nccl-available",
    HIGH,
    "`torch.distributed.is_nccl_available()` -> `torch.distributed.is_hccl_available()`.",
    """
    torch_npu adds `torch.distributed.is_hccl_available` (NCCL is never available on an Ascend host). All import
    styles are followed: `dist.is_nccl_available()`, `from torch.distributed import is_nccl_available`.

    Before:
        import torch.distributed as dist
        if dist.is_nccl_available():
            dist.init_process_group("nccl")
    After:
        import torch.distributed as dist
        if dist.is_hccl_available():
            dist.init_process_group("hccl")
    """,
)
PROCESS_GROUP_NCCL = rule(
    "NPU204",
    "process-group-nccl",
    LOW,
    "`ProcessGroupNCCL` (and its `Options`), NCCL symmetric memory: no drop-in on NPU: TODO.",
    """
    The HCCL process group is `torch_npu._C._distributed_c10d.ProcessGroupHCCL`; its options and constructor are
    not those of `ProcessGroupNCCL` (no `is_high_priority_stream`, no NCCL config), so code that builds or
    inspects NCCL process groups is marked for a manual port. Usually `dist.new_group(backend="hccl")` is enough.
    `torch.distributed._symmetric_memory.set_backend("NCCL")` names a symmetric-memory backend, not a process
    group: it is left as it is (not turned into `"HCCL"`) with a TODO.

    Before:
        options = dist.ProcessGroupNCCL.Options()
    After:
        # TODO(ascend-port): NPU204 [low] ProcessGroupNCCL does not exist on NPU: the HCCL process group is ...
        options = dist.ProcessGroupNCCL.Options()
    """,
)


# --- tables -----------------------------------------------------------------------------------------------------

SYMMETRIC_MEMORY_SET_BACKEND = "torch.distributed._symmetric_memory.set_backend"
IS_NCCL_AVAILABLE_NAMES = {
    "torch.distributed.is_nccl_available",
    "torch.distributed.distributed_c10d.is_nccl_available",
}


class ProcessGroupRules(BackendRules):
    """NPU203, NPU204 (and NPU200's `Backend.NCCL`): the names of NCCL's process groups, in code and in imports."""

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        positional = [a for a in node.args if a.keyword is None and not a.star]
        setter = isinstance(func, cst.Attribute) and func.attr.value in ("setdefault", "putenv")
        if setter and len(positional) == 2 and isinstance(positional[0].value, cst.SimpleString):
            self._env_values[id(positional[0].value)] = positional[1].value  # os.environ.setdefault("NCCL_X", v)
        unsetter = isinstance(func, cst.Attribute) and func.attr.value in ("pop", "unsetenv")
        if unsetter and positional and isinstance(positional[0].value, cst.SimpleString):
            self._unset_names.add(id(positional[0].value))  # os.environ.pop("NCCL_X", None)
        flags = [a.value for a in positional if isinstance(a.value, cst.SimpleString)]
        if isinstance(func, cst.Attribute) and func.attr.value == "add_argument":
            # parser.add_argument("--moe-dispatcher-backend", default="nccl", choices=[...]): the flag names it.
            for flag in flags:
                for arg in node.args:
                    if arg.keyword is not None:
                        self._not_backends(str(_literal(flag)), arg.value)
        if self.ctx.imports.resolve(func) == SYMMETRIC_MEMORY_SET_BACKEND:
            self._kept_strings.update(id(s) for a in node.args for s in _string_leaves(a.value, containers=True))
            self.todo(
                PROCESS_GROUP_NCCL,
                node,
                "torch.distributed._symmetric_memory.set_backend selects a symmetric-memory backend, not a process "
                "group: torch_npu has no NCCL one; use the backend your torch_npu release registers, or drop the call",
            )
        self._visit_backend_call(node)

    # --- names: Backend.NCCL, is_nccl_available, ProcessGroupNCCL --------------------------------------------

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if self._in_import:
            return updated
        attr = original.attr.value
        if attr == "ProcessGroupNCCL":
            self._process_group_todo(original)
            return updated
        qualified = self.ctx.imports.resolve(original)
        if qualified is None:
            return updated
        if attr == "NCCL" and qualified.endswith("distributed.Backend.NCCL"):
            return (
                self.fix(
                    BACKEND_ARGUMENT,
                    original,
                    updated.with_changes(attr=cst.Name("HCCL")),
                    "Backend.NCCL -> Backend.HCCL",
                )
                or updated
            )
        if qualified in IS_NCCL_AVAILABLE_NAMES:
            return (
                self.fix(
                    IS_NCCL_AVAILABLE,
                    original,
                    updated.with_changes(attr=cst.Name("is_hccl_available")),
                    "is_nccl_available -> is_hccl_available",
                )
                or updated
            )
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if self._in_import or id(original) in self._non_references:
            return updated
        qualified = self.ctx.imports.resolve(original)
        if qualified is None or not qualified.startswith("torch."):
            return updated
        if original.value == "ProcessGroupNCCL" or qualified.endswith(".ProcessGroupNCCL"):
            self._process_group_todo(original)
        elif qualified in IS_NCCL_AVAILABLE_NAMES and original.value == "is_nccl_available":
            return (
                self.fix(
                    IS_NCCL_AVAILABLE,
                    original,
                    updated.with_changes(value="is_hccl_available"),
                    "is_nccl_available -> is_hccl_available",
                )
                or updated
            )
        return updated

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self._in_import = False
        if isinstance(updated.names, cst.ImportStar) or original.relative:
            return updated
        module = dotted(original.module) if original.module else None
        if module is None or not module.startswith("torch."):
            return updated
        names = []
        changed = False
        for alias in updated.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else ""
            if name == "ProcessGroupNCCL":
                self._process_group_todo(original)
            elif name == "is_nccl_available" and f"{module}.{name}" in IS_NCCL_AVAILABLE_NAMES:
                alias = alias.with_changes(name=cst.Name("is_hccl_available"))
                changed = True
            names.append(alias)
        if not changed:
            return updated
        return (
            self.fix(
                IS_NCCL_AVAILABLE,
                original,
                updated.with_changes(names=names),
                "from torch.distributed import is_nccl_available -> is_hccl_available",
            )
            or updated
        )

    def _process_group_todo(self, node: cst.CSTNode) -> None:
        self.todo(
            PROCESS_GROUP_NCCL,
            node,
            "ProcessGroupNCCL does not exist on NPU: the HCCL process group is "
            "torch_npu._C._distributed_c10d.ProcessGroupHCCL (its Options differ); "
            'dist.new_group(backend="hccl") is usually enough',
        )

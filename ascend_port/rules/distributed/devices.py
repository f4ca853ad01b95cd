"""NPU205, NPU206, NPU210: the devices distributed code passes as a type or an index (a device mesh's type,
FSDP's `device_id`, an integer device from the device count), which mean CUDA unless they say `npu`; and the
calls' rewrites, which apply the values the environment-variable layer converted."""

from __future__ import annotations

import re

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.names import build_dotted
from ascend_port.rules.device.strings import rewrite_device_expr
from ascend_port.rules.distributed.process_groups import ProcessGroupRules

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


DEVICE_MESH_TYPE = rule(
    "NPU205",
    "device-mesh-type",
    HIGH,
    '`init_device_mesh("cuda", ...)`, `DeviceMesh("cuda", ...)` -> `"npu"`.',
    """
    The positional device type of `init_device_mesh`, `DeviceMesh` and `DeviceMesh.from_group`. The keyword form
    `device_type="cuda"` is rewritten by NPU103 (device-string-argument), which owns every `device_type=`.

    Before:
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))
    After:
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh("npu", (2, 4), mesh_dim_names=("dp", "tp"))
    Stays (another device type):
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh("cpu", (2,))
    """,
)
FSDP_DEVICE_ID = rule(
    "NPU206",
    "fsdp-device-id",
    MEDIUM,
    'FSDP `device_id=<int>` -> `device_id=torch.device("npu", <int>)`; DDP\'s `device_ids=[rank]` stays.',
    """
    FSDP turns an integer `device_id` into `torch.device(device_id)`, and a bare integer device means CUDA, so
    `FullyShardedDataParallel(model, device_id=local_rank)` fails on NPU. An argument that is evidently an index
    (an integer literal, `local_rank`, `rank`, `gpu_id`, `int(...)`, `current_device()`, `get_rank()`, `x % n`)
    is wrapped in `torch.device("npu", ...)` (an f-string `f"npu:{...}"` when the module does not import torch).
    Anything else (`device_id=device`) may already be a device and is left alone; hence medium confidence.
    DDP needs nothing: it takes the device type from the module's parameters and uses `device_ids=[local_rank]`
    only as indices, so DDP calls are not changed.

    Before:
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        model = FSDP(model, device_id=local_rank)
    After:
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        model = FSDP(model, device_id=torch.device("npu", local_rank))
    Stays (DDP's device_ids):
        from torch.nn.parallel import DistributedDataParallel as DDP


        def wrap(model, rank):
            return DDP(model, device_ids=[rank])
    """,
)


INTEGER_DEVICE = rule(
    "NPU210",
    "integer-device",
    MEDIUM,
    "An integer device (`device = rank % torch.cuda.device_count()`) passed to `.to()` or `device=` -> "
    '`torch.device("npu", device)`.',
    """
    A bare integer device means CUDA to PyTorch: `tensor.to(device)` and `torch.zeros(..., device=device)` with
    `device = local_rank % torch.cuda.device_count()` (or `torch.cuda.current_device()`) ask for `cuda:<n>`, which
    fails on an Ascend host once the count comes from `torch.npu`. Where every assignment of the name in the
    function is such an index, its uses in `.to(...)` (the first argument or `device=`) and in the `device=` of a
    `torch.*` factory are wrapped in `torch.device("npu", ...)`. The name itself stays an integer, so
    `torch.npu.set_device(device)`, `device_ids=[device]` and arithmetic keep working. A name that is an index
    only on some paths (`device = torch.cuda.current_device()` or `"cpu"`) is not rewritten; its uses get a TODO.

    Before:
        import torch
        def setup(rank):
            device = rank % torch.cuda.device_count()
            model.to(device)
    After:
        import torch
        def setup(rank):
            device = rank % torch.npu.device_count()
            model.to(torch.device("npu", device))
    """,
)


# --- tables -----------------------------------------------------------------------------------------------------

# Device-mesh constructors: qualified name -> positional index of the device type.
MESH_DEVICE_POSITION = {
    "torch.distributed.device_mesh.init_device_mesh": 0,
    "torch.distributed.init_device_mesh": 0,
    "torch.distributed.device_mesh.DeviceMesh": 0,
    "torch.distributed.DeviceMesh": 0,
    "torch.distributed._tensor.DeviceMesh": 0,
    "torch.distributed.tensor.DeviceMesh": 0,
    "torch.distributed.device_mesh.DeviceMesh.from_group": 1,
    "torch.distributed.DeviceMesh.from_group": 1,
}
FSDP_NAMES = {
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
}
# Names that hold a device index, by convention.
INDEX_NAME = re.compile(
    r"(?i)^(local_|global_|node_)?rank$|_rank$|^gpu(_?(id|idx|index))?$"
    r"|^(device|dev)_?(idx|index|ordinal)$|^local_process_index$|^process_index$"
)
INDEX_CALLS = re.compile(r"(^|\.)(current_device|get_rank|get_local_rank|get_node_local_rank)$")


DEVICE_COUNTS = {"torch.cuda.device_count", "torch.npu.device_count", "torch.accelerator.device_count"}
CURRENT_DEVICES = {"torch.cuda.current_device", "torch.npu.current_device"}


def _is_device_index(expr: cst.BaseExpression | None, resolve) -> bool:
    """``rank % torch.cuda.device_count()`` or ``torch.cuda.current_device()``: an int that means a device."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo):
        right = expr.right
        return isinstance(right, cst.Call) and resolve(right.func) in DEVICE_COUNTS
    return isinstance(expr, cst.Call) and resolve(expr.func) in CURRENT_DEVICES


class _Bindings(cst.CSTVisitor):
    """The names a function binds, each with whether every binding is a device index (nested scopes left out)."""

    def __init__(self, resolve) -> None:
        self._resolve = resolve
        self.index: dict[str, bool] = {}  # every binding is an index
        self.some_index: set[str] = set()  # at least one binding is

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            index = _is_device_index(value, self._resolve)
            self.index[target.value] = self.index.get(target.value, True) and index
            if index:
                self.some_index.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, None)

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name, None)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def _index_names(function: cst.FunctionDef, resolve) -> tuple[frozenset[str], frozenset[str]]:
    """(the names every binding of which is a device index, those only some bindings of which are)."""
    bindings = _Bindings(resolve)
    function.params.visit(bindings)
    function.body.visit(bindings)
    always = frozenset(name for name, index in bindings.index.items() if index)
    return always, frozenset(bindings.some_index - always)


def _looks_like_index(expr: cst.BaseExpression, resolve) -> bool:
    """Is ``expr`` evidently a device index (an int), not possibly a torch.device?"""
    if isinstance(expr, cst.Integer):
        return True
    if isinstance(expr, cst.Name):
        return bool(INDEX_NAME.search(expr.value))
    if isinstance(expr, cst.Attribute):
        return bool(INDEX_NAME.search(expr.attr.value))
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value == "int":
            return True
        name = resolve(func) or (func.attr.value if isinstance(func, cst.Attribute) else "")
        return bool(INDEX_CALLS.search(name))
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Modulo, cst.FloorDivide)):
        return _looks_like_index(expr.left, resolve) or isinstance(expr.left, cst.Call)
    return False


class DistributedDeviceRules(ProcessGroupRules):
    """NPU205, NPU206, NPU210: device types and indices in the calls that take them."""

    # --- integer devices (NPU210) ---------------------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._index_stack.append(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._index_stack.pop()
        return updated

    def _index_names(self) -> tuple[frozenset[str], frozenset[str]]:
        """_index_names of the innermost function, read once."""
        top = self._index_stack[-1]
        if isinstance(top, cst.FunctionDef):
            source = self.ctx.source
            if not source or "device_count" in source or "current_device" in source:
                top = _index_names(top, self.ctx.imports.resolve)
            else:  # (an index is made by one of those calls: a module that makes none has no index to read)
                top = (frozenset(), frozenset())
            self._index_stack[-1] = top
        return top

    def _device_index_args(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """Wrap the integer device of ``x.to(device)``, ``x.to(device=device)``, ``torch.zeros(..., device=device)``."""
        if not self._index_stack or self.ctx.imports.local_name_for("torch") is None:
            return updated
        func = original.func
        is_to = isinstance(func, cst.Attribute) and func.attr.value == "to"
        qualified = self.ctx.imports.resolve(func) or ""
        factory = qualified.startswith("torch.") and not qualified.startswith(("torch.cuda.", "torch.npu."))
        if not is_to and not factory:
            return updated
        names, maybe = self._index_names()
        if not (names or maybe):
            return updated
        args = list(updated.args)
        changed = False
        for i, arg in enumerate(original.args):
            device_arg = (arg.keyword is None and i == 0 and is_to) or (
                arg.keyword is not None and arg.keyword.value == "device"
            )
            if device_arg and not arg.star and isinstance(arg.value, cst.Name) and arg.value.value in maybe:
                self.todo(
                    INTEGER_DEVICE,
                    original,
                    f"{arg.value.value} may be an integer device index (current_device(), x % device_count()), "
                    'which means CUDA: make that branch torch.device("npu", index)',
                )
            elif device_arg and not arg.star and isinstance(arg.value, cst.Name) and arg.value.value in names:
                wrapped = cst.Call(
                    build_dotted(f"{self.ctx.torch_name()}.device"),
                    [cst.Arg(cst.SimpleString('"npu"')), cst.Arg(updated.args[i].value)],
                )
                args[i] = args[i].with_changes(value=wrapped)
                changed = True
        if not changed:
            return updated
        message = 'integer device -> torch.device("npu", ...)'
        return self.fix(INTEGER_DEVICE, original, updated.with_changes(args=args), message) or updated

    # --- calls: device meshes, FSDP ----------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        updated = self._device_index_args(original, updated)
        if any(id(a.value) in self._value_rewrites for a in original.args):
            args = [
                u.with_changes(value=self._value_rewrites[id(o.value)]) if id(o.value) in self._value_rewrites else u
                for o, u in zip(original.args, updated.args, strict=True)
            ]
            return updated.with_changes(args=args)
        qualified = self.ctx.imports.resolve(original.func)
        if qualified in MESH_DEVICE_POSITION:
            return self._mesh_device(original, updated, MESH_DEVICE_POSITION[qualified])
        if qualified in FSDP_NAMES:
            return self._fsdp_device_id(original, updated)
        return updated

    def _mesh_device(self, original: cst.Call, updated: cst.Call, index: int) -> cst.Call:
        args = list(updated.args)
        positional = [i for i, a in enumerate(args) if a.keyword is None and not a.star]
        if index >= len(positional):
            return updated
        i = positional[index]
        new = rewrite_device_expr(args[i].value, containers=False)
        if new is None:
            return updated
        args[i] = args[i].with_changes(value=new)
        return (
            self.fix(DEVICE_MESH_TYPE, original, updated.with_changes(args=args), "device mesh type cuda -> npu")
            or updated
        )

    def _fsdp_device_id(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        args = list(updated.args)
        for i, arg in enumerate(args):
            if arg.keyword is None or arg.keyword.value != "device_id":
                continue
            if not _looks_like_index(original.args[i].value, self.ctx.imports.resolve):
                return updated
            value = arg.value
            if self.ctx.imports.local_name_for("torch") is not None:
                new_value: cst.BaseExpression = cst.Call(
                    build_dotted(f"{self.ctx.torch_name()}.device"),
                    [cst.Arg(cst.SimpleString('"npu"')), cst.Arg(value)],
                )
            else:
                code = cst.Module([]).code_for_node(value)
                if "{" in code or "}" in code or '"' in code or "\n" in code:
                    return updated
                new_value = cst.parse_expression(f'f"npu:{{{code}}}"')
            args[i] = arg.with_changes(value=new_value)
            return (
                self.fix(
                    FSDP_DEVICE_ID, original, updated.with_changes(args=args), "FSDP device_id index -> npu device"
                )
                or updated
            )
        return updated

"""NPU2xx: distributed training. NCCL backends and environment variables, device meshes, FSDP's device_id.

On an Ascend host the collective library is HCCL: torch_npu registers the ``hccl`` process-group backend for the
``npu`` device (and ``torch.distributed.Backend.HCCL`` with it), so every place that names NCCL must name HCCL.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import todo_comment
from ascend_port.python.names import build_dotted, dotted
from ascend_port.python.scopes import Trigger, innermost
from ascend_port.python.transformer import PortTransformer
from ascend_port.rules.device.strings import rewrite_device_expr

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
    NPU200's `*backend=` keywords and NPU202's comparisons. A device-to-backend table entry `"cuda": "nccl"` becomes
    `"npu": "hccl"`. A list, tuple, set or dict that already names `"hccl"` is left alone (it knows about Ascend,
    and a second `"hccl"` would be a mistake). Docstrings are never touched.

    Before:
        parser.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
        backend: str = "nccl"
    After:
        parser.add_argument("--backend", default="hccl", choices=["hccl", "gloo"])
        backend: str = "hccl"
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
    """,
)
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
    """,
)
NCCL_ENV_VAR = rule(
    "NPU207",
    "nccl-env-var",
    HIGH,
    "NCCL environment variable names with an exact HCCL counterpart (`TORCH_NCCL_*`) -> the HCCL name.",
    """
    Strings that are exactly the name of a process-group variable read by PyTorch's NCCL backend become the name
    torch_npu's HCCL backend reads, with the same meaning and value format: `TORCH_NCCL_BLOCKING_WAIT`,
    `TORCH_NCCL_ASYNC_ERROR_HANDLING`, `TORCH_NCCL_DESYNC_DEBUG`, `TORCH_NCCL_ENABLE_MONITORING`,
    `TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC`, `TORCH_NCCL_DUMP_ON_TIMEOUT`, `TORCH_NCCL_TRACE_BUFFER_SIZE`,
    `TORCH_NCCL_TRACE_CPP_STACK`, `TORCH_NCCL_HIGH_PRIORITY`, `TORCH_NCCL_COORD_CHECK_MILSEC`,
    `TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC`, `TORCH_NCCL_DEBUG_INFO_PIPE_FILE`, `TORCH_NCCL_DEBUG_INFO_TEMP_FILE`
    -> `TORCH_HCCL_*`, and the legacy `NCCL_BLOCKING_WAIT`, `NCCL_ASYNC_ERROR_HANDLING`, `NCCL_DESYNC_DEBUG`.
    Some defaults differ (the heartbeat timeout is 600 s on NPU, flight recording is off by default).
    Same style as NPU111 (cuda-env-var): docstrings stay; names are case-sensitive, as the variables are (a
    lower-case `nccl_version` or `nccl_ub` is an identifier, not a variable, and is left alone).

    Before:
        os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"
    After:
        os.environ["TORCH_HCCL_ASYNC_ERROR_HANDLING"] = "1"
    """,
)
NCCL_ENV_VAR_REVIEW = rule(
    "NPU208",
    "nccl-env-var-review",
    MEDIUM,
    "NCCL variables with an HCCL counterpart that reads its value differently -> the HCCL name and value, or a TODO.",
    """
    `NCCL_SOCKET_IFNAME` -> `HCCL_SOCKET_IFNAME` and `NCCL_SOCKET_FAMILY` -> `HCCL_SOCKET_FAMILY` are renamed.
    The others are renamed only where the value they are set to is a literal HCCL accepts, converted where the units
    differ: `NCCL_BUFFSIZE` (bytes) -> `HCCL_BUFFSIZE` in MB (a whole number of MiB: `str(8 * 1024 * 1024)` ->
    `"8"`), `NCCL_ALGO=Ring` -> `HCCL_ALGO="level0:NA;level1:ring"`, `NCCL_IB_TIMEOUT` -> `HCCL_RDMA_TIMEOUT`
    (5-20), `NCCL_IB_RETRY_CNT` -> `HCCL_RDMA_RETRY_CNT` (1-7), `NCCL_IB_TC` -> `HCCL_RDMA_TC` (multiples of 4 up
    to 255), `NCCL_IB_SL` -> `HCCL_RDMA_SL` (0-7). A value outside the HCCL range, with no counterpart (`Tree`),
    computed at run time, or a read of the variable keeps the NCCL name (harmless on NPU) and gets a TODO saying
    what the HCCL variable accepts: HCCL refuses to start on a value it rejects.

    Before:
        os.environ["NCCL_BUFFSIZE"] = str(8 * 1024 * 1024)
        os.environ["NCCL_IB_TIMEOUT"] = "22"
    After:
        os.environ["HCCL_BUFFSIZE"] = "8"
        # TODO(ascend-port): NPU209 [low] NCCL_IB_TIMEOUT kept (HCCL does not accept '22'); ...
        os.environ["NCCL_IB_TIMEOUT"] = "22"
    """,
)
NCCL_ENV_VAR_UNSUPPORTED = rule(
    "NPU209",
    "nccl-env-var-unsupported",
    LOW,
    "NCCL variables with no HCCL equivalent (`NCCL_DEBUG`, `NCCL_P2P_DISABLE`, `NCCL_IB_*`, ...): TODO.",
    """
    The string is left as it is (setting it is harmless, it just does nothing on NPU) and a TODO names the nearest
    Ascend setting, or says there is none: `NCCL_DEBUG` -> CANN logging (`ASCEND_GLOBAL_LOG_LEVEL`,
    `ASCEND_SLOG_PRINT_TO_STDOUT`); `NCCL_P2P_DISABLE`/`NCCL_SHM_DISABLE` -> `HCCL_INTRA_PCIE_ENABLE`/
    `HCCL_INTRA_ROCE_ENABLE` choose the intra-server link; `NCCL_IB_DISABLE`/`NCCL_IB_HCA`/`NCCL_NET_GDR_LEVEL`
    -> none (HCCL uses the RoCE NICs configured with hccn_tool); any other `NCCL_*`/`TORCH_NCCL_*` -> none known.
    The variables of NPU208 that are kept because HCCL would reject their value get this TODO too.

    Before:
        os.environ["NCCL_DEBUG"] = "INFO"
    After:
        # TODO(ascend-port): NPU209 [low] NCCL_DEBUG has no HCCL equivalent and no effect on NPU; the nearest is ...
        os.environ["NCCL_DEBUG"] = "INFO"
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
SYMMETRIC_MEMORY_SET_BACKEND = "torch.distributed._symmetric_memory.set_backend"
BACKEND_NAMES = {"nccl": "hccl", "NCCL": "HCCL"}
# "cpu:gloo,cuda:nccl": comma-separated device:backend pairs.
PER_DEVICE_BACKEND = re.compile(r"^[a-z]+:[a-z]+(,[a-z]+:[a-z]+)*$")

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
IS_NCCL_AVAILABLE_NAMES = {
    "torch.distributed.is_nccl_available",
    "torch.distributed.distributed_c10d.is_nccl_available",
}
# Names that hold a device index, by convention.
INDEX_NAME = re.compile(
    r"(?i)^(local_|global_|node_)?rank$|_rank$|^gpu(_?(id|idx|index))?$"
    r"|^(device|dev)_?(idx|index|ordinal)$|^local_process_index$|^process_index$"
)
INDEX_CALLS = re.compile(r"(^|\.)(current_device|get_rank|get_local_rank|get_node_local_rank)$")

TORCH_NCCL_SAME = (
    "BLOCKING_WAIT",
    "ASYNC_ERROR_HANDLING",
    "DESYNC_DEBUG",
    "ENABLE_MONITORING",
    "HEARTBEAT_TIMEOUT_SEC",
    "DUMP_ON_TIMEOUT",
    "TRACE_BUFFER_SIZE",
    "TRACE_CPP_STACK",
    "HIGH_PRIORITY",
    "COORD_CHECK_MILSEC",
    "WAIT_TIMEOUT_DUMP_MILSEC",
    "DEBUG_INFO_PIPE_FILE",
    "DEBUG_INFO_TEMP_FILE",
)
ENV_SAME = {f"TORCH_NCCL_{s}": f"TORCH_HCCL_{s}" for s in TORCH_NCCL_SAME}
ENV_SAME |= {f"NCCL_{s}": f"TORCH_HCCL_{s}" for s in ("BLOCKING_WAIT", "ASYNC_ERROR_HANDLING", "DESYNC_DEBUG")}
# NCCL name -> HCCL name, for the variables whose HCCL counterpart takes the same kind of value.
ENV_REVIEW: dict[str, str] = {
    "NCCL_SOCKET_IFNAME": "HCCL_SOCKET_IFNAME",
    "NCCL_SOCKET_FAMILY": "HCCL_SOCKET_FAMILY",
    "NCCL_IB_TIMEOUT": "HCCL_RDMA_TIMEOUT",
    "NCCL_IB_RETRY_CNT": "HCCL_RDMA_RETRY_CNT",
    "NCCL_IB_TC": "HCCL_RDMA_TC",
    "NCCL_IB_SL": "HCCL_RDMA_SL",
    "NCCL_BUFFSIZE": "HCCL_BUFFSIZE",
    "NCCL_ALGO": "HCCL_ALGO",
}


def _int_in(low: int, high: int, step: int = 1) -> Callable[[str], str | None]:
    def convert(value: str) -> str | None:
        number = value.strip()
        if not number.isdigit() or not low <= int(number) <= high or int(number) % step:
            return None
        return str(int(number))

    return convert


def _bytes_to_mb(value: str) -> str | None:
    # HCCL_BUFFSIZE is a whole number of MB, at least 1: only an exact number of MiB converts without a guess.
    number = value.strip()
    if not number.isdigit() or int(number) < 2**20 or int(number) % 2**20:
        return None
    return str(int(number) // 2**20)


def _algo(value: str) -> str | None:
    # NCCL_ALGO lists algorithms (Ring, Tree, CollNet, NVLS, ...); of these only the ring has an HCCL counterpart,
    # the inter-server (level1) ring. level0 (inside a server) only accepts NA.
    return "level0:NA;level1:ring" if value.strip().lower() == "ring" else None


# NCCL name -> (NCCL value -> HCCL value, or None where HCCL would reject it or means something else; what the HCCL
# variable accepts). Ranges from the CANN environment-variable reference (the narrower one where products differ).
ENV_VALUES: dict[str, tuple[Callable[[str], str | None], str]] = {
    "NCCL_IB_TIMEOUT": (_int_in(5, 20), "HCCL_RDMA_TIMEOUT takes an integer in [5, 20] (NCCL_IB_TIMEOUT: 1-31)"),
    "NCCL_IB_RETRY_CNT": (_int_in(1, 7), "HCCL_RDMA_RETRY_CNT takes an integer in [1, 7]"),
    "NCCL_IB_TC": (_int_in(0, 255, 4), "HCCL_RDMA_TC takes a multiple of 4 in [0, 255]"),
    "NCCL_IB_SL": (_int_in(0, 7), "HCCL_RDMA_SL takes an integer in [0, 7]"),
    "NCCL_BUFFSIZE": (_bytes_to_mb, "HCCL_BUFFSIZE is in MB, at least 1 (NCCL_BUFFSIZE is in bytes)"),
    "NCCL_ALGO": (
        _algo,
        'HCCL_ALGO takes "level0:NA;level1:<ring|H-D_R|NHR|NB|pipeline>" (NCCL_ALGO=Ring -> level1:ring)',
    ),
}


def review_env_value(name: str, value: str | None, why: str = "") -> tuple[str | None, str | None]:
    """For an NPU208 variable set to ``value`` (None: unknown, ``why`` says why): the value to set under the HCCL
    name (None: keep the NCCL name, HCCL would reject the value), and the TODO message when it is kept."""
    if name not in ENV_VALUES:
        return value, None
    convert, accepts = ENV_VALUES[name]
    converted = convert(value) if value is not None else None
    if converted is not None:
        return converted, None
    what = (why or "its value is not a literal") if value is None else f"HCCL does not accept {value!r}"
    return None, f"{name} kept ({what}); {accepts}: set {ENV_REVIEW[name]} by hand"


_CANN_LOGGING = "the nearest is CANN logging: ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT"
_INTRA_LINK = "the nearest is HCCL_INTRA_PCIE_ENABLE / HCCL_INTRA_ROCE_ENABLE (which link HCCL uses inside a server)"
_ROCE = "HCCL uses the RoCE NICs configured with hccn_tool: nothing to set"
ENV_NEAREST = {
    "NCCL_DEBUG": _CANN_LOGGING,
    "NCCL_DEBUG_SUBSYS": _CANN_LOGGING,
    "NCCL_DEBUG_FILE": _CANN_LOGGING,
    "NCCL_P2P_DISABLE": _INTRA_LINK,
    "NCCL_P2P_LEVEL": _INTRA_LINK,
    "NCCL_SHM_DISABLE": _INTRA_LINK,
    "NCCL_IB_DISABLE": _ROCE,
    "NCCL_IB_HCA": _ROCE,
    "NCCL_IB_GID_INDEX": _ROCE,
    "NCCL_NET_GDR_LEVEL": _ROCE,
    "NCCL_TIMEOUT": "the nearest are HCCL_CONNECT_TIMEOUT (link set-up, s) and HCCL_EXEC_TIMEOUT (collectives, s)",
}
NCCL_ENV_NAME = re.compile(r"^(TORCH_)?NCCL_[A-Z0-9_]*[A-Z0-9]$")


def _backend_string(value: str) -> str | None:
    """The HCCL form of a backend-name string, or None when it names no NCCL backend."""
    if value in BACKEND_NAMES:
        return BACKEND_NAMES[value]
    if PER_DEVICE_BACKEND.match(value) and "nccl" in value:
        pairs = (p.split(":") for p in value.split(","))
        return ",".join(f"{'npu' if d == 'cuda' else d}:{'hccl' if b == 'nccl' else b}" for d, b in pairs)
    return None


def _literal(node: cst.SimpleString) -> object:
    try:
        return node.evaluated_value
    except Exception:
        return None


def _string_leaves(expr: cst.BaseExpression, containers: bool) -> list[cst.SimpleString]:
    """The string literals an expression can evaluate to (through conditionals and, if allowed, containers)."""
    if isinstance(expr, cst.SimpleString):
        return [expr]
    if isinstance(expr, cst.IfExp):
        return _string_leaves(expr.body, containers) + _string_leaves(expr.orelse, containers)
    if isinstance(expr, cst.BooleanOperation):
        return _string_leaves(expr.left, containers) + _string_leaves(expr.right, containers)
    if containers and isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return [s for e in expr.elements for s in _string_leaves(e.value, False)]
    return []


def _target_name(target: cst.BaseExpression) -> str:
    """The name an assignment target or operand stands for (``x``, ``self.x``, ``cfg["x"]``), else ``""``."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute):
        return target.attr.value
    key = _subscript_key(target)
    return str(_literal(key)) if key is not None else ""


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


def _subscript_key(target: cst.BaseExpression) -> cst.SimpleString | None:
    if isinstance(target, cst.Subscript) and len(target.slice) == 1:
        index = target.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return index.value
    return None


def _int_value(expr: cst.BaseExpression) -> int | None:
    """The value of an integer literal or of arithmetic on them (``8 * 1024 * 1024``, ``1 << 23``), else None."""
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if not isinstance(expr, cst.BinaryOperation):
        return None
    left, right = _int_value(expr.left), _int_value(expr.right)
    if left is None or right is None:
        return None
    operator = expr.operator
    if isinstance(operator, cst.Multiply):
        return left * right
    if isinstance(operator, cst.Add):
        return left + right
    if isinstance(operator, cst.Subtract):
        return left - right
    if isinstance(operator, (cst.Power, cst.LeftShift)) and 0 <= right <= 64:
        return left**right if isinstance(operator, cst.Power) else left << right
    return None


def _static_env_value(expr: cst.BaseExpression) -> tuple[str, bool] | None:
    """(the text an environment value evaluates to, whether the code writes it as a str) for a string literal, an
    integer expression or ``str()`` of one; None when it is only known at run time."""
    if isinstance(expr, cst.SimpleString):
        value = _literal(expr)
        return (value, True) if isinstance(value, str) else None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "str":
        if len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star:
            number = _int_value(expr.args[0].value)
            return (str(number), True) if number is not None else None
        return None
    number = _int_value(expr)
    return (str(number), False) if number is not None else None


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


class DistributedTransformer(PortTransformer):
    """NPU200-NPU209."""

    TRIGGERS = (
        r"nccl|NCCL",
        r"DeviceMesh|init_device_mesh",
        r"device_id\b",
        # NPU210 reads the function around an index computed from the device count.
        Trigger(r"\b(?:device_count|current_device)\(", scope=innermost(ast.FunctionDef, ast.AsyncFunctionDef)),
    )
    RULES = (
        BACKEND_ARGUMENT,
        BACKEND_STRING,
        BACKEND_COMPARISON,
        IS_NCCL_AVAILABLE,
        PROCESS_GROUP_NCCL,
        DEVICE_MESH_TYPE,
        FSDP_DEVICE_ID,
        NCCL_ENV_VAR,
        NCCL_ENV_VAR_REVIEW,
        NCCL_ENV_VAR_UNSUPPORTED,
        INTEGER_DEVICE,
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # Where each backend string stands, marked top-down so leave_SimpleString knows which rule it falls under.
        self._argument_strings: set[int] = set()
        self._comparison_strings: set[int] = set()
        self._kept_strings: set[int] = set()  # "nccl" in a test that already lists "hccl"
        self._docstrings: set[int] = set()
        self._non_references: set[int] = set()  # Name nodes that are attribute, keyword or parameter names
        self._in_import = False
        # The value each variable-name string is set to (env[K] = v, setdefault(K, v), {K: v}); rewritten values.
        self._env_values: dict[int, cst.BaseExpression] = {}
        self._value_rewrites: dict[int, cst.BaseExpression] = {}
        self._unset_names: set[int] = set()  # env.pop("NCCL_X"), del env["NCCL_X"], os.unsetenv("NCCL_X")
        # per enclosing function: the names that always hold a device index, and those that may (read from the
        # function when a call first asks: most functions have no call that takes a device)
        self._index_stack: list[tuple[frozenset[str], frozenset[str]] | cst.FunctionDef] = []

    # --- marking, top-down ----------------------------------------------------------------------------------

    def visit_Expr(self, node: cst.Expr) -> None:
        self._docstrings.add(id(node.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._non_references.add(id(node.attr))

    def _not_backends(self, name: str, value: cst.BaseExpression | None) -> bool:
        """Keep the strings of ``value`` when ``name`` says they are not process-group backends."""
        if value is None or not NON_PROCESS_GROUP.search(name):
            return False
        self._kept_strings.update(id(s) for s in _string_leaves(value, containers=True))
        return True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:  # env["NCCL_X"] = value
            if (key := _subscript_key(target.target)) is not None:
                self._env_values[id(key)] = node.value
            self._not_backends(_target_name(target.target), node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._not_backends(_target_name(node.target), node.value)

    def visit_Del(self, node: cst.Del) -> None:
        target = node.target
        targets = [e.value for e in target.elements] if isinstance(target, cst.Tuple) else [target]
        for expression in targets:  # del os.environ["NCCL_X"]
            if (key := _subscript_key(expression)) is not None:
                self._unset_names.add(id(key))

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
        self._not_backends(node.name.value, node.default)

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

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import = True

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

    def _rewrite_env_name(self, original, updated, value: str) -> cst.SimpleString:
        # Case-sensitive, as the variables are: lower-case `nccl_version`, `nccl_ub` are identifiers.
        name = value
        if not NCCL_ENV_NAME.match(name):
            return updated
        if name in ENV_SAME:
            new = updated.with_changes(value=updated.value.replace(value, ENV_SAME[name]))
            return self.fix(NCCL_ENV_VAR, original, new, f"{value} -> {ENV_SAME[name]}") or updated
        if name in ENV_REVIEW:
            return self._rewrite_review(original, updated, name)
        if id(original) in self._unset_names:
            return updated  # unsetting what has no effect on the NPU: nothing to do there
        hint = ENV_NEAREST.get(name, "no Ascend setting is known to do the same")
        message = f"{name} has no HCCL equivalent and no effect on NPU; {hint}"
        # `if "NCCL_X" not in env: env["NCCL_X"] = ...` gets the note once, above the `if`.
        if todo_comment(NCCL_ENV_VAR_UNSUPPORTED, message) not in self.ctx.pending_todos(enclosing=True):
            self.todo(NCCL_ENV_VAR_UNSUPPORTED, original, message)
        return updated

    def _rewrite_review(self, original, updated, name: str) -> cst.SimpleString:
        """NPU208: rename where HCCL accepts the value set (converted: bytes -> MB, Ring -> level1:ring), else keep
        the NCCL name (harmless on NPU) with a TODO: writing a value HCCL rejects would break the launch."""
        hccl = ENV_REVIEW[name]
        value_node = self._env_values.get(id(original))
        static = _static_env_value(value_node) if value_node is not None else None
        why = "" if value_node is not None else "read or named here, its value set elsewhere"
        new_value, message = review_env_value(name, static[0] if static else None, why)
        if message is not None or new_value is None:
            # Reported as NPU209's: what stays is an NCCL setting with no effect on NPU, and the work is manual.
            self.todo(NCCL_ENV_VAR_UNSUPPORTED, original, message or f"{name}: set {hccl} by hand")
            return updated
        new = updated.with_changes(value=updated.value.replace(name, hccl))
        if static is None or new_value == static[0]:
            return self.fix(NCCL_ENV_VAR_REVIEW, original, new, f"{name} -> {hccl}") or updated
        replaced = self.fix(NCCL_ENV_VAR_REVIEW, original, new, f"{name}={static[0]} -> {hccl}={new_value}")
        if replaced is not None and value_node is not None:
            literal = cst.SimpleString(f'"{new_value}"') if static[1] else cst.Integer(new_value)
            self._value_rewrites[id(value_node)] = literal
        return replaced or updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if id(original.value) in self._value_rewrites:
            return updated.with_changes(value=self._value_rewrites[id(original.value)])
        return updated

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

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self._in_import = False
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

    # --- calls: device meshes, FSDP ----------------------------------------------------------------------------

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

"""NPU207, NPU208, NPU209: the NCCL environment variables, and their table (the HCCL name of each, what the
HCCL variable accepts, the nearest Ascend setting), which the shell rules (rules/project/shell.py) read too, so
that a launch script and the code it starts agree."""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.findings import todo_comment
from ascend_port.rules.distributed.base import DistributedRules, _literal, _subscript_key

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


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
    Stays (unsetting a variable HCCL never reads):
        import os
        os.environ.pop("NCCL_DEBUG", None)
    """,
)


# --- tables -----------------------------------------------------------------------------------------------------

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


class EnvVarRules(DistributedRules):
    """NPU207-NPU209: an NCCL variable's name in a string, renamed to its HCCL counterpart (with its value, where
    HCCL reads it differently) or kept with a TODO."""

    def visit_Del(self, node: cst.Del) -> None:
        target = node.target
        targets = [e.value for e in target.elements] if isinstance(target, cst.Tuple) else [target]
        for expression in targets:  # del os.environ["NCCL_X"]
            if (key := _subscript_key(expression)) is not None:
                self._unset_names.add(id(key))

    # --- strings: environment variables ----------------------------------------------------------------------

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

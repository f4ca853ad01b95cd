"""torch_npu.profiler under ascend-port emulate: torch_npu 2.14's Ascend profiler API with CPU behaviour.

``profile`` runs torch_npu's schedule (a ``ProfilerAction`` per step) and calls ``on_trace_ready`` where torch_npu's
action controller does (when a RECORD_AND_SAVE step ends, and at stop while recording), but records nothing: it does
not delegate to torch.profiler, because torch.profiler's profile has another contract (``key_averages()``,
``events()``: torch_npu's has neither, see NPU705, so a port that still calls them must fail here too; torch_npu's
default schedule records every step and saves at stop), and because starting kineto costs seconds and writes traces
nobody reads. Arguments are checked as torch_npu checks them (it warns and falls back to a default), so an unported
``torch.profiler.ProfilerActivity.CUDA`` warns here as it does on the device.

Source: Ascend/pytorch torch_npu/profiler/{__init__,profiler,scheduler,experimental_config,
_profiler_action_controller,profiler_interface}.py, read through the search tool.
"""

from __future__ import annotations

import enum
import json
import os
import socket
import warnings
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from torch_npu import _inventory, _report


def _warn(message: str) -> None:
    warnings.warn(f"torch_npu.profiler: {message}", stacklevel=3)


class ProfilerActivity(enum.Enum):
    CPU = 0
    NPU = 1


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class ProfilerLevel:
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"
    Level_none = "Level_none"


class AiCMetrics:
    PipeUtilization = "ACL_AICORE_PIPE_UTILIZATION"
    ArithmeticUtilization = "ACL_AICORE_ARITHMETIC_UTILIZATION"
    Memory = "ACL_AICORE_MEMORY_BANDWIDTH"
    MemoryL0 = "ACL_AICORE_L0B_AND_WIDTH"
    MemoryUB = "ACL_AICORE_MEMORY_UB"
    ResourceConflictRatio = "ACL_AICORE_RESOURCE_CONFLICT_RATIO"
    L2Cache = "ACL_AICORE_L2_CACHE"
    MemoryAccess = "ACL_AICORE_MEMORY_ACCESS"
    AiCoreNone = "ACL_AICORE_NONE"


class ExportType:
    Db = "db"
    Text = "text"


class HostSystem:
    CPU = "cpu"
    MEM = "mem"
    DISK = "disk"
    NETWORK = "network"
    OSRT = "osrt"
    NUMA = "numa"


_ACTIVITIES = frozenset(ProfilerActivity)


def supported_activities() -> set[ProfilerActivity]:
    return set(_ACTIVITIES)


def supported_profiler_level() -> set[str]:
    return {ProfilerLevel.Level0, ProfilerLevel.Level1, ProfilerLevel.Level2, ProfilerLevel.Level_none}


def supported_ai_core_metrics() -> set[str]:
    return {value for name, value in vars(AiCMetrics).items() if not name.startswith("_")}


def supported_export_type() -> set[str]:
    return {ExportType.Db, ExportType.Text}


class _ExperimentalConfig:
    """The Ascend-only options (``experimental_config=``): kept, not acted on."""

    def __init__(
        self,
        profiler_level: str = ProfilerLevel.Level0,
        aic_metrics: str = AiCMetrics.PipeUtilization,
        l2_cache: bool = False,
        msprof_tx: bool = False,
        mstx: bool = False,
        data_simplification: bool = True,
        record_op_args: bool = False,
        op_attr: bool = False,
        gc_detect_threshold: float | None = None,
        export_type: str | list = ExportType.Text,
        host_sys: list | None = None,
        mstx_domain_include: list | None = None,
        mstx_domain_exclude: list | None = None,
        sys_io: bool = False,
        sys_interconnection: bool = False,
    ) -> None:
        _report.record_call("torch_npu.profiler._ExperimentalConfig")
        self.options = {key: value for key, value in locals().items() if key != "self"}  # the arguments, as given
        self._export_type = [export_type] if isinstance(export_type, str) else list(export_type)

    @property
    def export_type(self) -> list:
        return self._export_type


_Config = _ExperimentalConfig  # for profile, where the target release may lack the public name


class schedule:
    """torch_npu's Schedule: skip ``skip_first`` steps, then cycles of ``wait``, ``warmup``, ``active`` steps
    (``repeat`` of them, 0 = unbounded); the last active step of a cycle is RECORD_AND_SAVE."""

    def __init__(
        self, wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0, skip_first_wait: int = 0
    ) -> None:
        _report.record_call("torch_npu.profiler.schedule")
        values = {"wait": wait, "warmup": warmup, "repeat": repeat, "skip_first": skip_first}
        for name, value in values.items():
            if not isinstance(value, int) or value < 0:
                _warn(f"Invalid parameter {name}, reset it to 0.")
                values[name] = 0
        if not isinstance(active, int) or active <= 0:
            _warn("Invalid parameter active, reset it to 1.")
            active = 1
        if not isinstance(skip_first_wait, int):
            _warn("Invalid parameter skip_first_wait, reset it to 0.")
            skip_first_wait = 0
        self.wait, self.warmup, self.repeat = values["wait"], values["warmup"], values["repeat"]
        self.active, self.skip_first, self.skip_first_wait = active, values["skip_first"], skip_first_wait

    def __call__(self, step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError("Invalid parameter step, which must be not less than 0.")
        if step < self.skip_first:
            return ProfilerAction.NONE
        step -= self.skip_first
        if self.skip_first_wait != 0:
            step += self.wait
        cycle = self.wait + self.warmup + self.active
        if self.repeat > 0 and step / cycle >= self.repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < self.wait:
            return ProfilerAction.NONE
        if position < self.wait + self.warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE


def _default_schedule(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD  # torch_npu: record every step, save at stop


def tensorboard_trace_handler(
    dir_name: str | None = None, worker_name: str | None = None, analyse_flag: bool = True, async_mode: bool = False
) -> Callable[[Any], None]:
    """The handler makes the run's folder, ``<dir_name>/<worker>_<time>_ascend_pt``, as torch_npu does; no data."""
    _report.record_call("torch_npu.profiler.tensorboard_trace_handler")
    if not isinstance(analyse_flag, bool):
        _warn("analyse_flag is not bool, set by default.")
    if not isinstance(async_mode, bool):
        _warn("async_mode is not bool, set by default.")
    if dir_name is not None and not (dir_name and isinstance(dir_name, str)):
        _warn("Invalid parameter dir_name, reset it to default.")
        dir_name = None

    def handler_fn(prof: Any) -> None:
        stamp = datetime.now().strftime("%Y%m%d%H%M%S%f")[:-3]
        folder = f"{worker_name or socket.gethostname()}_{os.getpid()}_{stamp}_ascend_pt"
        os.makedirs(os.path.join(dir_name or os.getcwd(), folder), exist_ok=True)

    return handler_fn


_SAVES = {
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.WARMUP),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.RECORD),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.RECORD_AND_SAVE),
    (ProfilerAction.RECORD, None),
    (ProfilerAction.RECORD_AND_SAVE, None),
}
# The schedule mistakes torch_npu warns about (its informational messages at stop are left out).
_MISTAKES = {
    (ProfilerAction.WARMUP, ProfilerAction.NONE): "Incorrect schedule: WARMUP followed by NONE",
    (ProfilerAction.RECORD, ProfilerAction.NONE): "Incorrect schedule: RECORD followed by NONE",
    (ProfilerAction.RECORD, ProfilerAction.WARMUP): "Incorrect schedule: RECORD followed by WARMUP",
    (ProfilerAction.WARMUP, None): "Incorrect schedule: Stop profiler while current state is WARMUP "
    "which will result in empty parsed data.",
}


class profile:
    def __init__(
        self,
        *,
        activities: Iterable[Any] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[..., Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: _ExperimentalConfig | None = None,
        execution_trace_observer: Any = None,
        custom_trace_id_callback: Callable[[], str] | None = None,
        use_cuda: bool | None = None,
    ) -> None:
        _report.record_call("torch_npu.profiler.profile")
        self.activities = set(activities) if activities else set(_ACTIVITIES)
        if not self.activities <= _ACTIVITIES:
            _warn("Invalid activities, only CPU and NPU are supported, reset it to default.")
            self.activities = set(_ACTIVITIES)
        flags = dict(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack)
        for name, value in {**flags, "with_flops": with_flops, "with_modules": with_modules}.items():
            if not isinstance(value, bool):
                _warn(f"Parameter {name} is of boolean type, reset it to False.")
        if experimental_config is not None and not isinstance(experimental_config, _Config):
            _warn("Parameter experimental_config is an instance of _ExperimentalConfig, reset it to default.")
        if schedule is not None and not callable(schedule):
            _warn("schedule is not Callable, set by default.")
        if on_trace_ready is not None and not callable(on_trace_ready):
            _warn("on_trace_ready is not Callable, set by default.")
            on_trace_ready = None
        if use_cuda is not None:
            _warn("This is npu environment, use_cuda is invalid")
        self.schedule = schedule if callable(schedule) else _default_schedule
        self.on_trace_ready = on_trace_ready
        self.custom_trace_id_callback = custom_trace_id_callback
        self.metadata: dict[str, Any] = {}
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.stopped = False

    def _transit(self, previous: ProfilerAction | None, current: ProfilerAction | None) -> None:
        if (previous, current) in _MISTAKES:
            _warn(_MISTAKES[previous, current])
        if (previous, current) in _SAVES and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self.stopped = False
        self._transit(ProfilerAction.NONE, self.current_action)

    def stop(self) -> None:
        self._transit(self.current_action, None)
        self.stopped = True

    def step(self) -> None:
        _report.record_call("torch_npu.profiler.profile.step")
        if self.stopped:
            _warn("Profiler is stopped, step takes no effect!")
            return
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)

    def export_chrome_trace(self, output_path: str) -> None:
        """An empty Chrome trace: the emulator records no events."""
        with open(output_path, "w", encoding="utf-8") as stream:
            json.dump({"traceEvents": [], "otherData": {"ascend-port emulate": "no events recorded"}}, stream)

    def export_stacks(self, output_path: str, metric: str = "self_cpu_time_total") -> None:
        raise _report.not_emulated("torch_npu.profiler.profile.export_stacks")

    def export_memory_timeline(self, output_path: str, device: str | None = None) -> None:
        raise _report.not_emulated("torch_npu.profiler.profile.export_memory_timeline")

    def add_metadata(self, key: str, value: str) -> None:
        if not isinstance(key, str) or not isinstance(value, str):
            _warn("The key and value of metadata must be string. Skip this metadata.")
            return
        self.metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        if not isinstance(key, str) or not isinstance(value, str):
            _warn("The key and value of metadata must be string. Skip this metadata.")
            return
        try:
            self.metadata[key] = json.loads(value)
        except ValueError:
            _warn("The metadata value must be json format string. Skip this metadata")

    def set_custom_trace_id_callback(self, callback: Callable[[], str]) -> None:
        self.custom_trace_id_callback = callback

    def get_trace_id(self) -> str:
        return ""

    @classmethod
    def enable_profiler_in_child_thread(cls, *args: Any, **kwargs: Any) -> None:
        pass

    @classmethod
    def disable_profiler_in_child_thread(cls) -> None:
        pass


_NAMES = frozenset(_inventory.inventory()["profiler"])
_PUBLIC = {"ProfilerActivity", "ProfilerAction", "ProfilerLevel", "AiCMetrics", "ExportType", "HostSystem"}
_PUBLIC |= {"supported_activities", "supported_profiler_level", "supported_ai_core_metrics", "supported_export_type"}
_PUBLIC |= {"_ExperimentalConfig", "schedule", "tensorboard_trace_handler", "profile"}
for _name in _PUBLIC - _NAMES:  # what the target release (`--torch-npu VERSION`) lacks is absent, as there
    del globals()[_name]
__getattr__ = _inventory.module_getattr("torch_npu.profiler", _NAMES)

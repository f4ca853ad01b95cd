"""The options of a port: what the command line, ``[tool.ascend-port]`` and the project's own files decide for
every file, typed and in one place.

run/config.py makes them from the settings; the engine adds what it learns of the project (its own NPU support, and
through the rules' project steps its transformers pin and its extensions' ops) and each file's device family; every
handler and rule reads them through this class. They are frozen and hashable, so that they pickle to the workers, key the
result cache (``cache_key``) and key lru caches; a field added here is part of every cache key at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Literal

OtherDevices = Literal["keep", "drop"]
OTHER_DEVICES: tuple[OtherDevices, ...] = ("keep", "drop")
# What the attention rules emit (rules/attention/helpers.py): torch_npu's npu_fusion_attention, or MindIE-SD's.
ATTENTION_BACKENDS = ("torch_npu", "mindiesd")
DEFAULT_ATTENTION_BACKEND = ATTENTION_BACKENDS[0]

# Extension module -> op -> the C++ files that bind it (rules/cuda_sources.extension_ops), as a hashable value.
ExtensionOps = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
# Launch flags a script may drop (rules/project/launch_flags.py): (option, the plain option that replaces it or "",
# what it calls: "xformers" or "fp8", the file that defines it).
LaunchFlags = tuple[tuple[str, str, str, str], ...]


@dataclass(frozen=True)
class PortOptions:
    # keep: a project that also runs on other devices (python/device_model.supports_npu) gets its CUDA code
    # reported, not rewritten; drop: rewritten in place all the same (the port is an NPU-only fork). Other vendors'
    # code is never edited.
    other_devices: OtherDevices = "keep"
    # The project supports the NPU already (found by the engine when other_devices is "keep"): every rule reports
    # what it would change and changes nothing that CUDA code needs.
    npu_aware: bool = False
    # The covered torch-npu release the rules may emit for (core/npu_api.py); None: the newest the tool knows.
    target: str | None = None
    # The target was named by the user (--torch-npu, pyproject.toml), not inferred from the torch pin: NPU602 pins
    # it as given.
    target_explicit: bool = False
    attention_backend: str = DEFAULT_ATTENTION_BACKEND
    # What the project's other files say (the project steps of rules/project/requirements.py and
    # rules/cuda_sources.py): the lowest transformers release its requirements allow (NPU803), the lowest torch
    # release (NPU122: torch.accelerator's names only where every torch the project allows has them), its CUDA
    # extensions' ops (NPU502).
    transformers_pin: str | None = None
    torch_floor: str | None = None
    extension_ops: ExtensionOps = ()
    # The extras of the project's pyproject.toml for CUDA hosts (`gpu`, `cu121`, one bound to a CUDA wheel index)
    # when the port gives it an `npu` extra: its install commands name that one instead (rules/project/installs.py).
    cuda_extras: tuple[str, ...] = ()
    # The project's own top-level packages among the CUDA-only libraries of NPU504's table (`liger_kernel` in
    # Liger-Kernel itself): imports of them are the project's own modules, not a CUDA-only dependency.
    own_packages: tuple[str, ...] = ()
    # The names a module of the project binds to `torch.cuda.is_available()` at its top level and another module
    # imports (rules/island_routes.py): both sides of such a name are ported (python/device_model.py).
    shared_cuda_predicates: tuple[str, ...] = ()
    # In a project that supports the NPU already: its device helpers (`pkg.utils.get_device`, qualified), functions
    # with no required argument whose every return is a device among CUDA's and the NPU's (NPU122 routes through them).
    device_helpers: tuple[str, ...] = ()
    # The project's launch flags that call a CUDA-only library (`--xformers`, `--fp8`) and that its own code shows
    # a launch script may drop, or replace by a plain one (`--sdpa`): NPU624 does so in the scripts it edits.
    launch_flags: LaunchFlags = ()
    # The project's Python captures CUDA or NPU graphs (rules/perf/run_settings.py): torch_npu refuses graph capture
    # under TASK_QUEUE_ENABLE=2, so NPU902 leaves that setting to torch_npu's default in its scripts.
    graph_capture: bool = False
    # The project's Python names a loss scaler (rules/optimizers.py): torch_npu's GradScaler steps torch's fused
    # optimizers with an argument they do not take, so NPU709 leaves every optimizer of such a project.
    loss_scaling: bool = False
    # The module's per-device family (python/device_model.module_family: cuda_accelerator.py beside
    # npu_accelerator.py): an option of one file, part of that file's cache key rather than the run's.
    family: str = ""

    def __post_init__(self) -> None:
        if self.other_devices not in OTHER_DEVICES:
            raise ValueError(f"other_devices: {self.other_devices!r} is not one of {', '.join(OTHER_DEVICES)}")

    def cache_key(self) -> str:
        """What separates the results of two runs (the file's family aside: see ``family``)."""
        values = asdict(self)
        del values["family"]
        return json.dumps(values, sort_keys=True, separators=(",", ":"))

    @cached_property
    def extension_op_map(self) -> dict[str, dict[str, str]]:
        """``extension_ops`` as a mapping: module -> op -> its C++ files."""
        return {module: dict(ops) for module, ops in self.extension_ops}


def extension_ops(ops: Mapping[str, Mapping[str, str]]) -> ExtensionOps:
    """The hashable, sorted form of module -> op -> files."""
    return tuple((module, tuple(sorted(ops[module].items()))) for module in sorted(ops))


DEFAULT = PortOptions()

"""Issue 15 on real multi-device code: DeepSpeed 0.16.5 (its own NPU_Accelerator beside the CUDA, CPU, HPU, MPS,
XPU, MLU and SDAA ones), diffusers 0.42.1 and accelerate 1.15.0 (`is_npu_available()` beside CUDA and five other
vendors). The port must leave their NPU and other-vendor paths, and the CUDA branches beside an NPU branch, working,
and still port their CUDA-only code.

Each expectation below is one checked fact about the port's output: a file, what must hold there, and how it is
checked. `unchanged`: the bytes are identical. `same_code`: the named definitions or assignments have the same AST
(comments aside, so a TODO may be added). `kept`: each snippet of the original is still there, as often. `ported`:
an old snippet is gone and its port is there. The sdists are downloaded once into .cache/corpora
(benchmarks/corpora.py), never built or installed.
"""

from __future__ import annotations

import ast
import difflib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from ascend_port.core.findings import FileResult
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.python import device_model
from ascend_port.run.engine import RunConfig, run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import corpora

PROJECTS = {name: (name, version, sdist) for name, version, sdist in corpora.MULTI_DEVICE}


@dataclass
class Port:
    """One project ported in memory (nothing is written): its tree and the result of every file, by path."""

    tree: Path
    results: dict[str, FileResult]

    def original(self, path: str) -> str:
        return (self.tree / path).read_text(encoding="utf-8")

    def ported(self, path: str) -> str:
        result = self.results[path]
        return self.original(path) if result.new_bytes is None else result.new_bytes.decode("utf-8")


@cache
def ported_project(project: str, drop: bool = False) -> Port:
    """The default port (`--other-devices keep`: these projects support the NPU on their own, so their CUDA code
    is reported, not rewritten), or with ``drop`` the port of an NPU-only fork (`--other-devices drop`)."""
    name, version, sdist = PROJECTS[project]
    try:
        root = corpora.fetch(name, version, sdist=sdist)
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot download {name} {version}: {error}")
    tree = (root / f"{name}-{version}" if sdist else root).resolve()
    # No result cache: this runs before the per-test cache of conftest.py is set up, and must not touch ~/.cache.
    options = PortOptions(other_devices="drop" if drop else "keep")
    result = run([tree], RunConfig(jobs=2, cache=False, options=options))
    results = {}
    for file in result.files:
        path = Path(file.path) if os.path.isabs(file.path) else Path.cwd() / file.path
        results[path.resolve().relative_to(tree).as_posix()] = file
    return Port(tree, results)


# A check gets the original text, the ported text and the path; it answers None when the fact holds, else why not.
Check = Callable[[str, str, str], "str | None"]


@dataclass(frozen=True)
class Expect:
    project: str
    key: str  # the test id
    paths: tuple[str, ...]
    what: str
    check: Check
    drop: bool = False  # checked on the port of an NPU-only fork (--other-devices drop)

    @property
    def id(self) -> str:
        return f"{self.project}:{self.key}"


def _excerpt(old: str, new: str, limit: int = 40, removing: str = "") -> str:
    """The diff of ``old`` to ``new``, cut at ``limit`` lines; only the hunks that remove ``removing`` if given."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), "original", "ported", n=1, lineterm=""))
    if removing:
        hunks: list[list[str]] = []
        for line in lines[2:]:
            if line.startswith("@@"):
                hunks.append([])
            hunks[-1].append(line)
        lines = [line for h in hunks if any(x.startswith("-") and removing in x for x in h) for line in h]
    return "\n".join(lines[:limit] + (["..."] if len(lines) > limit else []))


def unchanged() -> Check:
    def check(old: str, new: str, path: str) -> str | None:
        return None if old == new else f"the file changed:\n{_excerpt(old, new)}"

    return check


def _definitions(text: str) -> dict[str, list[ast.AST]]:
    """Functions and classes by qualified name (``Class.method``), and assignments by their qualified target names;
    the statements inside if/try/with/for blocks count as their scope's own."""
    found: dict[str, list[ast.AST]] = {}

    def visit(statements: list[ast.stmt], prefix: str) -> None:
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.setdefault(prefix + statement.name, []).append(statement)
                visit(statement.body, f"{prefix}{statement.name}.")
                continue
            if isinstance(statement, ast.Assign | ast.AnnAssign):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        found.setdefault(prefix + target.id, []).append(statement)
            for block in ("body", "orelse", "finalbody"):
                inner = getattr(statement, block, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    visit(inner, prefix)
            for handler in getattr(statement, "handlers", []):
                visit(handler.body, prefix)

    visit(ast.parse(text).body, "")
    return found


def same_code(*names: str) -> Check:
    """The named definitions or assignments have the same AST as in the original: comments (a TODO) aside."""

    def check(old: str, new: str, path: str) -> str | None:
        before, after = _definitions(old), _definitions(new)
        problems = []
        for name in names:
            assert name in before, f"test bug: {name} is not defined in the original {path}"
            dumps = [ast.dump(node) for node in before[name]], [ast.dump(node) for node in after.get(name, [])]
            if dumps[0] != dumps[1]:
                segments = [
                    "\n".join(ast.get_source_segment(text, n) or "" for n in found.get(name, []))
                    for text, found in ((old, before), (new, after))
                ]
                problems.append(f"{name} changed:\n{_excerpt(*segments)}")
        return "\n".join(problems) or None

    return check


def same_methods(name: str) -> Check:
    """Every method called ``name`` has the same AST as in the original (comments aside)."""

    def check(old: str, new: str, path: str) -> str | None:
        methods = [qualname for qualname in _definitions(old) if qualname.endswith(f".{name}")]
        assert methods, f"test bug: no method {name} in the original {path}"
        return same_code(*methods)(old, new, path)

    return check


def _device_lists(text: str, device: str) -> int:
    """How many list, tuple and set displays of strings hold ``device``."""
    return sum(
        isinstance(node, ast.List | ast.Tuple | ast.Set)
        and len(node.elts) > 1
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
        and any(e.value == device for e in node.elts)  # type: ignore[attr-defined]
        for node in ast.walk(ast.parse(text))
    )


def device_lists_keep(device: str) -> Check:
    """Every list of device names holding ``device`` still holds it (another name, "npu", may be added)."""

    def check(old: str, new: str, path: str) -> str | None:
        before, after = _device_lists(old, device), _device_lists(new, device)
        assert before, f"test bug: no list of device names with {device!r} in the original {path}"
        if after < before:
            return (
                f"{before} lists of device names hold {device!r} in the original, {after} ported\n{_excerpt(old, new)}"
            )
        return None

    return check


def kept(*snippets: str) -> Check:
    """Each snippet of the original is still there, at least as often."""

    def check(old: str, new: str, path: str) -> str | None:
        problems = []
        for snippet in snippets:
            assert snippet in old, f"test bug: {snippet!r} is not in the original {path}"
            if new.count(snippet) < old.count(snippet):
                excerpt = _excerpt(old, new, removing=snippet.strip().splitlines()[0])
                problems.append(
                    f"{snippet!r}: {old.count(snippet)} in the original, {new.count(snippet)} ported\n{excerpt}"
                )
        return "\n".join(problems) or None

    return check


def ported(old_snippet: str, new_snippet: str) -> Check:
    """CUDA-only code is still ported: the old snippet is gone and the new one is there."""

    def check(old: str, new: str, path: str) -> str | None:
        assert old_snippet in old, f"test bug: {old_snippet!r} is not in the original {path}"
        if old_snippet in new or new_snippet not in new:
            return f"not ported: {old_snippet!r} -> {new_snippet!r} expected\n{_excerpt(old, new)}"
        return None

    return check


def occurs_once(snippet: str) -> Check:
    def check(old: str, new: str, path: str) -> str | None:
        count = new.count(snippet)
        return None if count == 1 else f"{snippet!r} occurs {count} times\n{_excerpt(old, new)}"

    return check


def _top_level_torch_npu_imports(text: str) -> int:
    return sum(
        isinstance(s, ast.Import) and any(a.name.split(".")[0] == "torch_npu" for a in s.names)
        for s in ast.parse(text).body
    )


def no_new_torch_npu_import() -> Check:
    """No unconditional `import torch_npu` is added: not to another backend's module, nor to a module that already
    imports it where it is available."""

    def check(old: str, new: str, path: str) -> str | None:
        before, after = _top_level_torch_npu_imports(old), _top_level_torch_npu_imports(new)
        return None if after <= before else f"`import torch_npu` added at the top level\n{_excerpt(old, new, 12)}"

    return check


def _dict_entries(text: str, name: str) -> dict[str, str]:
    (assignment,) = _definitions(text)[name]
    assert isinstance(assignment, ast.Assign) and isinstance(assignment.value, ast.Dict)
    return {ast.literal_eval(k): ast.dump(v) for k, v in zip(assignment.value.keys, assignment.value.values) if k}


def table_keeps_entries(*names: str, may_add: frozenset[str] = frozenset({"npu"})) -> Check:
    """A device-keyed dict keeps every entry (key and value); only an "npu" entry may be added beside them."""

    def check(old: str, new: str, path: str) -> str | None:
        problems = []
        for name in names:
            before, after = _dict_entries(old, name), _dict_entries(new, name)
            changed = sorted(k for k in before if after.get(k) != before[k])
            added = sorted(set(after) - set(before) - may_add)
            if changed or added:
                problems.append(f"{name}: entries changed {changed}, unexpected keys {added}")
        return "; ".join(problems) + f"\n{_excerpt(old, new)}" if problems else None

    return check


def still_reported(rule_id: str) -> Check:
    """A site left unchanged with its TODO is still reported when the ported file is scanned again."""

    def check(old: str, new: str, path: str) -> str | None:
        outcome = handler_for(Path(path)).port(new.encode("utf-8"), Selection(), PortOptions())
        fired = {f.rule.id for f in outcome.findings}
        return None if rule_id in fired else f"a re-scan of the ported file reports {sorted(fired)}, not {rule_id}"

    return check


def all_of(*checks: Check) -> Check:
    def check(old: str, new: str, path: str) -> str | None:
        problems = [p for c in checks if (p := c(old, new, path))]
        return "\n".join(problems) or None

    return check


def _both(*paths: str) -> tuple[str, ...]:
    """DeepSpeed's sdist holds accelerator/ and op_builder/ twice: at the top and inside the deepspeed package."""
    copies = {"accelerator/": "deepspeed/accelerator/", "op_builder/": "deepspeed/ops/op_builder/"}
    return tuple(p2 for p in paths for p2 in (p, *(p.replace(a, b, 1) for a, b in copies.items() if p.startswith(a))))


OTHER_BACKENDS = ("cpu", "hpu", "mps", "xpu", "mlu", "sdaa")
OP_BUILDERS_WITH_IS_COMPATIBLE = (
    "async_io",
    "evoformer_attn",
    "fp_quantizer",
    "gds",
    "inference_core_ops",
    "inference_cutlass_builder",
    "ragged_ops",
    "ragged_utils",
    "sparse_attn",
    "spatial_inference",
    "transformer_inference",
)
DEVICE_NAME_IS_CUDA = "get_accelerator().device_name() == 'cuda'"

# What the port must do (issue 15). HOLDS held before the device model (python/device_model.py) and must keep
# holding; ACCEPTANCE is what the device model made hold (each failed before it).
HOLDS = [
    Expect(
        "deepspeed",
        "npu-backend-unchanged",
        _both("accelerator/npu_accelerator.py"),
        "DeepSpeed's own NPU backend is never edited",
        unchanged(),
    ),
    Expect(
        "deepspeed",
        "hccl-backend-unchanged",
        ("deepspeed/runtime/comm/hccl.py",),
        "the 1-bit optimizers' HcclBackend is never edited",
        unchanged(),
    ),
    Expect(
        "deepspeed",
        "unet-cuda-graph-ported",
        ("deepspeed/model_implementations/diffusers/unet.py",),
        "CUDA-only code is still ported: the CUDA-graph warm-up stream of DSUNet",
        ported("cuda_stream = torch.cuda.Stream()", "cuda_stream = torch.npu.Stream()"),
        drop=True,
    ),
    Expect(
        "deepspeed",
        "fp16matmul-autotune-ported",
        ("deepspeed/ops/transformer/inference/op_binding/linear.py",),
        "CUDA-only code is still ported: the Triton autotune tensors of Fp16Matmul",
        ported("dtype=dtype, device='cuda')", "dtype=dtype, device='npu')"),
        drop=True,
    ),
    Expect(
        "deepspeed",
        "data-analyzer-device-ported",
        ("deepspeed/runtime/data_pipeline/data_sampling/data_analyzer.py",),
        "CUDA-only code is still ported: the device of the DistributedDataAnalyzer test",
        ported("device=f\"cuda:{int(os.environ['LOCAL_RANK'])}\"", "device=f\"npu:{int(os.environ['LOCAL_RANK'])}\""),
        drop=True,
    ),
    Expect(
        "diffusers",
        "get-device-unchanged",
        ("diffusers/utils/torch_utils.py",),
        "device detection through torch.accelerator is left alone: get_device(), TorchDeviceBackend and the sets of"
        " devices without fp64/int64 (which already name npu)",
        same_code("get_device", "TorchDeviceBackend", "_FP64_UNSUPPORTED_DEVICES", "_INT64_UNSUPPORTED_DEVICES"),
    ),
    Expect(
        "diffusers",
        "wan-animate-empty-cache-ported",
        ("diffusers/modular_pipelines/wan_animate_2/denoise.py",),
        "CUDA-only code is still ported: the cache release after each Wan-Animate segment",
        ported("torch.cuda.empty_cache()", "torch.npu.empty_cache()"),
        drop=True,
    ),
    Expect(
        "diffusers",
        "kandinsky-default-device-ported",
        (
            "diffusers/pipelines/kandinsky5/pipeline_kandinsky.py",
            "diffusers/pipelines/kandinsky5/pipeline_kandinsky_i2v.py",
        ),
        'CUDA-only code is still ported: fast_sta_nabla\'s device="cuda" default',
        ported('wW: int = 3, device="cuda")', 'wW: int = 3, device="npu")'),
        drop=True,
    ),
    Expect(
        "diffusers",
        "audioldm2-offload-device-ported",
        ("diffusers/pipelines/audioldm2/pipeline_audioldm2.py",),
        'CUDA-only code is still ported: AudioLDM2\'s enable_model_cpu_offload device="cuda" default',
        ported('device: torch.device | str = "cuda"', 'device: torch.device | str = "npu"'),
        drop=True,
    ),
    Expect(
        "accelerate",
        "megatron-current-device-ported",
        ("accelerate/utils/megatron_lm.py",),
        "CUDA-only code is still ported: Megatron-LM's batches go to the current device",
        ported(
            "data = send_to_device(data, torch.cuda.current_device())",
            "data = send_to_device(data, torch.npu.current_device())",
        ),
        drop=True,
    ),
]

ACCEPTANCE = [
    # DeepSpeed: the accelerator abstraction already runs on NPU.
    Expect(
        "deepspeed",
        "other-backends-unchanged",
        _both(*(f"accelerator/{b}_accelerator.py" for b in OTHER_BACKENDS)),
        "another vendor's backend (CPU, HPU, MPS, XPU, MLU, SDAA) is never edited",
        unchanged(),
    ),
    Expect(
        "deepspeed",
        "no-torch-npu-import-in-backends",
        _both(*(f"accelerator/{b}_accelerator.py" for b in (*OTHER_BACKENDS, "cuda"))),
        "no `import torch_npu` lands in another backend's module (CUDA's included)",
        no_new_torch_npu_import(),
    ),
    Expect(
        "deepspeed",
        "cuda-accelerator-unchanged",
        _both("accelerator/cuda_accelerator.py"),
        "CUDA_Accelerator stays CUDA: an NPU_Accelerator exists",
        unchanged(),
    ),
    Expect(
        "deepspeed",
        "real-accelerator-unchanged",
        _both("accelerator/real_accelerator.py"),
        "get_accelerator()'s dispatch already handles npu: its 'cuda' detection and branch stay",
        unchanged(),
    ),
    Expect(
        "deepspeed",
        "nccl-backend-constant-kept",
        ("deepspeed/comm/constants.py",),
        "NCCL_BACKEND stays 'nccl' beside HCCL_BACKEND = 'hccl'",
        unchanged(),
    ),
    Expect(
        "deepspeed",
        "nccl-backend-module-unchanged",
        ("deepspeed/runtime/comm/nccl.py",),
        "the 1-bit optimizers' NcclBackend module is never edited: HcclBackend (hccl.py) exists",
        unchanged(),
    ),
    Expect(
        "deepspeed",
        "onebit-comm-backends-kept",
        tuple(f"deepspeed/runtime/fp16/onebit/{name}.py" for name in ("adam", "lamb", "zoadam")),
        "the 1-bit optimizers keep choosing NcclBackend for 'nccl' and HcclBackend for 'hccl' (no second 'hccl'"
        " branch shadowing HcclBackend)",
        all_of(
            kept("if self.comm_backend_name == 'nccl':", "from deepspeed.runtime.comm.nccl import NcclBackend"),
            occurs_once("self.comm_backend_name == 'hccl'"),
        ),
    ),
    Expect(
        "deepspeed",
        "op-builders-is-compatible",
        _both(*(f"op_builder/{name}.py" for name in OP_BUILDERS_WITH_IS_COMPATIBLE)),
        "op builders' is_compatible keeps its CUDA meaning (NPU has its own builders in op_builder/npu)",
        same_methods("is_compatible"),
    ),
    Expect(
        "deepspeed",
        "op-builder-base-gates",
        _both("op_builder/builder.py"),
        "the CUDA op builder's gates stay CUDA: OpBuilder.load, jit_load and is_compatible, and"
        " CUDAOpBuilder.compute_capability_args (which unpacks get_device_capability())",
        same_code(
            "OpBuilder.is_compatible",
            "OpBuilder.load",
            "OpBuilder.jit_load",
            "CUDAOpBuilder.compute_capability_args",
            "CUDAOpBuilder.is_compatible",
        ),
    ),
    Expect(
        "deepspeed",
        "device-name-is-cuda-kept",
        (
            "setup.py",
            "deepspeed/env_report.py",
            "deepspeed/inference/engine.py",
            "deepspeed/launcher/multinode_runner.py",
            "deepspeed/runtime/swap_tensor/aio_config.py",
        ),
        "tests of the accelerator's name stay: get_accelerator().device_name() == 'cuda' gates CUDA-only features"
        " (nvidia-ml-py, nvcc report, CUDA graphs, MVAPICH CUDA, GDS)",
        kept(DEVICE_NAME_IS_CUDA),
    ),
    Expect(
        "deepspeed",
        "blocked-flash-capability-guard",
        ("deepspeed/inference/v2/kernels/ragged_ops/blocked_flash/blocked_flash.py",),
        "guards stay guards: `cc_major, cc_minor = torch.cuda.get_device_capability(...)` is not rewritten (None on"
        " NPU: a TypeError), and a re-scan still reports the site",
        all_of(same_code("get_q_block_size", "get_kv_block_size"), still_reported("NPU108")),
    ),
    Expect(
        "deepspeed",
        "wf6af16-ampere-guard",
        ("deepspeed/inference/v2/modules/heuristics.py",),
        "guards stay guards: the WF6AF16 Ampere check torch.cuda.get_device_properties(0).major != 8 stays",
        kept("torch.cuda.is_available():  #ignore-cuda", "elif torch.cuda.get_device_properties(0).major != 8:"),
    ),
    # diffusers
    Expect(
        "diffusers",
        "backend-tables-keep-cuda",
        ("diffusers/utils/testing_utils.py",),
        'the device-keyed tables keep their "cuda" entries (torch.cuda.*) and the other vendors\' entries; an "npu"'
        " entry may be added beside them",
        table_keeps_entries(
            "BACKEND_SUPPORTS_TRAINING",
            "BACKEND_EMPTY_CACHE",
            "BACKEND_DEVICE_COUNT",
            "BACKEND_MANUAL_SEED",
            "BACKEND_RESET_PEAK_MEMORY_STATS",
            "BACKEND_RESET_MAX_MEMORY_ALLOCATED",
            "BACKEND_MAX_MEMORY_ALLOCATED",
            "BACKEND_SYNCHRONIZE",
        ),
    ),
    Expect(
        "diffusers",
        "test-device-detection-keeps-cuda",
        ("diffusers/utils/testing_utils.py",),
        'the test device detection keeps `torch.cuda.is_available()` -> "cuda" and the xpu/neuron branches (an npu'
        " branch may be added)",
        kept(
            'torch.cuda.is_available():\n            torch_device = "cuda"',
            'torch.xpu.is_available():\n            torch_device = "xpu"',
        ),
    ),
    Expect(
        "diffusers",
        "fp16-fp64-probes-and-device-properties",
        ("diffusers/utils/testing_utils.py",),
        'the fp16/fp64 probes keep raising for a broken "cuda" device; get_device_properties() keeps its CUDA/ROCm'
        " capability unpack",
        same_code("_is_torch_fp16_available", "_is_torch_fp64_available", "get_device_properties"),
    ),
    Expect(
        "diffusers",
        "multi-accelerator-keeps-cuda",
        ("diffusers/utils/testing_utils.py",),
        "require_torch_multi_accelerator keeps counting CUDA and XPU devices (NPU may be added)",
        kept("torch.cuda.device_count() > 1 or torch.xpu.device_count() > 1"),
    ),
    Expect(
        "diffusers",
        "cuda-capability-helper-unchanged",
        ("diffusers/utils/torch_utils.py",),
        "get_torch_cuda_device_capability() keeps answering for CUDA (its capability is indexed)",
        same_code("get_torch_cuda_device_capability"),
    ),
    Expect(
        "diffusers",
        "set-seed-unchanged",
        ("diffusers/training_utils.py",),
        "set_seed already seeds NPU under is_torch_npu_available(): its CUDA branch stays",
        same_code("set_seed"),
    ),
    Expect(
        "diffusers",
        "no-second-torch-npu-import",
        (
            "diffusers/training_utils.py",
            "diffusers/pipelines/pipeline_utils.py",
        ),
        "a module that imports torch_npu where it is available gets no second, unconditional `import torch_npu`",
        no_new_torch_npu_import(),
    ),
    Expect(
        "diffusers",
        "offload-checks-keep-cuda",
        ("diffusers/pipelines/pipeline_utils.py", "diffusers/modular_pipelines/modular_pipeline.py"),
        'the offloading checks of .to() keep "cuda" in `device_type in ["cuda", "xpu"]` ("npu" may be added)',
        device_lists_keep("cuda"),
    ),
    Expect(
        "diffusers",
        "gguf-cuda-kernels-gate",
        ("diffusers/quantizers/gguf/utils.py",),
        "can_use_cuda_kernels stays a CUDA gate: torch.cuda.get_device_capability()[0] is not rewritten (None[0] at"
        " import on NPU)",
        same_code("can_use_cuda_kernels"),
    ),
    Expect(
        "diffusers",
        "bfl-fp8-nvfp4-gates",
        ("diffusers/quantizers/bfl/utils.py",),
        "the FP8 (_scaled_mm, SM >= 8.9) and NVFP4 (flashinfer, SM >= 10) fast paths stay CUDA gates",
        same_code("BFLFP8RLinear.forward", "BFLNVFP4Linear.forward"),
    ),
    Expect(
        "diffusers",
        "nunchaku-cuda-check",
        ("diffusers/quantizers/nunchaku/nunchaku_quantizer.py",),
        "Nunchaku's environment check stays CUDA (it requires an NVIDIA GPU and indexes the capability)",
        same_code("NunchakuLiteQuantizer.validate_environment"),
    ),
    Expect(
        "diffusers",
        "attention-cuda-kernel-checks",
        ("diffusers/models/attention_dispatch.py",),
        "the checks of CUDA-only attention kernels stay CUDA (device type, SM) and FA3's custom op stays registered"
        ' for "cuda"',
        all_of(
            same_code("_check_device_cuda", "_check_device_cuda_atleast_smXY"),
            kept('@_custom_op("_diffusers_flash_attn_3::_flash_attn_forward", mutates_args=(), device_types="cuda")'),
        ),
    ),
    Expect(
        "diffusers",
        "run-device-map-keeps-cuda",
        ("diffusers/commands/run.py",),
        "`diffusers run` keeps pinning a CUDA device to cuda:$LOCAL_RANK (porting only the test and set_device would"
        ' return "cuda:N" on NPU)',
        same_code("_resolve_device_map"),
    ),
    # accelerate
    Expect(
        "accelerate",
        "state-device-backend-choice",
        ("accelerate/state.py",),
        "the device and backend choice already handles NPU: default_device, _prepare_backend and set_device keep"
        ' their CUDA branches ("cuda", "nccl")',
        same_code("PartialState.default_device", "PartialState._prepare_backend", "PartialState.set_device"),
    ),
    Expect(
        "accelerate",
        "state-nccl-fsdp-and-p2p-check",
        ("accelerate/state.py",),
        'the FSDP hybrid backend for "nccl" and the RTX 4000 P2P/IB check of a "cuda" device stay',
        kept(
            'self.backend == "nccl"',
            'self.backend = "cuda:nccl,cpu:gloo"',
            'if self.device.type == "cuda" and not check_cuda_p2p_ib_support():',
        ),
    ),
    Expect(
        "accelerate",
        "no-second-torch-npu-import",
        ("accelerate/state.py", "accelerate/utils/modeling.py"),
        "a module that imports torch_npu where it is available gets no second, unconditional `import torch_npu`",
        no_new_torch_npu_import(),
    ),
    Expect(
        "accelerate",
        "is-cuda-available-unchanged",
        ("accelerate/utils/imports.py",),
        "is_cuda_available() does not start answering for NPU; is_rocm_available() and is_bf16_available() keep"
        " their CUDA calls",
        same_code("is_cuda_available", "is_rocm_available", "is_bf16_available"),
    ),
    Expect(
        "accelerate",
        "cuda-fp8-capability-gate",
        ("accelerate/utils/environment.py",),
        "check_cuda_fp8_capability() stays a CUDA FP8 gate (it compares the capability)",
        same_code("check_cuda_fp8_capability"),
    ),
    Expect(
        "accelerate",
        "rng-already-handles-npu",
        ("accelerate/utils/random.py",),
        "set_seed and synchronize_rng_state already handle NPU: their CUDA branches stay",
        same_code("set_seed", "synchronize_rng_state"),
    ),
    Expect(
        "accelerate",
        "clear-device-cache-unchanged",
        ("accelerate/utils/memory.py",),
        "clear_device_cache already handles NPU: its is_cuda_available() branch stays",
        same_code("clear_device_cache"),
    ),
    Expect(
        "accelerate",
        "cuda-visible-devices-kept",
        ("accelerate/utils/launch.py",),
        "the launchers set ASCEND_RT_VISIBLE_DEVICES on NPU already: CUDA_VISIBLE_DEVICES stays in the CUDA branch",
        kept('current_env["CUDA_VISIBLE_DEVICES"] = '),
    ),
    Expect(
        "accelerate",
        "modeling-cuda-branches",
        ("accelerate/utils/modeling.py",),
        "get_max_memory and get_grad_scaler already handle NPU: their CUDA branches stay; the device type expected"
        ' by default stays "cuda"; the bitsandbytes device lists keep "cuda" ("npu" may be added)',
        all_of(
            same_code("get_max_memory", "get_grad_scaler"),
            kept('expected_device_type = "cuda"'),
            device_lists_keep("cuda"),
        ),
    ),
    Expect(
        "accelerate",
        "profiler-activities-kept",
        ("accelerate/utils/dataclasses.py",),
        "the profiler's activity map keeps torch.profiler's CUDA, HPU, XPU and MTIA activities (NPU may be added)",
        kept(
            '"cuda": torch.profiler.ProfilerActivity.CUDA',
            'profiler_activity_map["hpu"] = torch.profiler.ProfilerActivity.HPU',
            'profiler_activity_map["xpu"] = torch.profiler.ProfilerActivity.XPU',
            'profiler_activity_map["mtia"] = torch.profiler.ProfilerActivity.MTIA',
        ),
    ),
    Expect(
        "accelerate",
        "get-backend-unchanged",
        ("accelerate/test_utils/testing.py",),
        "get_backend() already handles NPU: its XLA and CUDA branches stay",
        same_code("get_backend"),
    ),
    Expect(
        "accelerate",
        "basic-config-unchanged",
        ("accelerate/commands/config/default.py",),
        "write_basic_config already handles NPU: its CUDA branch stays",
        same_code("write_basic_config"),
    ),
    Expect(
        "accelerate",
        "tracemalloc-unchanged",
        ("accelerate/test_utils/scripts/external_deps/test_peak_memory_usage.py",),
        "TorchTracemalloc already measures NPU: its CUDA branches stay",
        same_code("TorchTracemalloc"),
    ),
    Expect(
        "accelerate",
        "checkpoint-cuda-rng-kept",
        ("accelerate/checkpointing.py",),
        "the CUDA RNG state is still saved and restored (NPU is not handled here: an NPU entry goes beside it)",
        kept(
            'states["torch_cuda_manual_seed"] = torch.cuda.get_rng_state_all()',
            'torch.cuda.set_rng_state_all(states["torch_cuda_manual_seed"])',
        ),
    ),
    Expect(
        "accelerate",
        "zero3-test-nccl-kept",
        ("accelerate/test_utils/scripts/external_deps/test_zero3_integration.py",),
        'the process group of a CUDA device stays "nccl" beside xccl and hccl (an npu branch may be added)',
        kept('        backend = "nccl"'),
    ),
]


def _failures(expect: Expect) -> Iterator[str]:
    port = ported_project(expect.project, expect.drop)
    for path in expect.paths:
        result = port.results.get(path)
        assert result is not None, f"test bug: {path} is not a file of {expect.project}"
        if result.error:
            yield f"{path}: the port failed: {result.error}"
            continue
        problem = expect.check(port.original(path), port.ported(path), path)
        if problem:
            yield f"{path}: {problem}"


@pytest.mark.slow
@pytest.mark.parametrize("expect", HOLDS, ids=[e.id for e in HOLDS])
def test_multidevice_port_keeps(expect: Expect) -> None:
    failures = list(_failures(expect))
    assert not failures, f"{expect.what}\n" + "\n".join(failures)


@pytest.mark.slow
@pytest.mark.parametrize("expect", ACCEPTANCE, ids=[e.id for e in ACCEPTANCE])
def test_multidevice_port_acceptance(expect: Expect) -> None:
    failures = list(_failures(expect))
    assert not failures, f"{expect.what}\n" + "\n".join(failures)


@pytest.mark.slow
@pytest.mark.parametrize("project", list(PROJECTS))
def test_multidevice_port_reports_instead_of_rewriting(project: str) -> None:
    """These projects support the NPU on their own: by default no Python file changes but for NPU120's additions
    (an NPU branch beside CUDA is no loss) and the device-neutral rewrites, which CUDA runs as before (NPU122's
    islands, NPU501/NPU508's libdevice reroutes); no project file changes, and the CUDA code is reported."""
    port = ported_project(project)
    assert device_model.supports_npu(str(f) for f in port.tree.rglob("*.py"))
    neutral = {"NPU122", "NPU501", "NPU508"}
    for path, result in port.results.items():
        assert result.error is None, (path, result.error)
        applied = {f.rule.id for f in result.findings if f.applied}
        assert applied <= {"NPU120", "NPU100", *neutral}, (path, applied)
        if result.new_bytes is not None:
            assert applied & {"NPU120", *neutral}, path
        if applied <= neutral:
            assert result.new_bytes is None or b"import torch_npu" not in result.new_bytes, path
    reported = [f for r in port.results.values() for f in r.findings if not f.applied]
    assert len(reported) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("project", list(PROJECTS))
def test_multidevice_port_is_clean_and_idempotent(project: str) -> None:
    port = ported_project(project, drop=True)
    errors = {path: r.error for path, r in port.results.items() if r.error}
    assert not errors, errors
    changed = {path: r for path, r in port.results.items() if r.changed}
    assert len(changed) >= 5  # each has CUDA code to port (most of it is multi-device and stays)
    # The second run sees what the first saw: an NPU-only fork, each module's family.
    for path, result in changed.items():
        assert result.new_bytes is not None
        if path.endswith(".py"):
            ast.parse(result.new_bytes, filename=path)
        options = PortOptions(other_devices="drop", family=device_model.module_family(str(port.tree / path)))
        again = handler_for(Path(path)).port(result.new_bytes, Selection(), options)
        assert again.new_text is None or again.source.encode(again.new_text) == result.new_bytes, path

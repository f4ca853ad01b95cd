"""Run hazards of an emulated run: what the program's ops would cost on a real NPU of the target torch_npu release.

The native device records, per operator that reaches the npu dispatch key (after torch's CompositeImplicit
decompositions; see native.cpp's record_op), its calls, its distinct input-shape signatures and its calls on
float64 / complex npu tensors. Judged here against the target release, three report sections:

- ``cpu_fallbacks``: aten ops the release has no NPU kernel for (ascend_port/data/torch_npu_kernels.json, read from
  each wheel by scripts/extract_npu_kernels.py): real torch_npu warns "The operator 'aten::X' is not currently
  supported on the NPU backend and will fall back to run on the CPU" and copies the tensors to the host and back;
- ``dtype_substitutions``: float64 and complex tensors on the npu (float64 runs slowly or not at all, complex mostly
  not at all);
- ``dynamic_shapes``: ops seen with more than SHAPE_THRESHOLD input shapes that kept coming (more than LATE_THRESHOLD
  of them first seen in the second half both of the op's calls and of the run's): CANN builds a kernel per new
  shape, and a model's fixed shapes, however many, are all seen in its first step (an optimizer's state in its first
  step), while variable sequence lengths make new ones every step.

Each entry carries the advice that removes it. Host side only: no torch import."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

KERNELS_JSON = Path(__file__).resolve().parent.parent / "data" / "torch_npu_kernels.json"
SHAPE_THRESHOLD = 8  # more distinct input shapes than this on one op is reported...
LATE_THRESHOLD = 2  # ...when more than this many were new in the second half of its calls (or SHAPES_KEPT were seen)
SHAPES_KEPT = 64  # native.cpp's kMaxShapes: a count at this bound means "at least"

# The sections, in the order the summary shows them (after runner.SECTIONS).
SECTIONS = {
    "cpu_fallbacks": "ops with no NPU kernel in torch_npu {version} (they fall back to the CPU)",
    "dtype_substitutions": "float64 / complex tensors on the npu",
    "dynamic_shapes": "ops seen with many input shapes (CANN compiles a kernel per new shape)",
}
ON_HOST = "runs on the host: move it off the hot path or replace it"
FLOAT64_ADVICE = (
    "the NPU computes float64 slowly or not at all (torch_npu substitutes float32 where it can): use float32 "
    "(.float(), dtype=torch.float32), or keep the float64 work on the CPU"
)
COMPLEX_ADVICE = (
    "complex tensors are mostly unsupported on the NPU: use real tensors (complex RoPE -> the real cos/sin form: "
    "`ascend-port explain complex-rope`)"
)
# The allocations native.cpp counts: the tensor was made on the npu or moved to it (to("npu"), .npu()).
ALLOCATIONS = {
    "aten::empty.memory_format": "created on the npu",
    "aten::empty_strided": "created on / moved to the npu",
}


# c10's dtype names (native.cpp) as torch spells them.
DTYPE_NAMES = {
    "Double": "float64",
    "ComplexHalf": "complex32",
    "ComplexFloat": "complex64",
    "ComplexDouble": "complex128",
}


@cache
def _kernel_data() -> dict[str, Any]:
    return json.loads(KERNELS_JSON.read_text("utf-8"))


@cache
def kernels_by_release() -> dict[str, frozenset[str]]:
    """Each covered release (oldest first) and the aten ops (``name.overload``) it has an NPU kernel for."""
    names: set[str] = set()
    out: dict[str, frozenset[str]] = {}
    for release in _kernel_data()["releases"]:
        names = (names | set(release["added"])) - set(release["removed"])
        out[release["version"]] = frozenset(names)
    return out


def sources() -> dict[str, dict[str, str]]:
    """Where each release's list comes from: its wheel's file name and sha256."""
    return {r["version"]: {"wheel": r["wheel"], "sha256": r["sha256"]} for r in _kernel_data()["releases"]}


def has_kernel(op: str, kernels: frozenset[str]) -> bool:
    """Does an aten op (``add_.Tensor``, no namespace) reach an NPU kernel? Listed itself, or (structured ops: torch
    makes the functional and in-place forms call the ``out=`` kernel a backend registers) its ``out=`` form is, or
    (an in-place op) its functional form is. Lenient on purpose: a fallback reported is one the wheel's list shows."""
    if op in kernels:
        return True
    name, _, overload = op.partition(".")
    base = name.rstrip("_") if not name.startswith("__") else name
    forms = [f"{base}.out", f"{base}.{overload}", f"{base}.{overload}_out"] if overload else [base, f"{base}.out"]
    return any(form in kernels for form in forms)


def _fallback_advice(op: str, target: str) -> str:
    versions = list(kernels_by_release())
    later = versions[versions.index(target) + 1 :] if target in versions else []
    first = next((v for v in later if has_kernel(op, kernels_by_release()[v])), None)
    if first is not None:
        return f"torch_npu {first} and newer have an NPU kernel for it: target one of them; until then it {ON_HOST}"
    return ON_HOST


def merge(stats: list[dict[str, dict]]) -> dict[str, dict]:
    """The op statistics of several processes: calls and dtype calls add up; the shapes (and the late ones) are the
    most one process saw (each process compiles its own kernels)."""
    merged: dict[str, dict] = {}
    for process in stats:
        for op, entry in process.items():
            into = merged.setdefault(op, {"calls": 0, "shapes": 0, "late_shapes": 0, "dtypes": {}})
            into["calls"] += entry.get("calls", 0)
            into["shapes"] = max(into["shapes"], entry.get("shapes", 0))
            into["late_shapes"] = max(into["late_shapes"], entry.get("late_shapes", 0))
            for dtype, count in entry.get("dtypes", {}).items():
                into["dtypes"][dtype] = into["dtypes"].get(dtype, 0) + count
    return merged


def _shapes_advice(compile_mode: bool) -> str:
    advice = "pad or bucket variable sizes (sequence lengths) to a few fixed lengths"
    if compile_mode:
        advice += "; torch_npu.npu.set_compile_mode(jit_compile=False) uses prebuilt kernels instead of compiling"
    return advice


def judge(stats: dict[str, dict], target: str, npu_names: frozenset[str] | set[str]) -> dict[str, dict]:
    """The three hazard sections for ``stats`` (merged op statistics) on torch_npu ``target`` (a covered release);
    ``npu_names``: the target's torch_npu.npu names (is set_compile_mode there?)."""
    kernels = kernels_by_release().get(target)
    fallbacks: dict[str, dict] = {}
    dtypes: dict[str, dict] = {}
    shapes: dict[str, dict] = {}
    for op, entry in sorted(stats.items()):
        namespace, _, name = op.partition("::")
        allocation = op in ALLOCATIONS
        if kernels is not None and namespace == "aten" and not allocation and not has_kernel(name, kernels):
            fallbacks[op] = {"calls": entry["calls"], "advice": _fallback_advice(name, target)}
        for dtype, count in entry.get("dtypes", {}).items():
            key = f"{op} {DTYPE_NAMES.get(dtype, dtype)}" + (f" ({ALLOCATIONS[op]})" if allocation else "")
            advice = COMPLEX_ADVICE if "Complex" in dtype else FLOAT64_ADVICE
            dtypes[key] = {"calls": count, "advice": advice}
        count = entry.get("shapes", 0)
        kept_coming = entry.get("late_shapes", 0) > LATE_THRESHOLD or count >= SHAPES_KEPT
        if not allocation and count > SHAPE_THRESHOLD and kept_coming:
            shown = f"{count}+" if count >= SHAPES_KEPT else str(count)
            shapes[op] = {
                "shapes": count,
                "message": f"CANN compiles a kernel per new shape: {shown} shapes",
                "advice": _shapes_advice("set_compile_mode" in npu_names),
            }
    return {"cpu_fallbacks": fallbacks, "dtype_substitutions": dtypes, "dynamic_shapes": shapes}


def summary_lines(report: dict) -> list[str]:
    """The hazard sections of the stderr summary (none when the run had no hazard)."""
    lines: list[str] = []
    for section, title in SECTIONS.items():
        entries = report.get(section) or {}
        if not entries:
            continue
        lines.append(f"  {title.format(version=report.get('torch_npu'))}:")
        for name, entry in entries.items():
            what = entry.get("message") or f"{entry['calls']} call(s)"
            lines.append(f"    {name}: {what}: {entry['advice']}")
    return lines

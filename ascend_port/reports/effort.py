"""The assessment's feasibility verdict and effort estimate, from counts the report model has already made.

The hours are planning defaults, not measurements: a reviewer's minutes per automatic rewrite, an engineer's hours
per TODO, per kernel and per dependency that must change. The report prints this basis next to the total so a team
can redo the sum with its own numbers.

Feasibility:

- ``ready``: nothing but automatic rewrites (or nothing at all): ``ascend-port apply`` and a test run.
- ``hard``: CUDA C++ kernels (each becomes an Ascend C operator), a dependency with no Ascend counterpart, or more
  than ``HARD_HOURS`` of manual work.
- ``needs adaptation``: everything in between (TODOs, Triton kernels, dependencies to replace).

A project that supports the NPU already (python/device_model.supports_npu) keeps its CUDA kernels and its CUDA-only
dependencies for CUDA, beside its own NPU path: they are counted, not as work. What is left is the CUDA code outside
its device dispatch that the port did not make device-neutral (``island``: NPU122 took the calls it could) and the
TODOs; a fused NPU op its code could use (``fused-op``: plain PyTorch runs there as it is) is an optimisation.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_port.core.words import counted

READY, ADAPT, HARD = "ready", "needs adaptation", "hard"

# (item, hours each, why)
HOURS: dict[str, tuple[float, str]] = {
    "rewrite-high": (0.05, "review of a high-confidence automatic rewrite (3 min)"),
    "rewrite-medium": (0.1, "review of a medium-confidence automatic rewrite (6 min)"),
    "todo": (1.0, "one TODO or report-only finding ported by hand"),
    "triton-kernel": (8.0, "one Triton kernel brought up and tuned on Triton-Ascend"),
    "cuda-kernel": (24.0, "one __global__ CUDA kernel rewritten as an Ascend C operator"),
    "dependency-replace": (2.0, "code using a dependency moved to its Ascend counterpart"),
    "dependency-unsupported": (16.0, "code using a CUDA-only dependency redesigned"),
    # a project that supports the NPU already
    "island": (0.25, "a CUDA call outside the dispatch of a project that runs on the NPU, routed by hand (15 min)"),
    "kernel-kept": (0.0, "a CUDA or Triton kernel of a project that runs on the NPU: its CUDA path, kept"),
    "dependency-kept": (0.0, "a CUDA-only dependency of a project that runs on the NPU: its CUDA path, kept"),
    "fused-op": (0.0, "a fused NPU op a project that runs on the NPU could use: an optimisation, it runs as it is"),
}
HARD_HOURS = 80.0  # two engineer-weeks of manual work


@dataclass(frozen=True)
class EffortLine:
    item: str
    count: int
    hours_each: float
    why: str

    @property
    def hours(self) -> float:
        return round(self.count * self.hours_each, 2)


def effort(counts: dict[str, int]) -> list[EffortLine]:
    """One line per item of ``HOURS`` with a non-zero count, in ``HOURS`` order."""
    return [EffortLine(item, counts[item], hours, why) for item, (hours, why) in HOURS.items() if counts.get(item)]


def feasibility(counts: dict[str, int], lines: list[EffortLine]) -> tuple[str, list[str]]:
    """The verdict and the reasons for it, from the same counts as the estimate."""
    manual = sum(line.hours for line in lines if not line.item.startswith("rewrite-"))
    reasons: list[str] = []
    if counts.get("cuda-kernel"):
        reasons.append(
            counted(counts["cuda-kernel"], "CUDA C++ kernel", "CUDA C++ kernels") + " to rewrite as Ascend C operators"
        )
    if counts.get("dependency-unsupported"):
        reasons.append(
            counted(counts["dependency-unsupported"], "imported dependency", "imported dependencies")
            + " with no Ascend counterpart"
        )
    if manual > HARD_HOURS:
        reasons.append(f"{manual:g} h of manual work (more than {HARD_HOURS:g} h)")
    if reasons:
        return HARD, reasons
    for item, singular, plural, rest in (
        ("todo", "TODO", "TODOs", "to port by hand"),
        ("island", "CUDA call", "CUDA calls", "outside the project's device dispatch to route by hand"),
        ("triton-kernel", "Triton kernel", "Triton kernels", "to review on Triton-Ascend"),
        ("dependency-replace", "imported dependency", "imported dependencies", "to replace"),
    ):
        if counts.get(item):
            reasons.append(f"{counted(counts[item], singular, plural)} {rest}")
    if reasons:
        return ADAPT, reasons
    rewrites = counts.get("rewrite-high", 0) + counts.get("rewrite-medium", 0)
    kept = sum(counts.get(item, 0) for item in ("kernel-kept", "dependency-kept", "fused-op"))
    if kept and not rewrites:
        return READY, ["the project runs on the NPU already: what is left serves CUDA alone, or is an optimisation"]
    if not rewrites:
        return READY, ["nothing to port"]
    return READY, [counted(rewrites, "automatic rewrite", "automatic rewrites") + ", no manual work found"]

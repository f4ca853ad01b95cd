"""The golden kernel pairs of the Triton rewrites (golden/NPU508-NPU513) and how to launch them.

Plain data, importable without torch or Triton: tests/gpu/test_triton_equivalence.py launches each pair on a CUDA GPU
and tests/test_triton_ascend.py compiles it with Triton-Ascend (through tests/triton_ascend_worker.py, which runs in
Triton-Ascend's own virtualenv and imports this file by path).

A parameter is (name, kind, value): ``in`` a float32 input of that shape (filled with values that include NaN,
+-inf and -0.0), ``out`` a float32 output of that shape (filled with NaN first, so an unwritten lane shows), ``int``
a runtime integer, ``constexpr`` a compile-time constant, ``meta`` a constant an autotune config sets (given to
Triton-Ascend's compiler, never passed at launch). A run overrides values by name (``None`` for a pointer
passes None).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[2] / "golden"

Param = tuple[str, str, object]
Run = dict[str, object]


@dataclass(frozen=True)
class Pair:
    rule: str
    case: str  # golden/<rule>/<case>.in.py and .out.py
    kernel: str
    params: tuple[Param, ...]
    runs: tuple[Run, ...] = ({},)  # value runs on the GPU (each must give the same bits, or close for `tolerance`)
    ttir_run: Run | None = field(default_factory=dict)  # the run whose TTIR must be identical (None: not compared)
    tolerance: bool = False  # a medium rule: values within rtol/atol, NaN where NaN (not bitwise)
    # Triton-Ascend 3.2.0: (run, the original compiles?) -- the port must always compile.
    ascend: tuple[tuple[Run, bool], ...] = (({}, False),)
    gpu_original_fails: tuple[Run, ...] = ()  # runs where the original fails on GPU Triton too (the port must not)

    @property
    def original(self) -> Path:
        return GOLDEN / self.rule / f"{self.case}.in.py"

    @property
    def ported(self) -> Path:
        return GOLDEN / self.rule / f"{self.case}.out.py"


VEC = (("X", "in", (16,)), ("Y", "out", (16,)))
N16 = ("N", "constexpr", 16)
MM = tuple((name, "in", (16, 16)) for name in "AB")

PAIRS: tuple[Pair, ...] = (
    Pair("NPU508", "chain_cuda", "round_tanh_kernel", (*VEC, N16)),
    Pair("NPU508", "chain_generic", "rsqrt_kernel", (*VEC, N16)),
    Pair(
        "NPU509",
        "int_arg",
        "strided_copy_kernel",
        (("X", "in", (64,)), ("Y", "out", (16,)), ("stride", "int", 2), N16),
        runs=({"stride": 2}, {"stride": 3}),
        # An argument equal to 1 is specialised to a constexpr, which has no `.to`.
        ascend=(({"stride": 1}, False), ({"stride": 2}, True)),
        gpu_original_fails=({"stride": 1},),
    ),
    Pair(
        "NPU510",
        "dot_tf32",
        "mm_tf32_kernel",
        (*MM, ("C", "out", (16, 16)), ("D", "out", (16, 16)), N16),
    ),
    Pair(
        "NPU510",
        "kept",
        "mm_kept_kernel",
        (*MM, *((name, "out", (16, 16)) for name in "CDE"), N16, ("PRECISION", "constexpr", "ieee")),
        ascend=(({}, True),),  # allow_tf32=False and "ieee" are valid on Ascend: nothing to port in the kernel
    ),
    Pair(
        "NPU511",
        "dot_tf32x3",
        "mm_tf32x3_kernel",
        (*MM, ("C", "out", (16, 16)), N16),
        ttir_run=None,
        tolerance=True,
    ),
    Pair(
        "NPU512",
        "chains",
        "any_all_kernel",
        (*VEC, ("a", "int", 1), ("b", "int", 2), ("c", "int", -1), ("d", "int", 3), N16),
        # every sign of a, b, c, d: each branch taken and not
        runs=tuple(
            {"a": a, "b": b, "c": c, "d": d} for a in (-1, 2) for b in (-1, 2) for c in (-1, 2) for d in (-1, 2)
        ),
        ttir_run={"a": 2, "b": 2, "c": -1, "d": 3},
        ascend=(({"a": 2, "b": 2, "c": -1, "d": 3}, False),),
    ),
    Pair(
        "NPU513",
        "split_and",
        "initial_state_kernel",
        (("H", "out", (16,)), ("H0", "in", (16,)), ("n", "int", 2), ("USE_H0", "constexpr", True), N16),
        runs=({"n": 2}, {"n": 0}, {"USE_H0": False, "n": 2}, {"USE_H0": False, "H0": None, "n": 2}),
        ttir_run={"USE_H0": False, "H0": None, "n": 2},
        # 3.2.0 lowers the dead branch too: a None pointer there fails.
        ascend=(({"USE_H0": False, "H0": None}, False), ({"USE_H0": True}, True)),
    ),
    Pair(
        "NPU513",
        "split_or",
        "bias_kernel",
        (*VEC, ("B", "in", (16,)), ("n", "int", 2), ("HAS_B", "constexpr", True), N16),
        runs=({"n": 2}, {"n": 0}, {"HAS_B": False, "n": 2}, {"HAS_B": False, "B": None, "n": 2}),
        ttir_run={"HAS_B": False, "B": None, "n": 2},
        ascend=(({"HAS_B": False, "B": None}, False), ({"HAS_B": True}, True)),
    ),
    Pair(
        "NPU514",
        "clamp",
        "clamp_kernel",
        (*VEC, ("Z", "out", (16,)), ("LO", "in", (16,)), N16),
        ttir_run=None,  # (clamp against minimum/maximum: other ops, the same bits)
        ascend=(({}, True),),  # 3.2.0 compiles both: the difference is NaN's result on the NPU
    ),
    Pair(
        "NPU515",
        "warps_only",
        "scale_kernel",
        (*VEC, N16, ("BLOCK", "meta", 16)),
        ttir_run=None,
        ascend=(({}, True),),  # num_warps/num_stages are ignored there: the port only saves compiling and tuning
    ),
    Pair("NPU515", "warps_only", "shift_kernel", (*VEC, N16), ttir_run=None, ascend=(({}, True),)),
)


def values(pair: Pair, run: Run) -> dict[str, tuple[str, object]]:
    """name -> (kind, value) for one run."""
    return {name: (kind, run.get(name, value)) for name, kind, value in pair.params}

"""Triton's names as the kernels rules read them: its decorators, the forks projects import in its place, CUDA's
libdevice modules and the functions Triton-Ascend's libdevice also has. Every layer of KernelTransformer reads them,
and so do the rules of rules/triton_kernels.py."""

from __future__ import annotations

TRITON_DECORATORS = {
    "triton.jit",
    "triton.autotune",
    "triton.heuristics",
    "triton.runtime.jit",
    "triton.runtime.autotune",
    "triton.runtime.heuristics",
    "triton.runtime.jit.jit",
    "triton.runtime.autotuner.autotune",
    "triton.runtime.autotuner.heuristics",
}
# The functions of CUDA's libdevice that Triton-Ascend's libdevice also has, on the 3.2.0 wheel and on main
# (triton-ascend.md, section 1.2). Anything else has to be ported by hand.
LIBDEVICE_ON_ASCEND = frozenset(
    """
    abs acos acosh asin asinh atan atan2 atanh ceil copysign cos cosh cyl_bessel_i0 div_rn div_rz erf erfinv exp exp2
    expm1 floor fma fmod hypot ilogb isinf isnan ldexp lgamma log log10 log1p log2 nearbyint nextafter pow round
    rsqrt signbit sin sinh sqrt sqrt_rn tan tanh trunc
""".split()
)
CUDA_LIBDEVICE_MODULES = ("triton.language.extra.cuda.libdevice", "triton.language.extra.libdevice")
ASCEND_LIBDEVICE_PACKAGES = ("triton.language.extra.cann", "triton.language.extra.ascend")


# Forks of Triton that projects import in its place (`import triton_pre_mlir as triton`, MPT's and LLM Foundry's
# pre-MLIR Triton for their flash attention): their kernels are Triton kernels.
TRITON_FORKS = ("triton_pre_mlir",)


def as_triton(qualified: str | None) -> str | None:
    """``triton_pre_mlir.jit`` -> ``triton.jit``: a Triton fork's name as Triton's."""
    for fork in TRITON_FORKS:
        if qualified is not None and (qualified == fork or qualified.startswith(fork + ".")):
            return "triton" + qualified[len(fork) :]
    return qualified


TL = "triton.language"

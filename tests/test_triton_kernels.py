"""NPU508-NPU515 (rules/triton_kernels.py) beyond their golden cases: opt-in selection and edge cases."""

from __future__ import annotations

from pathlib import Path

from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.rules.triton_kernels import AUTOTUNE_WARPS, CLAMP, DOT_TF32

KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def k(X, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(X + i, tl.clamp(tl.load(X + i), 0.0, 1.0))
"""


def port(text: str, selection: Selection) -> tuple[str, set[str]]:
    handler = handler_for(Path("k.py"))
    assert handler is not None
    result = handler.port(text.encode(), selection, PortOptions())
    return result.new_text or text, {f.rule.id for f in result.findings}


def test_opt_in_rules_run_only_when_named() -> None:
    assert CLAMP.opt_in and AUTOTUNE_WARPS.opt_in and not DOT_TF32.opt_in
    assert not Selection().enabled(CLAMP)
    assert not Selection(select=("NPU5",)).enabled(CLAMP)  # a prefix is not a choice of this rule
    assert Selection(select=("NPU514",)).enabled(CLAMP)
    assert not Selection(select=("NPU514",), ignore=("NPU514",)).enabled(CLAMP)
    assert "tl.clamp" in port(KERNEL, Selection())[0]
    text, rules = port(KERNEL, Selection(select=("ALL", "NPU514")))
    assert "tl.minimum(tl.maximum(tl.load(X + i), 0.0), 1.0)" in text and "NPU514" in rules


def test_libdevice_alias_without_imports_above() -> None:
    """A kernel module whose only import of Triton is inside the kernel's own module: the alias goes above it."""
    text = "import triton\n\n\n@triton.jit\ndef k(X):\n    triton.language.extra.libdevice.exp(X)\n"
    ported, rules = port(text, Selection(select=("NPU508",)))
    assert rules == {"NPU508"}
    assert ported.index("as _ap_libdevice") < ported.index("@triton.jit") and "_ap_libdevice.exp(X)" in ported
    assert port(ported, Selection(select=("NPU508",)))[0] == ported  # idempotent


def test_nothing_outside_kernels() -> None:
    text = "import triton.language as tl\n\n\ndef f(a, b, c, s):\n    return (a or b or c), s.to(tl.int64)\n"
    assert port(text, Selection())[1] == set()


def test_libdevice_is_rerouted_in_a_project_that_supports_the_npu() -> None:
    """In a project that runs on the NPU already (its CUDA code is only reported), the libdevice reroutes are made
    all the same: their last fallback is the original import, so CUDA runs what it ran (fla-core's
    `import triton.language.extra.libdevice as tldevice`). Nothing else is rewritten, and no torch_npu is imported
    for them (the project's CUDA machines have none)."""
    text = (
        "import torch\nimport triton\nimport triton.language as tl\n"
        "from triton.language.extra.cuda import libdevice\n\n\n"
        "@triton.jit\ndef k(X, Y):\n    x = tl.load(X)\n"
        "    tl.store(Y, tl.extra.cuda.libdevice.tanh(x) + libdevice.exp(x) + tl.extra.cuda.libdevice.fast_expf(x))\n\n\n"
        "def run(x):\n    with torch.cuda.stream(torch.cuda.Stream()):\n        return x + 1\n"
    )
    handler = handler_for(Path("k.py"))
    assert handler is not None
    result = handler.port(text.encode(), Selection(), PortOptions(npu_aware=True))
    ported = result.new_text
    assert ported is not None and "import torch_npu" not in ported
    assert "from triton.language.extra.cann import libdevice\n" in ported
    assert "_ap_libdevice.tanh(x)" in ported and "tl.extra.cuda.libdevice.fast_expf(x)" in ported  # (not on Ascend)
    assert "torch.cuda.stream(torch.cuda.Stream())" in ported and "TODO(ascend-port)" not in ported  # reported
    applied = {(f.rule.id, f.applied) for f in result.findings if not f.todo}
    reported = {rule for rule, done in applied if not done}
    assert {rule for rule, done in applied if done} == {"NPU501", "NPU508"} and reported, applied
    again = handler.port(ported.encode(), Selection(), PortOptions(npu_aware=True))
    assert again.new_text is None or again.new_text == ported

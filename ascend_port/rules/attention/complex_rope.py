"""NPU427: rotary position embedding written with complex numbers (Meta Llama's `apply_rotary_emb`:
`torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2)) * freqs_cis`, back with `torch.view_as_real`) gets
a TODO: complex tensors are slow or unsupported on the NPU, and the real-number form the fused op computes
(npu_rotary_mul's interleave mode) needs shapes the code does not show.

Recognised by meaning, not by name: a function that views the pairs of a tensor's last axis as complex numbers
(`view_as_complex` of a `reshape`/`view` to `(..., -1, 2)`) and views a result as real again.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.calls import code_of
from ascend_port.python.names import ImportIndex
from ascend_port.python.scopes import FUNCTIONS, enclosing

if TYPE_CHECKING:
    from collections.abc import Callable

COMPLEX_ROPE = rule(
    "NPU427",
    "complex-rope",
    Confidence.LOW,
    "RoPE written with complex numbers (`view_as_complex(x.reshape(..., -1, 2)) * freqs_cis`): TODO.",
    """
    Multiplying the pairs of the last axis, viewed as complex numbers, by `freqs_cis = cos + i sin` rotates each
    pair `(a, b)` to `(a cos - b sin, a sin + b cos)`: exactly npu_rotary_mul's interleave mode, `r1 * x + r2 *
    (-b, a)` pairwise, with `r1 = freqs_cis.real.repeat_interleave(2, -1)` and `r2 =
    freqs_cis.imag.repeat_interleave(2, -1)`. The rewrite is not made: the op takes 4-D tensors only and, in
    interleave mode, tables broadcast as 11SD (BNSD) or 1S1D (BSND), where Meta Llama's `reshape_for_broadcast`
    gives (1, S, 1, D/2) but Llama 4's `freqs_cis[:, :, None, :]` and DeepSeek-V2's `freqs_cis.unsqueeze(1)`
    keep a batch axis; and the original computes in float32 (`x.float()`) where the op computes in x's dtype.
    So the function gets a TODO that names the problem (view_as_complex is slow or unsupported on the NPU) and
    the real-number form; where the target release's npu_rotary_mul has no `rotary_mode` (2.2.0) the TODO
    gives the rotation in plain torch instead. The code is left as it is.

    Before:
        import torch


        def apply_rotary_emb(xq, freqs_cis):
            xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
            return torch.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq)
    After:
        import torch


        def apply_rotary_emb(xq, freqs_cis):
            # TODO(ascend-port): NPU427 [low] RoPE in complex numbers: torch.view_as_complex and view_as_real are ...
            xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
            return torch.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq)
    """,
)

VIEW_AS_COMPLEX = "torch.view_as_complex"
VIEW_AS_REAL = "torch.view_as_real"


def complex_rope_function(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The scope of a `view_as_complex(...)`: the innermost function around it, if it also views a result as real."""
    fn = enclosing(path, *FUNCTIONS)
    if fn is None:
        return None
    real = any(isinstance(n, (ast.Attribute, ast.Name)) and "view_as_real" in ast.unparse(n) for n in ast.walk(fn))
    return fn if real else None


def pairs_of_last_axis(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """x of `x.reshape(*x.shape[:-1], -1, 2)` / `.view(...)` / `x.unflatten(-1, (-1, 2))` (x maybe followed by
    `.float()` / `.to(...)` / `.contiguous()`), the pairs of x's last axis; None for anything else."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return None
    method, args = node.func.attr.value, node.args
    if any(arg.keyword is not None for arg in args):
        return None
    x = node.func.value
    while isinstance(x, cst.Call) and isinstance(x.func, cst.Attribute) and x.func.attr.value in CASTS:
        x = x.func.value
    code = [code_of(arg.value).strip().replace(" ", "") for arg in args]
    if method == "unflatten" and len(args) == 2 and not any(arg.star for arg in args):
        return x if code == ["-1", "(-1,2)"] else None
    if method not in ("reshape", "view") or len(args) != 3 or args[0].star != "*" or code[1:] != ["-1", "2"]:
        return None
    return x if code[0] == f"{code_of(x).strip()}.shape[:-1]" else None


CASTS = ("float", "to", "contiguous")


class ComplexRopeMixin:
    """NPU427 in NormTransformer: a TODO on the first `view_as_complex` of a tensor's pairs in a function that also
    views a result as real."""

    ctx: Any
    if TYPE_CHECKING:  # (PortTransformer's, after this class in NormTransformer's bases)
        todo: Callable[..., None]

    def note_complex_rope(self, original: cst.Call) -> None:
        """The TODO, if ``original`` (a call being left: NormTransformer.leave_Call) is such a view_as_complex."""
        if self.ctx.imports.resolve(original.func) != VIEW_AS_COMPLEX or len(original.args) != 1:
            return
        x = pairs_of_last_axis(original.args[0].value)
        if x is None or original.args[0].keyword is not None:
            return
        functions = getattr(self, "_functions", None) or [None]  # (RotaryMixin's: the functions being visited)
        if functions[-1] is None or "view_as_real" not in code_of(functions[-1]):
            return  # (complex numbers never viewed as real again: not a rotation; complex_rope_function's scope)
        flagged = self.__dict__.setdefault("_complex_rope_functions", set())
        if id(functions[-1]) in flagged:
            return  # one TODO for the function (Llama rotates xq and xk the same way)
        flagged.add(id(functions[-1]))
        name = code_of(x).strip()
        self.todo(COMPLEX_ROPE, original, _message(name, npu_api.target_version(self.ctx.options)))


def _message(x: str, version: str) -> str:
    problem = "RoPE in complex numbers: torch.view_as_complex and view_as_real are slow or unsupported on the NPU"
    tables = (
        "cos and sin the real and imaginary parts of the complex factor repeated pairwise (freqs_cis.real and "
        ".imag, .repeat_interleave(2, -1))"
    )
    schema = npu_api.op_schema("npu_rotary_mul", version) or ""
    if "rotary_mode" not in schema:
        return (
            f"{problem}; in real numbers the rotation of {x} (and of each tensor viewed so here) is {x} * cos + "
            f"torch.stack((-{x}[..., 1::2], {x}[..., ::2]), -1).flatten(-2) * sin with {tables} (torch_npu "
            f"{version}'s npu_rotary_mul has no interleave mode)"
        )
    return (
        f"{problem}; in real numbers the rotation of {x} (and of each tensor viewed so here) is "
        f'torch_npu.npu_rotary_mul({x}, cos, sin, rotary_mode="interleave") with {tables}; not rewritten: the op '
        "takes a 4-D x (head_dim even, below 896) and tables broadcast as 11SD (BNSD) or 1S1D (BSND), shapes not "
        "known here, and the original computes in float32"
    )

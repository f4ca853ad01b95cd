"""NPU420, NPU421, NPU424: RMSNorm modules -> torch_npu.npu_rms_norm (Gemma's on `1 + weight`), recognised by what their
forward computes (not by class name), and apex's fused norm modules -> torch.nn.

A forward is evaluated symbolically (norm_match.py): it must compute x * rsqrt(mean(x^2, -1, keepdim) + eps) times
the module's 1-D weight parameter (or times `1 + weight`, Gemma's form), with only float32 upcasts and casts back to
the input or weight dtype around it. Anything else in the body (a residual add, a second output, a different
reduction) means it is not an RMSNorm we can replace, and it is left alone.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

import libcst as cst

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence, rule
from ascend_port.python.calls import NO_SPACE, bind, code_of, finish_args, keyword_arg
from ascend_port.python.definitions import insert_definitions
from ascend_port.python.names import ImportIndex
from ascend_port.python.scopes import FUNCTIONS, Trigger, enclosing
from ascend_port.python.transformer import PortContext, PortTransformer
from ascend_port.rules.attention.act_swiglu import ActSwigluMixin, act_swiglu_function
from ascend_port.rules.attention.complex_rope import COMPLEX_ROPE, ComplexRopeMixin, complex_rope_function
from ascend_port.rules.attention.fused_ops import ROTARY_MUL, TorchNpuName, npu_test
from ascend_port.rules.attention.glu import GEGLU, SWIGLU
from ascend_port.rules.attention.helper_names import PRIVATE_TORCH
from ascend_port.rules.attention.masked_softmax import (
    MASKED_SOFTMAX,
    MASKED_SOFTMAX_NOTE,
    MaskedSoftmaxMixin,
    insert_fits_test,
)
from ascend_port.rules.attention.norm_match import RmsNormMatch, match_rms_norm

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

RMS_NORM = rule(
    "NPU420",
    "rms-norm",
    HIGH,
    "RMSNorm module forward (HF Llama/Qwen/Mistral, Meta Llama, T5 shapes) -> `torch_npu.npu_rms_norm(...)[0]`.",
    """
    Recognised by what `forward` computes, not by the class name: `x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`
    times a 1-D weight parameter of the module (`nn.Parameter(torch.ones(dim))`), with float32 upcasts and casts
    back to the input (or weight) dtype around it, also through a `_norm` method (Meta Llama) and T5's cast to a
    half-precision weight dtype. The body becomes one call of the fused kernel with the module's own weight and
    epsilon attributes. The weight must be provably 1-D: `torch.ones(normalized_shape)` (or a size annotated other
    than `int`) may be a 2-D shape, over which the op would normalise, and is left alone. The op computes in float32
    and returns the input's dtype, and takes only the (x, weight) dtype pairs (fp16|bf16|fp32, fp32) and (d, d), so
    the call keeps the original's result dtype: a module that casts back to the input's dtype gets a float32 weight
    (every pair supported, no rounding), one that returns float32 on purpose (`x.float()` ... `w.float() * x`)
    float32 inputs, T5's (the weight's dtype) float32 inputs and a cast to the weight's dtype. HF's `weight *
    x.to(input_dtype)` returns the dtype the two promote to (float32 for a bf16 q/k norm input with a float32
    weight under autocast): the op gets a float32 weight and its result is cast to `torch.promote_types(x.dtype,
    weight.dtype)`, a no-op where they share one (a model cast with `.to(dtype)`). In a module that does not import
    `torch` that form gets a TODO instead. A weight that may be None (diffusers' `elementwise_affine=False`: the
    forward scales in an `if self.weight is not None:` branch, with T5's cast to a half weight) is fused for a
    module that has one, `if ... and self.weight is not None:`; a module without keeps the original computation.

    In a project that keeps its other devices (the default) the op runs on NPU tensors only, `if x.device.type
    == "npu"`, and the original stays for the others' (the project's own CPU tests), with `import torch_npu`
    guarded; `--other-devices drop` writes the op alone (under the weight's test where it is optional).

    Before:
        import torch
        from torch import nn


        class LlamaRMSNorm(nn.Module):
            def __init__(self, hidden_size, eps=1e-6):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(hidden_size))
                self.variance_epsilon = eps

            def forward(self, hidden_states):
                input_dtype = hidden_states.dtype
                hidden_states = hidden_states.to(torch.float32)
                variance = hidden_states.pow(2).mean(-1, keepdim=True)
                hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
                return self.weight * hidden_states.to(input_dtype)
    After:
        import torch
        try:
            import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
        except ImportError:
            pass
        from torch import nn


        class LlamaRMSNorm(nn.Module):
            def __init__(self, hidden_size, eps=1e-6):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(hidden_size))
                self.variance_epsilon = eps

            def forward(self, hidden_states):
                if hidden_states.device.type == "npu":
                    dtype = torch.promote_types(hidden_states.dtype, self.weight.dtype)
                    return torch_npu.npu_rms_norm(hidden_states, self.weight.float(), epsilon=self.variance_epsilon)[0].to(dtype)
                input_dtype = hidden_states.dtype
                hidden_states = hidden_states.to(torch.float32)
                variance = hidden_states.pow(2).mean(-1, keepdim=True)
                hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
                return self.weight * hidden_states.to(input_dtype)
    """,
    speeds_up=True,
)
GEMMA_RMS_NORM = rule(
    "NPU421",
    "gemma-rms-norm",
    MEDIUM,
    "Gemma's RMSNorm (`* (1 + weight)`) -> `torch_npu.npu_rms_norm(x, 1 + weight.float())[0]`.",
    """
    Gemma stores the scale as an offset from 1: the fused op gets `1 + weight`, computed in float32 as Gemma does
    (and a float32 gamma fits every input dtype). Not `npu_gemma_rms_norm`, the op made for this form: it has no
    backward in op-plugin (no derivatives.yaml entry), so a ported Gemma would train with no gradient through its
    norms (torch_npu warns once and returns none). Medium: the extra add costs one small elementwise kernel.

    As NPU420 in a project that keeps its other devices (the default): the op for NPU tensors, the original for
    the others'.

    Before:
        import torch
        from torch import nn


        class GemmaRMSNorm(nn.Module):
            def __init__(self, dim, eps=1e-6):
                super().__init__()
                self.eps = eps
                self.weight = nn.Parameter(torch.zeros(dim))

            def _norm(self, x):
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

            def forward(self, x):
                output = self._norm(x.float())
                output = output * (1.0 + self.weight.float())
                return output.type_as(x)
    After:
        import torch
        try:
            import torch_npu  # noqa: F401  (registers the npu device where torch_npu is installed)
        except ImportError:
            pass
        from torch import nn


        class GemmaRMSNorm(nn.Module):
            def __init__(self, dim, eps=1e-6):
                super().__init__()
                self.eps = eps
                self.weight = nn.Parameter(torch.zeros(dim))

            def _norm(self, x):
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

            def forward(self, x):
                if x.device.type == "npu":
                    return torch_npu.npu_rms_norm(x, 1 + self.weight.float(), epsilon=self.eps)[0]
                output = self._norm(x.float())
                output = output * (1.0 + self.weight.float())
                return output.type_as(x)
    """,
    speeds_up=True,
)
APEX_NORM = rule(
    "NPU424",
    "apex-fused-norm",
    MEDIUM,
    "`apex.normalization.FusedRMSNorm`/`FusedLayerNorm` -> `torch.nn.RMSNorm`/`torch.nn.LayerNorm` subclasses.",
    """
    apex's fused norms are CUDA extensions; torch.nn has the same modules with the same first three arguments
    (`normalized_shape`, `eps`, `elementwise_affine`) and parameters (checkpoints load), and NPU runs them with its
    own kernels. Under autocast apex casts the input and weight to the autocast dtype and returns that dtype, where
    torch.nn's norms return float32 (from a float32 input, the usual residual stream, and torch_npu runs layer_norm
    in float32: its autocast fp32 list). So the call becomes one of `_NpuLayerNorm`/`_NpuRMSNorm`, subclasses that
    the port writes once into the module: their forward casts the result to the autocast dtype while autocast is
    on for the input's device (`torch.is_autocast_enabled(device_type)`, torch >= 2.4; torch.npu's autocast state
    for older targets), and is torch.nn's otherwise. apex's default `eps=1e-5` is written out for RMSNorm
    (torch.nn.RMSNorm's default is the dtype's machine epsilon); `memory_efficient` (a backward-memory option) is
    dropped. Medium: the rounding differs in the last bits (under autocast apex rounds the input and weight to
    the autocast dtype first; the port computes from them as they are and rounds the result).
    torch.nn.RMSNorm needs torch >= 2.4: where the target torch-npu release (`--torch-npu`, else the one for the
    project's torch pin) pairs with an older torch, `_NpuRMSNorm` is a module of its own, with apex's arguments and
    `weight`, on `torch_npu.npu_rms_norm` for npu tensors and apex's own formula for others (as apex computes
    off CUDA). The
    apex import goes when unused (NPU408). The subclass is written through the module's `torch` (or `torch.nn`)
    import: in a module that imports neither, NPU506's TODO marks the call instead.

    Before:
        import torch
        from apex.normalization import FusedRMSNorm


        class Block(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.norm = FusedRMSNorm(dim, elementwise_affine=True)
    After:
        import torch


        class _NpuRMSNorm(torch.nn.RMSNorm):
            ...


        class Block(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.norm = _NpuRMSNorm(dim, elementwise_affine=True, eps=1e-5)
    """,
)

APEX_NORMS = {
    "apex.normalization.FusedRMSNorm": "RMSNorm",
    "apex.normalization.fused_layer_norm.FusedRMSNorm": "RMSNorm",
    "apex.normalization.FusedLayerNorm": "LayerNorm",
    "apex.normalization.fused_layer_norm.FusedLayerNorm": "LayerNorm",
}
# torch.nn's module -> the subclass the port writes once into the module (see _apex_norm_class)
APEX_NORM_CLASSES = {"LayerNorm": "_NpuLayerNorm", "RMSNorm": "_NpuRMSNorm"}

_APEX_NORM_CLASS = '''\
class {name}({nn}.{kind}):
    """apex's Fused{kind} on NPU (written by ascend-port, rule {rule}): torch.nn.{kind} with apex's output
    dtype under autocast (the autocast dtype, where torch.nn's norms return float32)."""

    def forward(self, input):
{import_torch}        output = super().forward(input)
        if {enabled}:
            return output.to({dtype})
        return output
'''


# Before torch 2.4 there is no torch.nn.RMSNorm: the module is written on torch_npu.npu_rms_norm (apex's own formula
# off the npu, as apex computes it off CUDA), with apex's arguments and parameter.
_APEX_RMS_NORM_ON_NPU = '''\
class {name}({nn}.Module):
    """apex's FusedRMSNorm on NPU (written by ascend-port, rule {rule}): torch_npu.npu_rms_norm on the npu (the
    target torch has no torch.nn.RMSNorm), apex's own formula elsewhere; apex's arguments, parameter and output
    dtype under autocast."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
{import_torch}        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.weight = {torch}.nn.Parameter({torch}.ones(self.normalized_shape)) if elementwise_affine else None

    def forward(self, input):
{import_torch}        if input.device.type == "npu":
            dtype = {torch}.npu.get_autocast_dtype() if {torch}.npu.is_autocast_enabled() else input.dtype
            weight = self.weight if self.weight is not None else input.new_ones(self.normalized_shape)
            return {torch_npu}.npu_rms_norm(input.to(dtype), weight.to(dtype), epsilon=self.eps)[0]
        dims = tuple(range(-len(self.normalized_shape), 0))
        output = input * {torch}.rsqrt(input.float().pow(2).mean(dims, keepdim=True) + self.eps)
        if self.weight is None:
            return output
        if self.weight.dtype in ({torch}.float16, {torch}.bfloat16):
            output = output.to(self.weight.dtype)
        return self.weight * output
'''


def _forward(body: cst.BaseSuite) -> tuple[int, cst.FunctionDef] | None:
    if not isinstance(body, cst.IndentedBlock):
        return None
    for i, statement in enumerate(body.body):
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "forward":
            return i, statement
    return None


def _straight_line(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Assignments, casts under an ``if`` and a ``return``: the only bodies the RMSNorm evaluator accepts."""
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) else fn.body  # a docstring
    return all(isinstance(s, (ast.Assign, ast.AnnAssign, ast.If, ast.Return)) for s in body) and any(
        isinstance(s, ast.Return) for s in body
    )


def norm_module(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The scope of an RMSNorm's square root: the innermost class around it, if it could be one (match_rms_norm
    decides): an ``__init__``, a straight-line ``forward``, and the root in a straight-line method of the class."""
    cls = enclosing(path, ast.ClassDef)
    if not isinstance(cls, ast.ClassDef):
        return None
    methods = {s.name: s for s in cls.body if isinstance(s, FUNCTIONS)}
    forward = methods.get("forward")
    method = path[path.index(cls) + 1] if path[-1] is not cls else None
    if "__init__" not in methods or forward is None or not isinstance(method, FUNCTIONS):
        return None
    if not _straight_line(forward) or not _straight_line(method) or not _has_parameter(methods["__init__"]):
        return None
    return cls


def _has_parameter(init: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``self.<name> = <...>Parameter(<factory>(...))`` directly in ``__init__`` or in a branch of one of its ``if``
    statements (diffusers' `if elementwise_affine:`): the weight (see _is_vector_parameter)."""
    branches = [s for i in init.body if isinstance(i, ast.If) for s in (*i.body, *i.orelse)]
    for statement in [*init.body, *branches]:
        value = statement.value if isinstance(statement, ast.Assign) else None
        if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Call):
            func = value.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "Parameter":
                return True
    return False


def rotary_function(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The scope of `rotate_half(q) * sin`: the innermost function around it, if it makes a table 4-D the way
    npu_rotary_mul needs (`cos.unsqueeze(d)`, `cos[None, :, None, :]`; see _four_d)."""
    fn = enclosing(path, *FUNCTIONS)
    if fn is None:
        return None
    four_d = any(
        isinstance(n, ast.Attribute) and n.attr == "unsqueeze" or isinstance(n, ast.Constant) and n.value is None
        for n in ast.walk(fn)
    )
    return fn if four_d else None


def swiglu_function(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The scope of a SwiGLU's silu: the innermost function around it, if it chunks a tensor (`a, b = x.chunk(2)`)."""
    fn = enclosing(path, *FUNCTIONS)
    if fn is None:
        return None
    chunks = any(
        isinstance(n, ast.Attribute) and n.attr == "chunk" or isinstance(n, ast.Name) and n.id == "chunk"
        for n in ast.walk(fn)
    )
    return fn if chunks else None


def softmax_function(path: Sequence[ast.stmt], imports: ImportIndex) -> ast.stmt | None:
    """The scope of a softmax: the innermost function around it, if it calls masked_fill (NPU428)."""
    fn = enclosing(path, *FUNCTIONS)
    if fn is None:
        return None
    masks = any(isinstance(n, ast.Attribute) and n.attr in ("masked_fill", "masked_fill_") for n in ast.walk(fn))
    return fn if masks else None


class NormTransformer(ActSwigluMixin, ComplexRopeMixin, MaskedSoftmaxMixin, TorchNpuName, PortTransformer):
    """NPU420-NPU423, NPU426-NPU428, NPU431: an RMSNorm is recognised in its whole class; the rotary and SwiGLU
    forms read the enclosing function (the rotary tables' broadcasting, the halves of a chunk)."""

    # (an RMSNorm averages squares and scales by an nn.Parameter: a module without both has none)
    TRIGGERS = (
        Trigger(r"rsqrt|torch\.sqrt\(|\.sqrt\(\)", norm_module, also=("mean", "parameter")),
        # a call of it as a factor: `rotate_half(q) * sin`, `sin * rotate_half(q)` (not its definition)
        Trigger(r"rotate_half\([\w.\s]*\)[\s)]*\*|\*[\s(]*\w*rotate_half\(", rotary_function),
        # a gate: `F.silu(a) * b`, `b * F.silu(a)` (a name its function chunks a tensor into); (the word boundary
        # is a look behind: a pattern that starts with a literal is searched fast)
        Trigger(
            r"silu\((?<!\wsilu\()\s*\w+\s*\)[\s)]*\*|\*[\s(]*(?:\w+\s*\.\s*)*silu\(\s*\w+\s*\)",
            swiglu_function,
            also=("chunk",),
        ),
        # a GEGLU's gate: `F.gelu(a) * b`, `b * F.gelu(a, approximate="tanh")` (the same scope as SwiGLU's)
        Trigger(
            r"gelu\((?<!\wgelu\()\s*\w+\s*(?:,[^()]*)?\)[\s)]*\*|\*[\s(]*(?:\w+\s*\.\s*)*gelu\(\s*\w+\s*[,)]",
            swiglu_function,
            also=("chunk",),
        ),
        # a gate through a module's activation: `self.act_fn(self.gate_proj(x)) * self.up_proj(x)` (either order)
        Trigger(
            r"self\s*\.\s*\w+\(\s*self\s*\.\s*\w+\(\s*[\w.]+\s*\)\s*\)\s*\*"
            r"|\*\s*self\s*\.\s*\w+\(\s*self\s*\.\s*\w+\(\s*[\w.]+\s*\)\s*\)",
            act_swiglu_function,
        ),
        # RoPE in complex numbers: the pairs of a tensor viewed as complex, a product viewed as real again
        Trigger(r"view_as_complex\(", complex_rope_function, also=("view_as_real",)),
        # a softmax of masked scores (NPU428: the scores' function, which masked_fill them right before)
        Trigger(r"softmax\(", softmax_function, also=("masked_fill",)),
    )
    RULES = (RMS_NORM, GEMMA_RMS_NORM, ROTARY_MUL, SWIGLU, GEGLU, COMPLEX_ROPE, MASKED_SOFTMAX, MASKED_SOFTMAX_NOTE)
    DISPATCHES_ON_DEVICE = True  # (see dispatches)

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        return insert_fits_test(text, tree, ctx) if ctx.selection.enabled(MASKED_SOFTMAX) else text

    def dispatches(self) -> bool:
        """Do the fused rewrites dispatch on the tensor's device (the original computation for the others)? Unless
        the port makes an NPU-only fork (``--other-devices drop``): the project keeps its other devices, and its
        own tests run the model on CPU tensors, which the fused ops do not take."""
        return self.ctx.options.other_devices == "keep"

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        self.note_complex_rope(original)  # (a TODO only)
        return self.port_masked_softmax(original, updated)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        found = _forward(original.body)
        if found is None:
            return updated
        index, forward = found
        match = match_rms_norm(original, forward, self.ctx.imports)
        if match is None:
            return updated
        torch = self.ctx.imports.local_name_for("torch")
        if match.dtype == "promoted" and torch is None:  # (the result's dtype is spelled with torch.promote_types)
            self.todo(
                RMS_NORM,
                original,
                f"{original.name.value}.forward is an RMSNorm: return torch_npu.npu_rms_norm(x, weight.float(), "
                "epsilon=eps)[0].to(torch.promote_types(x.dtype, weight.dtype)) (the module does not import torch)",
            )
            return updated
        target = updated.body.body[index]
        if not isinstance(target, cst.FunctionDef) or target.name.value != "forward":
            return updated
        new_forward = self._replace_forward(target, match, torch or "torch")  # (as the other rules left it)
        body = list(updated.body.body)
        body[index] = target.with_changes(body=new_forward.body)
        rule_, form = (GEMMA_RMS_NORM, " on (1 + weight)") if match.gemma else (RMS_NORM, "")
        return (
            self.fix(
                rule_,
                original,
                updated.with_changes(body=updated.body.with_changes(body=body)),
                f"{original.name.value}.forward -> torch_npu.npu_rms_norm{form}{DTYPE_NOTES[match.dtype]}",
                torch_npu_name=True,
            )
            or updated
        )

    def _replace_forward(self, forward: cst.FunctionDef, match: RmsNormMatch, torch: str) -> cst.FunctionDef:
        call = f"return {self.torch_npu()}.npu_rms_norm({_norm_arguments(match)})[0]"
        promote = None
        if match.dtype == "weight":
            call += f".to(self.{match.weight}.dtype)"
        elif match.dtype == "promoted":  # `weight * x.to(input_dtype)`: the dtype the two promote to (see _promoted)
            promote, dtype = _promoted(match, torch)
            call += f".to({dtype})"
        statements: list[cst.BaseStatement] = []
        original = list(forward.body.body) if isinstance(forward.body, cst.IndentedBlock) else []
        first = original[0] if original else None
        if (
            isinstance(first, cst.SimpleStatementLine)
            and isinstance(first.body[0], cst.Expr)
            and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        ):
            statements.append(first)  # the docstring stays
            original = original[1:]
        fused = [cst.parse_statement(promote)] if promote is not None else []
        fused.append(cst.parse_statement(call))
        # (an optional weight: the op needs one, so a module without it keeps the original computation)
        present = f"self.{match.weight} is not None" if match.optional else None
        if self.dispatches():
            # (the other devices' tensors, CPU ones in the project's tests, take the original computation)
            test = npu_test(match.input)
            if present:
                test = cst.parse_expression(f"{code_of(test)} and {present}")
            statements.append(cst.If(test=test, body=cst.IndentedBlock(body=fused)))
            statements.extend(original)
        elif present:
            statements.append(cst.If(test=cst.parse_expression(present), body=cst.IndentedBlock(body=fused)))
            statements.extend(original)
        else:
            statements.extend(fused)
        return forward.with_changes(body=forward.body.with_changes(body=statements))


# What the message adds about the result's dtype (see _norm_arguments).
DTYPE_NOTES = {
    "input": "",
    "promoted": " (in the dtype x and the weight promote to, as the original)",
    "float32": " (in float32, as the original)",
    "weight": " (weight's dtype)",
}


def _promoted(match: RmsNormMatch, torch: str) -> tuple[str, str]:
    """HF's `weight * x.to(input_dtype)` returns the dtype x and the weight promote to (float32 for a float32 weight
    and a bf16 x: a q/k norm under autocast), the op x's: a statement naming that dtype, and the name. A no-op cast
    where the two share one (a model cast with `.to(dtype)`)."""
    name = "dtype" if match.input != "dtype" else "result_dtype"
    return f"{name} = {torch}.promote_types({match.input}.dtype, self.{match.weight}.dtype)", name


def _norm_arguments(match: RmsNormMatch) -> str:
    """The op's arguments, chosen so that it returns the original's dtype: the op returns its input's dtype and
    takes only the (x, gamma) dtype pairs (fp16|bf16|fp32, fp32) and (d, d). A float32 gamma fits every input and
    costs nothing (the op computes in float32); a module that returns float32 (`x.float()` ... `w.float() * x`) or
    the weight's dtype (T5) gets float32 inputs, and the weight's dtype cast after (HF's promoted form: the promoted
    dtype, see _promoted). Gemma's `1 + weight` is computed in float32 as Gemma does: npu_gemma_rms_norm, the op
    made for it, has no backward (no derivatives.yaml entry in op-plugin), so a ported Gemma would not train."""
    x, weight = match.input, f"self.{match.weight}"
    if match.dtype in ("float32", "weight"):
        x, weight = f"{x}.float()", f"{weight}.float()"
    elif match.dtype in ("input", "promoted"):
        weight = f"{weight}.float()"
    if match.gemma:
        weight = f"1 + {weight}" if weight.endswith(".float()") else f"1 + {weight}.float()"
    return f"{x}, {weight}, epsilon={match.eps}"


def _apex_norm_class(kind: str, torch: str | None, nn: str, options, torch_npu: str = "torch_npu") -> str:
    """The subclass of torch.nn's ``kind`` that keeps apex's output dtype under autocast (apex casts the input and
    weight to the autocast dtype). ``torch``: the module's name for torch (None: the forward imports it under a
    private name, as the attention helpers do); ``nn``: its spelling of torch.nn. The autocast state is read per
    device type from torch 2.4 on; the older torch_npu releases have it as torch.npu's (NPU only, as apex reads
    CUDA's)."""
    name = torch or PRIVATE_TORCH
    private = "" if torch else f"        import torch as {PRIVATE_TORCH}  # (the module does not import torch)\n\n"
    if kind == "RMSNorm" and not _torch_2_4(options):
        return _APEX_RMS_NORM_ON_NPU.format(
            name=APEX_NORM_CLASSES[kind],
            nn=nn,
            rule=APEX_NORM.id,
            torch=name,
            torch_npu=torch_npu,
            import_torch=private,
        )
    if _torch_2_4(options):
        enabled, dtype = (f"{name}.{f}(input.device.type)" for f in ("is_autocast_enabled", "get_autocast_dtype"))
    else:
        enabled, dtype = f"{name}.npu.is_autocast_enabled()", f"{name}.npu.get_autocast_dtype()"
    return _APEX_NORM_CLASS.format(
        name=APEX_NORM_CLASSES[kind],
        nn=nn,
        kind=kind,
        rule=APEX_NORM.id,
        enabled=enabled,
        dtype=dtype,
        import_torch=private,
    )


def insert_apex_norm_classes(text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
    """``text`` with the classes of APEX_NORM_CLASSES it uses but does not define (or import) at its top level."""
    torch = ctx.imports.local_name_for("torch")
    nn = f"{torch}.nn" if torch else ctx.imports.local_name_for("torch.nn")
    kinds = {name: kind for kind, name in APEX_NORM_CLASSES.items()}

    def block(_: ast.Module, missing: list[str]) -> str | None:
        if nn is None:
            return None
        torch_npu = ctx.imports.local_name_for("torch_npu") or "torch_npu"
        return "\n\n".join(_apex_norm_class(kinds[name], torch, nn, ctx.options, torch_npu) for name in missing)

    return insert_definitions(text, tree, list(kinds), block)


def _torch_2_4(options) -> bool:
    """Does the target release's torch have torch.nn.RMSNorm and the per-device autocast API (torch >= 2.4; no
    target known: the newest)?"""
    torch_version = npu_api.target_torch(options)
    return not torch_version or torch_version >= (2, 4)


class ApexNormTransformer(PortTransformer):
    """NPU424, at the call sites (statement scope)."""

    TRIGGERS = (r"FusedRMSNorm|FusedLayerNorm",)
    RULES = (APEX_NORM,)

    @classmethod
    def finish(cls, text: str, tree: Callable[[], ast.Module], ctx: PortContext) -> str:
        if not ctx.selection.enabled(APEX_NORM):
            return text
        return insert_apex_norm_classes(text, tree, ctx)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        kind = APEX_NORMS.get(self.ctx.imports.resolve(original.func) or "")
        if kind is None:
            return updated
        bound, problems = bind(original, ("normalized_shape", "eps", "elementwise_affine", "memory_efficient"), ())
        torch, nn = self.ctx.imports.local_name_for("torch"), self.ctx.imports.local_name_for("torch.nn")
        if problems or "normalized_shape" not in bound or not (torch or nn):
            return updated  # NPU506 (apex) marks what is left
        # (before torch 2.4 the RMSNorm module is written on torch_npu.npu_rms_norm: the module imports torch_npu)
        on_torch_npu = kind == "RMSNorm" and not _torch_2_4(self.ctx.options)
        new_of = {id(o): u for o, u in zip(original.args, updated.args)}
        args = [new_of[id(bound["normalized_shape"])].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)]
        args += [keyword_arg(p, new_of[id(bound[p])]) for p in ("eps", "elementwise_affine") if p in bound]
        if kind == "RMSNorm" and "eps" not in bound:  # apex's default; torch.nn.RMSNorm's is finfo(dtype).eps
            args.append(cst.Arg(keyword=cst.Name("eps"), value=cst.Float("1e-5"), equal=NO_SPACE))
        replacement = updated.with_changes(func=cst.Name(APEX_NORM_CLASSES[kind]), args=finish_args(updated, args))
        dropped = ", memory_efficient dropped" if "memory_efficient" in bound else ""
        basis = "torch_npu.npu_rms_norm (no torch.nn.RMSNorm before torch 2.4)" if on_torch_npu else f"torch.nn.{kind}"
        message = (
            f"apex {code_of(original.func)} -> {APEX_NORM_CLASSES[kind]} ({basis} with apex's output dtype "
            f"under autocast{dropped})"
        )
        return self.fix(APEX_NORM, original, replacement, message, torch_npu_name=on_torch_npu) or updated

"""NPU500: a Triton kernel that is work. A kernel's code is never changed here: one TODO goes above its decorators
(how to launch it, its tiles, a torch_npu operator that may do the same) and one on each of its lines that
Triton-Ascend needs changed (rules/triton_kernels.py rewrites what is mechanical inside kernels)."""

from __future__ import annotations

import re

import libcst as cst

from ascend_port.core.catalogue import Confidence, declared, rule
from ascend_port.core.findings import todo_comment
from ascend_port.python.names import dotted
from ascend_port.rules.kernels.arguments import _keyword, _string
from ascend_port.rules.kernels.kernel_facts import _builds_vector, _kernel_module_facts, _KernelScan
from ascend_port.rules.kernels.libdevice import TRITON_LIBDEVICE, LibdeviceRules
from ascend_port.rules.kernels.tables import (
    CUDA_LIBDEVICE_MODULES,
    LIBDEVICE_ON_ASCEND,
    TL,
    TRITON_DECORATORS,
    TRITON_FORKS,
    as_triton,
)

MEDIUM, LOW = Confidence.MEDIUM, Confidence.LOW

TRITON_KERNEL = rule(
    "NPU500",
    "triton-kernel",
    LOW,
    "A Triton kernel that is work: one TODO above it (grid, cores, tiles, a torch_npu operator that may do the "
    "same) and one on each of its lines that Triton-Ascend needs changed.",
    """
    Triton kernels run on Ascend NPUs with Triton-Ascend (`pip install triton-ascend`, which replaces community
    `triton`: they cannot be installed together), but the launch and some lines need a review. Above a kernel
    that the module launches (`kernel[grid](...)`, `kernel.run(...)`), or that it never launches or calls (then
    another module may: the TODO says so), one TODO says how to launch it: at most 65535 programs per launch,
    best one per AI core (`num_aicore`, for a kernel with `tl.dot`) or vector core (`num_vectorcore`) looping
    over the work; its tiles (the `tl.arange` sizes) fit in the 192 KB on-chip buffer; when its name says what it
    computes and torch_npu has a fused operator for it (`npu_rms_norm`, `npu_rotary_mul`, `npu_swiglu`,
    `npu_fusion_attention`, ...) the TODO names it; `num_warps`/`num_stages` are ignored. A device function (a
    jit function that returns a value, or that the module's kernels call and never launch) gets none: it is
    inlined. Each line that needs a change gets its own TODO: `tl.float64` (no fp64), int64 math on tensors
    (scalar code on Ascend), atomics with `sem`/`scope` other than `acq_rel`/`gpu`, PTX inline asm
    (`tl.inline_asm_elementwise`), tensor descriptors mixed with `tl.load`/`tl.store`, a tile that is the left
    operand of two `tl.dot`s (Triton-Ascend may clobber it), a `tl.dot` precision chosen at run time, libdevice
    functions Triton-Ascend lacks. `allow_tf32=False` is valid there. A module that is already an Ascend port
    (it imports Triton-Ascend-only APIs such as `triton.language.extra.cann.extension`, uses `care_padding` or
    `hf32`, or lies in an NPU backend folder such as `backends/triton_ascend/`) gets no TODO. The kernel's code
    is never changed here (the rules of rules/triton_kernels.py rewrite what is mechanical).

    Before:
        import triton
        import triton.language as tl


        @triton.jit
        def _rms_norm_fwd(X, Y, eps, N: tl.constexpr):
            x = tl.load(X + tl.program_id(0) * N + tl.arange(0, N)).to(tl.float64)
            tl.store(Y + tl.arange(0, N), x * tl.rsqrt(tl.sum(x * x, 0) / N + eps))


        def rms_norm(x, y):
            _rms_norm_fwd[(x.shape[0],)](x, y, 1e-6, N=x.shape[1])
    After:
        import triton
        import triton.language as tl


        # TODO(ascend-port): NPU500 [low] Triton kernel _rms_norm_fwd: for Triton-Ascend (it replaces triton) launch ...
        @triton.jit
        def _rms_norm_fwd(X, Y, eps, N: tl.constexpr):
            # TODO(ascend-port): NPU500 [low] tl.float64: Ascend A2/A3 have no fp64 vector or cube math: ...
            x = tl.load(X + tl.program_id(0) * N + tl.arange(0, N)).to(tl.float64)
            tl.store(Y + tl.arange(0, N), x * tl.rsqrt(tl.sum(x * x, 0) / N + eps))


        def rms_norm(x, y):
            _rms_norm_fwd[(x.shape[0],)](x, y, 1e-6, N=x.shape[1])
    """,
)

# Kernel name -> an operator that does the same on NPU. Names are the evidence, hence "may already do this".
# torch_npu names are checked against the shipped API list by the tests.
KERNEL_EQUIVALENTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), op)
    for p, op in (
        (r"gemma.*rms", "torch_npu.npu_rms_norm on 1 + weight"),  # (npu_gemma_rms_norm has no backward)
        (r"rms_?norm", "torch_npu.npu_rms_norm"),
        (r"swiglu|swi_glu|silu_?(and_)?mul", "torch_npu.npu_swiglu"),
        (r"geglu|gelu_?(and_)?mul", "torch_npu.npu_geglu"),
        (r"rotary|rope", "torch_npu.npu_rotary_mul"),
        (r"top_?k_?top_?p", "torch_npu.npu_top_k_top_p"),
        (r"gated_?delta", "torch_npu.npu_chunk_gated_delta_rule"),
        (r"cross_?entropy", "torch_npu.npu_cross_entropy_loss"),
        (r"flash|attn|attention", "torch_npu.npu_fusion_attention"),
        (r"layer_?norm", "torch.nn.functional.layer_norm"),
        (r"group_?norm", "torch.nn.functional.group_norm"),
        (r"softmax", "torch.softmax"),
        (r"gelu", "torch.nn.functional.gelu"),
        (r"silu|swish", "torch.nn.functional.silu"),
        (r"matmul|gemm|(^|_)mm(_|$)", "torch.matmul"),
    )
)


def kernel_equivalent(name: str) -> str | None:
    lowered = name.lower()
    for pattern, op in KERNEL_EQUIVALENTS:
        if pattern.search(lowered):
            return op
    return None


# The text that starts NPU500's TODO above a kernel (the kernel as a work item); its TODOs on a kernel's lines are
# ordinary TODOs (reports/model.py counts kernels by this).
KERNEL_TODO = "Triton kernel "


def is_kernel_todo(rule_id: str, message: str) -> bool:
    """Is this finding a Triton kernel to bring up (not a note on one of its lines)?"""
    return rule_id != TRITON_KERNEL.id or message.startswith(KERNEL_TODO)


UB_NOTE = "the 192 KB on-chip buffer (UB; half with double buffering)"


class TritonKernelRules(LibdeviceRules):
    """NPU500: Triton kernels, read line by line."""

    # --- NPU500: Triton kernels -------------------------------------------------------------------------------
    # One TODO above a kernel that is launched (in this module, or maybe from another one): the grid and the tiles.
    # None above a device helper (a jit function only called from kernels). One TODO on each line that needs a
    # specific change. Nothing in a module that is already an Ascend kernel module.

    # (this hook also keeps base.py's `.attr` names, which leave_Name of extensions.py reads too)
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attr_names.add(id(node.attr))
        if self._kernels and self._kernels[-1] is not None:
            self._kernel_attribute(node)

    def _facts(self) -> tuple[bool, set[str], set[str]]:
        return self.ctx.fact(_kernel_module_facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not any(self._is_triton_decorator(d.decorator) for d in node.decorators) or self._facts()[0]:
            self._kernels.append(None)  # (not a kernel, or one of an Ascend module: nothing to say)
            return
        scan = _KernelScan(self.ctx.imports.resolve)
        node.visit(scan)
        self._kernels.append(scan)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        scan = self._kernels.pop()
        if scan is None:
            return updated
        _, launched, helpers = self._facts()
        name = original.name.value
        if name not in launched and (name in helpers or scan.returns):
            return updated  # a device function: inlined into the kernels that call it (their TODOs cover it)
        where = "" if name in launched else ", launched outside this module (not here)"
        cores = "AI core (num_aicore: it uses tl.dot)" if scan.dot else "vector core (num_vectorcore)"
        message = (
            f"{KERNEL_TODO}{name}{where}: for Triton-Ascend (it replaces triton) launch it with at most 65535 "
            f"programs, best one per {cores} looping over the work"
        )
        if scan.tiles:
            message += f"; fit its tiles ({', '.join(scan.tiles)}) in {UB_NOTE}"
        if (op := kernel_equivalent(name)) is not None:
            message += f"; {op} may already do this"
        message += "; else an Ascend C operator"
        # (NPU515, when selected, collapses the configs: its port must not change this TODO on a second run)
        tuning = scan.tuning and not self._rewritten_by("triton-autotune-warps")
        checks = ["num_warps/num_stages are ignored"] if tuning else []
        forks = {
            fork
            for d in original.decorators
            for fork in TRITON_FORKS
            if (
                self.ctx.imports.resolve(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or ""
            ).startswith(fork + ".")
        }
        checks += [f"written for {fork}, an old Triton fork: port it to current Triton first" for fork in sorted(forks)]
        if checks:
            message += ". Check: " + "; ".join(checks)
        self.todo(TRITON_KERNEL, original.decorators[0], message)  # the line of the first decorator
        return updated

    def _is_triton_decorator(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            expr = expr.func
        return as_triton(self.ctx.imports.resolve(expr)) in TRITON_DECORATORS

    def _line_todo(self, node: cst.CSTNode, message: str) -> None:
        """A TODO on the statement of ``node`` inside a kernel (once per statement and message)."""
        if todo_comment(TRITON_KERNEL, message) in self.ctx.pending_todos():
            return
        self.todo(TRITON_KERNEL, node, message)

    def _rewritten_by(self, name: str) -> bool:
        """Does the enabled rule ``name`` (rules/triton_kernels.py) rewrite this construct instead of a TODO?"""
        return any(r.name == name and self.enabled(r) for r in declared().values())

    def _kernel_attribute(self, node: cst.Attribute) -> None:
        resolve = self.ctx.imports.resolve
        qualified, base, name = resolve(node) or "", resolve(node.value) or "", node.attr.value
        if qualified == f"{TL}.float64":
            self._line_todo(
                node,
                "tl.float64: Ascend A2/A3 have no fp64 vector or cube math: compute in fp32 where the precision "
                "allows, else keep this step on the host",
            )
        elif base.startswith("triton.") and base.endswith("libdevice") and name not in LIBDEVICE_ON_ASCEND:
            self._line_todo(
                node, f"libdevice.{name} is not in Triton-Ascend's libdevice: use the tl/tl.math function or tl ops"
            )
        elif base in CUDA_LIBDEVICE_MODULES and isinstance(node.value, cst.Attribute):
            if not self._rewritten_by("triton-libdevice-chain"):
                self._line_todo(
                    node,
                    f"{dotted(node.value)} is not remapped on Triton-Ascend: call libdevice imported from "
                    f"triton.language.extra.cann ({TRITON_LIBDEVICE.id}'s try-import)",
                )
        elif base.startswith("triton.language.extra.cuda") and "libdevice" not in (base + "." + name).split("."):
            self._line_todo(node, f"tl.extra.cuda.{name} does not exist on Triton-Ascend: write it with tl ops")

    def visit_Name(self, node: cst.Name) -> None:
        if not self._kernels or self._kernels[-1] is None or id(node) in self._attr_names:
            return
        qualified = self.ctx.imports.resolve(node) or ""
        if qualified.startswith(tuple(module + "." for module in CUDA_LIBDEVICE_MODULES)):
            name = qualified.rsplit(".", 1)[1]
            if name not in LIBDEVICE_ON_ASCEND:
                self._line_todo(
                    node, f"libdevice.{name} is not in Triton-Ascend's libdevice: use the tl/tl.math function or tl ops"
                )

    # Branches of an `if` are exclusive: a tl.dot in the `else` reuses no tile of the `if` body's tl.dot.
    def visit_If(self, node: cst.If) -> None:
        if not self._kernels or (scan := self._kernels[-1]) is None:
            return
        if scan.branches and scan.branches[-1][0].orelse is node:  # an `elif`: a branch of the `if` above
            self._next_branch(scan)
        scan.branches.append((node, set(scan.lhs), set()))

    def visit_Else(self, node: cst.Else) -> None:
        if self._kernels and (scan := self._kernels[-1]) is not None and scan.branches:
            self._next_branch(scan)

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        if self._kernels and (scan := self._kernels[-1]) is not None and scan.branches:
            _, _, seen = scan.branches.pop()
            scan.lhs |= seen
        return updated

    @staticmethod
    def _next_branch(scan: _KernelScan) -> None:
        _, before, seen = scan.branches[-1]
        seen |= scan.lhs
        scan.lhs = set(before)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._kernels and (scan := self._kernels[-1]) is not None:
            # a new value: its next tl.dot is no reuse of the old tile
            scan.lhs -= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}

    def visit_Call(self, node: cst.Call) -> None:
        if not self._kernels or (scan := self._kernels[-1]) is None:
            return
        qualified = self.ctx.imports.resolve(node.func) or ""
        short = qualified.removeprefix(TL + ".")
        if qualified == f"{TL}.inline_asm_elementwise":
            self._line_todo(
                node,
                "tl.inline_asm_elementwise: PTX cannot run on Ascend (its asm must be the NPU's, registers int64/"
                "fp32, 1-D inputs): write it with tl ops",
            )
        elif short.startswith("atomic_") and (_keyword(node, "sem") or _keyword(node, "scope")):
            sem = _string(getattr(_keyword(node, "sem"), "value", None))
            scope = _string(getattr(_keyword(node, "scope"), "value", None))
            if sem not in (None, "acq_rel") or scope not in (None, "gpu") or sem is scope is None:
                given = ", ".join(f"{k}={v!r}" for k, v in (("sem", sem), ("scope", scope)) if v is not None)
                self._line_todo(
                    node,
                    f"tl.{short} {given}: Triton-Ascend documents only sem='acq_rel' and scope='gpu' (others "
                    "compile; their lowering is unverified): check it on the NPU",
                )
        elif qualified.rsplit(".", 1)[-1] in ("make_tensor_descriptor", "_experimental_make_tensor_descriptor"):
            if scan.memory:
                self._line_todo(
                    node,
                    "tensor descriptor (TMA): Triton-Ascend cannot mix tensor descriptors with tl.load/tl.store in "
                    "one kernel: use tl.make_block_ptr or pointers here, or descriptors for every access",
                )
        elif qualified == f"{TL}.dot":
            self._dot(node)
        elif short in ("cast", "to") or (isinstance(node.func, cst.Attribute) and node.func.attr.value == "to"):
            self._int64(node)

    def _dot(self, node: cst.Call) -> None:
        precision = _keyword(node, "input_precision")
        tf32 = _keyword(node, "allow_tf32")
        for arg, must in ((precision, "'ieee' (or 'hf32' for fp32 inputs), never 'tf32'/'tf32x3'"), (tf32, "False")):
            if (
                arg is not None
                and isinstance(arg.value, (cst.Name, cst.Attribute))
                and dotted(arg.value) not in ("True", "False", "None")
            ):
                self._line_todo(
                    node,
                    f"tl.dot {arg.keyword.value if arg.keyword else ''}={dotted(arg.value)} is chosen at run time: on "
                    f"Ascend it must be {must}",
                )
        literal = _string(getattr(precision, "value", None))
        if (tf32 is not None and isinstance(tf32.value, cst.Name) and tf32.value.value == "True") or literal in (
            "tf32",
            "tf32x3",
        ):
            if (
                not self._rewritten_by("triton-dot-tf32")
                or literal == "tf32x3"
                and not self._rewritten_by("triton-dot-tf32x3")
            ):
                self._line_todo(
                    node, "tl.dot tf32: Triton-Ascend rejects allow_tf32/'tf32': use 'ieee' (or 'hf32' for fp32 inputs)"
                )
        lhs = node.args[0].value if node.args else None
        if isinstance(lhs, cst.Name):
            scan = self._kernels[-1]
            assert scan is not None
            if lhs.value in scan.lhs:
                self._line_todo(
                    node,
                    f"{lhs.value} is the left operand of an earlier tl.dot too: Triton-Ascend may clobber a "
                    f"tl.dot's left operand, and a copy ({lhs.value} + 0.0) is merged away by 3.2.0's CSE: check "
                    f"this result on the NPU; if it differs, reload {lhs.value} from memory",
                )
            scan.lhs.add(lhs.value)

    def _int64(self, node: cst.Call) -> None:
        resolve = self.ctx.imports.resolve
        args = [a.value for a in node.args]
        receiver: cst.BaseExpression | None
        dtype: cst.BaseExpression | None
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "to":
            receiver, dtype = node.func.value, args[0] if args else None
        else:
            receiver, dtype = (args[0], args[1]) if len(args) >= 2 else (None, None)
        if (
            receiver is None
            or dtype is None
            or resolve(dtype) != f"{TL}.int64"
            or not _builds_vector(receiver, resolve, self._kernels[-1].vectors)  # type: ignore[union-attr]
        ):
            return
        self._line_todo(
            node,
            "int64 vector math: Triton-Ascend runs int64 vector add/compare as scalar code (correct, slow): keep "
            "this tensor int32 where it cannot overflow",
        )
